"""``auto`` and fair share's decomposition (#17): when ``auto_route`` picks ``decomp`` (marked
``MethodSpec.decomposition``), auto runs it first, not after the heuristics; they stand in only
when it answers nothing, and its bound stays with their plan."""

from __future__ import annotations

from dataclasses import replace

import pytest

import schedopt
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.problems.fairshare import decomp, generate_custom

SPEC = schedopt.get_problem("fairshare")


def _recording(monkeypatch: pytest.MonkeyPatch, name: str, calls: list[str]) -> None:
    spec = SPEC.methods[name]

    def run(inst, options, deadline):
        calls.append(name)
        return spec.run(inst, options, deadline)

    monkeypatch.setitem(SPEC.methods, name, replace(spec, run=run))


@pytest.fixture
def routed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """auto routes every plain round to ``decomp`` (a small one, quickly); the calls of
    every method are recorded in order."""
    monkeypatch.setattr(decomp, "AUTO_DECOMP_JOBS", 1)
    calls: list[str] = []
    for name in ("decomp", "milp:highs", *SPEC.auto_heuristics):
        _recording(monkeypatch, name, calls)
    return calls


def test_only_fair_shares_decomp_is_marked_to_run_first() -> None:
    assert SPEC.methods["decomp"].decomposition
    assert not SPEC.methods["decomp:pop"].decomposition
    assert not schedopt.get_problem("admission").methods["decomp"].decomposition
    assert schedopt.get_problem("moe_placement").methods["decomp:layer"].decomposition


def test_auto_runs_the_decomposition_first_and_no_heuristic(routed: list[str]) -> None:
    inst = generate_custom(gpus=64, tenants=4, jobs=40, seed=1)
    result = schedopt.solve(inst, time_limit_s=20, params={"parts": 2})
    assert routed == ["decomp"]
    assert result.method == "auto(decomp)"
    assert result.solution is not None and SPEC.validate(inst, result.solution) == []
    assert result.best_bound is not None and result.best_bound >= result.objective - 1e-9


def test_the_heuristics_stand_in_when_the_decomposition_answers_nothing(
    monkeypatch: pytest.MonkeyPatch, routed: list[str]
) -> None:
    def nothing(inst, options, deadline):
        routed.append("decomp")
        return Outcome(Status.NO_SOLUTION, bound=2.5, explanation="no part in time")

    monkeypatch.setitem(SPEC.methods, "decomp", replace(SPEC.methods["decomp"], run=nothing))
    inst = generate_custom(gpus=64, tenants=4, jobs=40, seed=1)
    result = schedopt.solve(inst, time_limit_s=20)
    assert routed[0] == "decomp" and "milp:highs" not in routed
    assert set(routed[1:]) <= set(SPEC.auto_heuristics) and len(routed) > 1
    assert result.method.startswith("auto(decomp < heuristic:")
    assert result.status is Status.FEASIBLE
    assert result.best_bound == 2.5  # the decomposition's bound of the whole round
    assert "no part in time" in (result.explanation or "")


def test_below_the_route_auto_keeps_heuristics_then_the_exact_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    for name in ("decomp", "milp:highs", *SPEC.auto_heuristics):
        _recording(monkeypatch, name, calls)
    inst = generate_custom(gpus=32, tenants=3, jobs=12, seed=0)
    schedopt.solve(inst, time_limit_s=20)
    assert calls[0] in SPEC.auto_heuristics and calls[-1] == "milp:highs"
    assert "decomp" not in calls
