"""Golden optima × every exact method (and ``auto``) of every problem.

``instances/<problem>/golden*.json`` map an instance file to its recorded outcome: ``status``
and, when optimal, ``objectives`` (every lexicographic level, proven by several back-ends when
the file was made; see ``benchmarks/make_golden.py``). Every exact method must return a valid
solution whose objectives are what ``evaluate`` says, never beat the recorded optimum, report a
bound on the far side of it, and claim OPTIMAL matching it on every level (methods on a
documented grid: within their resolution, see ``support``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import schedopt
from schedopt.core.status import Status
from tests.timing import PROOF_LIMIT_S

from .support import (
    INSTANCES,
    PROBLEMS,
    STOPS_ON_GRID,
    WIDER_SPACE,
    exact,
    lex_better,
    not_better_than,
    resolution,
    spec,
    tol,
)


def _golden(problem: str) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for path in sorted((INSTANCES / problem).glob("golden*.json")):
        out.update(json.loads(path.read_text()))
    return out


#: Cases of more than 3 s on a loaded 2-core machine (3-6.5 s at load 6, 30-65 s at load 11,
#: 2026-12-03): admission's 4x8-20j instances under the MILPs, in the slow stage.
def _slow(problem: str, method: str, name: str) -> bool:
    return problem == "admission" and method.startswith("milp:") and name.startswith("4x8-")


def _cases() -> list:
    return [
        pytest.param(
            p,
            m,
            name,
            id=f"{p}-{m}-{Path(name).stem}",
            marks=[pytest.mark.slow] if _slow(p, m, name) else [],
        )
        for p in PROBLEMS
        for m in [*exact(p), "auto"]
        for name in sorted(_golden(p))
    ]


@pytest.mark.parametrize("problem", PROBLEMS)
def test_every_problem_records_golden_optima(problem: str) -> None:
    golden = _golden(problem)
    assert golden, f"no instances/{problem}/golden*.json: a problem needs recorded optima"
    for name, expected in golden.items():
        inst = schedopt.load(INSTANCES / problem / name)
        assert isinstance(inst, spec(problem).instance_type), name
        assert Status(expected["status"]) in (Status.OPTIMAL, Status.INFEASIBLE), name
        if expected["status"] == Status.OPTIMAL.value:
            assert len(expected["objectives"]) == len(spec(problem).terms), name


@pytest.mark.parametrize(("problem", "method", "name"), _cases())
def test_exact_methods_reach_the_golden_optimum(problem: str, method: str, name: str) -> None:
    s = spec(problem)
    inst = schedopt.load(INSTANCES / problem / name)
    expected = _golden(problem)[name]
    # A proof never depends on the machine's speed (tests/README.md): CP-SAT (and auto's
    # heuristics) deterministic; HiGHS and CBC have no such mode, and deterministic mode would
    # give their later levels fixed shares of the limit, so they get all of PROOF_LIMIT_S.
    det = not method.startswith("milp:")
    result = schedopt.solve(inst, method, time_limit_s=PROOF_LIMIT_S, deterministic=det)
    if expected["status"] == Status.INFEASIBLE.value:
        assert result.status is Status.INFEASIBLE and result.solution is None
        assert result.explanation
        return
    assert result.solution is not None, (result.status, result.explanation)
    assert s.validate(inst, result.solution) == []
    assert result.objectives == pytest.approx(s.evaluate(inst, result.solution), rel=1e-9)
    golden = tuple(expected["objectives"])
    sense = s.terms[0].sense
    slack = resolution(problem, method)
    # nothing beats a proven optimum, and a bound is a bound of the real problem
    assert result.best_bound is not None, result.stats
    assert not_better_than(golden[0], result.best_bound, sense, slack), (result.best_bound, golden)
    if (problem, method) in WIDER_SPACE and result.stats.get(
        "proven_over"
    ) != "template plan space":
        # a plan of a wider space: never worse than the golden optimum at L1, never OPTIMAL
        assert not_better_than(golden[0], result.objectives[0], sense, tol(golden[0]))
        assert result.status is Status.FEASIBLE and result.explanation
        return
    assert not lex_better(result.objectives, golden, s.terms, slack), (result.objectives, golden)
    if result.status is Status.OPTIMAL:
        if slack:
            assert result.objectives[0] == pytest.approx(golden[0], rel=1e-6, abs=1e-6 + slack)
        else:
            assert result.objectives == pytest.approx(golden, rel=1e-6, abs=1e-6)
            assert result.gap is not None and result.gap <= 1e-6
            # The bound is the model's own: a wrong coefficient in a model can leave the
            # recomputed objectives right but not the bound.
            assert result.best_bound == pytest.approx(golden[0], rel=1e-6, abs=1e-6)
    else:
        # only a method documented to stop short of a proof on its own grid may, saying so
        assert (problem, method) in STOPS_ON_GRID, (result.status, result.explanation)
        assert result.status is Status.FEASIBLE
        assert result.explanation, result.stats
