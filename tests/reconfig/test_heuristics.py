"""What the heuristics promise beyond validity (which tests/conformance checks)."""

from __future__ import annotations

import dataclasses

import pytest

import schedopt
from schedopt.problems.reconfig import KeepShrinkParams, MegatronParams, OobleckParams
from schedopt.problems.reconfig.generate import generate

HEURISTICS = ("heuristic:megatron", "heuristic:oobleck", "heuristic:keep_shrink")


@pytest.fixture(scope="module")
def small():
    return generate("small", 0)


@pytest.mark.slow
@pytest.mark.parametrize("method", [*HEURISTICS, "auto"])
def test_every_method_reports_throughput_retained(small, method: str) -> None:
    r = schedopt.solve(small, method, time_limit_s=10)
    assert r.solution is not None
    assert 0 < r.metrics["throughput_retained"] <= 1.0 + 1e-9


def test_keep_shrink_moves_no_state(small) -> None:
    r = schedopt.solve(small, "heuristic:keep_shrink", time_limit_s=5)
    assert r.objectives is not None and r.objectives[1] == 0.0
    kept = {p.stages for p in small.current_plan or ()}
    assert all(p.stages in kept for p in r.solution.pipelines)


def test_megatron_drops_slow_gpus(small) -> None:
    r = schedopt.solve(small, "heuristic:megatron", time_limit_s=5)
    slow = set(small.slow_factor)
    assert not {g for p in r.solution.pipelines for s in p.stages for g in s.gpus} & slow
    tps = {len(s.gpus) for p in r.solution.pipelines for s in p.stages}
    assert tps == {8}  # TP = a host


@pytest.mark.slow
def test_auto_is_no_worse_than_the_best_heuristic(small) -> None:
    best = min(schedopt.solve(small, m, time_limit_s=5).objectives[0] for m in HEURISTICS)
    assert schedopt.solve(small, "auto", time_limit_s=10).objectives[0] <= best + 1e-9


@pytest.mark.parametrize("params", [MegatronParams, OobleckParams, KeepShrinkParams])
def test_spaces_name_the_fields(params) -> None:
    fields = {f.name for f in dataclasses.fields(params)}
    assert set(params.SPACE) == fields


def test_params_change_the_plan(small) -> None:
    base = schedopt.solve(small, "heuristic:megatron", time_limit_s=5)
    more = schedopt.solve(small, "heuristic:megatron", time_limit_s=5, params={"extra_stages": 1})
    depth = {len(p.stages) for p in base.solution.pipelines}
    assert {len(p.stages) for p in more.solution.pipelines} != depth


def test_an_oversize_model_is_refused_before_it_is_built(small, monkeypatch) -> None:
    from schedopt.core.status import Status
    from schedopt.problems.reconfig import exact

    monkeypatch.setattr(exact, "MAX_COLUMNS", 10)
    r = schedopt.solve(small, "milp:highs", time_limit_s=5)
    assert r.status is Status.NO_SOLUTION and "columns" in (r.explanation or "")
