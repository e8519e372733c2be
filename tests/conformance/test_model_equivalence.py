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
from schedopt.model import ExactBackend, Formulated
from schedopt.model.equivalence import backends_of, check_decisions, check_point, witnesses
from tests.timing import PROOF_LIMIT_S

#: Perturbed points per heuristic solution, and binaries flipped in each.
PERTURBATIONS = 6
FLIPS = (1, 1, 1, 2, 2, 4)


def _formulated():
    return [n for n in schedopt.problem_names() if get_problem(n).formulate is not None]


def offered(name: str) -> tuple[ExactBackend, ...]:
    """The exact back-ends the problem offers (timeshare's LP has no CP-SAT method)."""
    return tuple(b for b in ExactBackend if b.value in get_problem(name).methods)


def perturbed(model, hint: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """``hint`` with ``k`` binaries flipped, or, in a model without binaries (an LP), ``k``
    columns set at random in [0, 1.5·ub] (some feasible, some breaking a row or a bound)."""
    x = hint.copy()
    binary = np.flatnonzero((model.lb == 0) & (model.ub == 1) & (model.kinds() == 1))
    if len(binary):
        flip = rng.choice(binary, size=min(k, len(binary)), replace=False)
        x[flip] = 1 - x[flip]
        return x
    cols = rng.choice(len(x), size=min(k, len(x)), replace=False)
    top = np.where(np.isfinite(model.ub[cols]), model.ub[cols], np.abs(x[cols]) + 1.0)
    x[cols] = rng.uniform(0.0, 1.5 * top)
    return x


def points(name: str, seed: int = 0) -> list[tuple[object, Formulated, np.ndarray]]:
    spec = get_problem(name)
    inst = spec.generate(spec.sizes[0], seed)
    out = []
    for method in (m for m in spec.methods.values() if m.kind is MethodKind.HEURISTIC):
        # the same points on any machine: a heuristic's fixed amount of work, and no limit on
        # building the model (at load 16 cosched's build ran out of a 30 s deadline, #17)
        result = schedopt.solve(inst, method.name, time_limit_s=PROOF_LIMIT_S, deterministic=True)
        if result.solution is None:
            continue
        options = SolveOptions(time_limit_s=PROOF_LIMIT_S, hint=result.solution)
        formulated = spec.formulate(inst, options, Deadline.after(PROOF_LIMIT_S))
        if isinstance(formulated, Formulated) and formulated.hint is not None:
            out.append((method.name, formulated, formulated.hint))
    return out


@pytest.mark.parametrize("name", _formulated())
def test_every_emitter_agrees_with_the_formulation(name: str) -> None:
    found = points(name)
    assert found, f"{name}: no heuristic gave a point to check"
    rng = np.random.default_rng(0)
    backends = offered(name)
    checked = feasible = 0
    for method, formulated, hint in found:
        model = formulated.model
        samples = [hint] + [perturbed(model, hint, k, rng) for k in FLIPS[:PERTURBATIONS]]
        for i, x in enumerate(samples):
            wrong = check_point(model, x, backends) + check_decisions(model, x, backends)
            assert not wrong, f"{name}, {method} point {i}: " + "; ".join(map(str, wrong))
            checked += 1
            feasible += not model.violated_rows(x)
    assert feasible >= 1  # the heuristics' own points are feasible in the formulation
    # A point breaking one block alone, for every block that can be broken alone: a block an
    # emitter drops or alters is then seen, whichever block it is.
    model = found[0][1].model
    broken = witnesses(model, rng)
    for cid, kind, x in broken:
        wrong = check_point(model, x, tuple(b for b in backends_of(kind) if b in backends))
        assert not wrong, f"{name}, a point breaking {cid} alone: " + "; ".join(map(str, wrong))
    assert len({cid for cid, _, _ in broken}) >= len({b.cid for b in model.blocks}) // 2
    assert checked > feasible  # and some perturbation was not: both verdicts were compared
