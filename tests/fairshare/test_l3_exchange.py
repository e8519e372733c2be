"""The exchange neighbourhood (``l3_exchange.py``): an LP over the returns and other jobs'
moves picks the jobs of an L3 neighbourhood; its answer is kept only where the plan stays
valid, its L1 and L2 do not fall and its L3 falls; on a plan the return step has already
worked on, it keeps running jobs that need other jobs moved."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

import schedopt
from schedopt.problems.fairshare import generate_custom, join_levels, l3_exchange
from schedopt.problems.fairshare.data import build_data
from schedopt.problems.fairshare.heuristics import AstraeaParams, run_astraea
from schedopt.problems.fairshare.l2_repair import RepairStats
from schedopt.problems.fairshare.l3_exchange import exchange, fits
from schedopt.problems.fairshare.strategies import instances
from schedopt.problems.fairshare.validate import evaluate

from .steps import STEP_SETTINGS, check_step

SETTINGS = settings(STEP_SETTINGS, max_examples=60)


@pytest.fixture(autouse=True)
def _no_time_cap(monkeypatch) -> None:
    # correctness, not speed: the LP and the MILP are given time enough to finish
    monkeypatch.setattr(l3_exchange, "EXCHANGE_MAX_S", 60.0)


def _check(inst, returned: bool) -> RepairStats:
    out, before, after, _, _ = check_step(
        inst, lambda state, o: exchange(state, 60.0, o), returned=returned
    )
    assert out.improved == (after[2] < before[2])
    return out


@SETTINGS
@given(inst=instances(max_jobs=6, max_hosts=4))
def test_the_exchange_never_makes_the_plan_worse(inst) -> None:
    _check(inst, returned=False)


def test_the_exchange_keeps_jobs_the_return_step_does_not() -> None:
    # after the restore and the return step (each job's return alone, then returns as a set):
    # what is left needs other jobs moved
    inst = generate_custom(gpus=256, tenants=8, jobs=300, seed=1)
    out = _check(inst, returned=True)
    assert out.improved == 1
    assert out.saved_l3 > 1000


def test_the_exchange_is_not_started_without_time_for_its_lp() -> None:
    inst = generate_custom(gpus=256, tenants=8, jobs=300, seed=1)
    data = build_data(inst, check_size=False)
    state, _ = run_astraea(data, AstraeaParams(keep_running=0))
    assert fits(state, l3_exchange.EXCHANGE_S_PER_JOB * 300)
    assert not fits(state, 0.99 * l3_exchange.EXCHANGE_S_PER_JOB * 300)
    before = state.solution()
    out = exchange(state, 0.99 * l3_exchange.EXCHANGE_S_PER_JOB * 300, RepairStats())
    assert out.neighbourhoods == 0
    assert state.solution() == before


def test_a_round_whose_lp_needs_more_than_the_fixed_cap_still_gets_the_exchange(
    monkeypatch,
) -> None:
    # a round that needs more than EXCHANGE_MAX_S to start (16,384 GPUs × 20,000 jobs: 2 s
    # against 0.8) is given EXCHANGE_MAX_X times what it needs where the time is left
    monkeypatch.setattr(l3_exchange, "EXCHANGE_MAX_S", 0.8)
    monkeypatch.setattr(l3_exchange, "EXCHANGE_S_PER_JOB", 2 * 0.8 / 300)
    inst = generate_custom(gpus=256, tenants=8, jobs=300, seed=1)
    data = build_data(inst, check_size=False)
    state, _ = run_astraea(data, AstraeaParams(keep_running=0))
    assert l3_exchange.max_seconds(state) >= l3_exchange.EXCHANGE_S_PER_JOB * 300
    out = exchange(state, 60.0, RepairStats())
    assert out.neighbourhoods == 1


def test_decomp_runs_the_exchange_after_the_return_step(monkeypatch) -> None:
    seen: list[tuple[float, float]] = []

    def recorded(state, seconds, out):
        inst = state.data.instance
        before = evaluate(inst, state.solution())[2]
        exchange(state, 60.0, out)
        seen.append((before, evaluate(inst, state.solution())[2]))
        return out

    monkeypatch.setattr(join_levels, "exchange", recorded)
    inst = generate_custom(gpus=1024, tenants=20, jobs=1500, seed=0)
    got = schedopt.solve(inst, "decomp", time_limit_s=30, params={"parts": 2})
    assert len(seen) == 1
    before, after = seen[0]
    assert after <= before
    assert got.stats["l3_exchange_saved"] == pytest.approx(before - after, abs=1e-3)
    assert got.objectives[2] <= after + 1e-9  # the L3 neighbourhoods after it only lower it
    assert got.stats["L3_bound"] <= got.objectives[2]
