"""Model equivalence: every emitted model says what the formulation says (issue 8, item 5).

For every registered problem with a backend-neutral formulation: the solutions of its
heuristics on small generated instances, and random perturbations of them (feasible and
infeasible), are fixed in the CP-SAT, HiGHS and CBC models; each must give the formulation's
own feasibility verdict and level values (``schedopt.model.equivalence``). A block an emitter
drops or alters makes this fail: ``tests/model/test_equivalence_catches.py`` shows it.
"""

from __future__ import annotations

import numpy as np
import pytest

import schedopt
from schedopt.core.options import SolveOptions
from schedopt.core.registry import MethodKind, get_problem
from schedopt.core.stopping import Deadline
from schedopt.model import Formulated
from schedopt.model.equivalence import backends_of, check_decisions, check_point, witnesses

#: Perturbed points per heuristic solution, and binaries flipped in each.
PERTURBATIONS = 6
FLIPS = (1, 1, 1, 2, 2, 4)


def _formulated():
    return [n for n in schedopt.problem_names() if get_problem(n).formulate is not None]


def points(name: str, seed: int = 0) -> list[tuple[object, Formulated, np.ndarray]]:
    spec = get_problem(name)
    inst = spec.generate(spec.sizes[0], seed)
    out = []
    for method in (m for m in spec.methods.values() if m.kind is MethodKind.HEURISTIC):
        result = schedopt.solve(inst, method.name, time_limit_s=5)
        if result.solution is None:
            continue
        options = SolveOptions(time_limit_s=30, hint=result.solution)
        formulated = spec.formulate(inst, options, Deadline.after(30))
        if isinstance(formulated, Formulated) and formulated.hint is not None:
            out.append((method.name, formulated, formulated.hint))
    return out


@pytest.mark.parametrize("name", _formulated())
def test_every_emitter_agrees_with_the_formulation(name: str) -> None:
    found = points(name)
    assert found, f"{name}: no heuristic gave a point to check"
    rng = np.random.default_rng(0)
    checked = feasible = 0
    for method, formulated, hint in found:
        model = formulated.model
        binary = np.flatnonzero((model.lb == 0) & (model.ub == 1) & (model.kinds() == 1))
        samples = [hint]
        for k in FLIPS[:PERTURBATIONS]:
            x = hint.copy()
            flip = rng.choice(binary, size=min(k, len(binary)), replace=False)
            x[flip] = 1 - x[flip]
            samples.append(x)
        for i, x in enumerate(samples):
            wrong = check_point(model, x) + check_decisions(model, x)
            assert not wrong, f"{name}, {method} point {i}: " + "; ".join(map(str, wrong))
            checked += 1
            feasible += not model.violated_rows(x)
    assert feasible >= 1  # the heuristics' own points are feasible in the formulation
    # A point breaking one block alone, for every block that can be broken alone: a block an
    # emitter drops or alters is then seen, whichever block it is.
    model = found[0][1].model
    broken = witnesses(model, rng)
    for cid, kind, x in broken:
        wrong = check_point(model, x, backends_of(kind))
        assert not wrong, f"{name}, a point breaking {cid} alone: " + "; ".join(map(str, wrong))
    assert len({cid for cid, _, _ in broken}) >= len({b.cid for b in model.blocks}) // 2
    assert checked > feasible  # and some perturbation was not: both verdicts were compared
