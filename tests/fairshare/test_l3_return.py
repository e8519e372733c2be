"""The return step (``l3_return.py``): running jobs returned to their previous allocations as
a set, only where the plan stays valid, its L1 and L2 do not fall and its L3 falls; on a
decomposition's plan it keeps running jobs that restoring them one at a time does not."""

from __future__ import annotations

import pytest
from hypothesis import given

import schedopt
from schedopt.problems.fairshare import generate_custom, join_levels
from schedopt.problems.fairshare.l2_repair import RepairStats
from schedopt.problems.fairshare.l3_return import return_running
from schedopt.problems.fairshare.strategies import instances
from schedopt.problems.fairshare.validate import evaluate

from .steps import STEP_SETTINGS, check_step

SETTINGS = STEP_SETTINGS


def _check(inst, restore: bool) -> RepairStats:
    out, before, after, kept, now_kept = check_step(
        inst, lambda state, o: return_running(state, 30.0, o), restore=restore
    )
    if out.improved:
        assert after[2] < before[2]
        assert len(now_kept) > len(kept)
    return out


@SETTINGS
@given(inst=instances(max_jobs=6, max_hosts=4))
def test_the_return_step_never_makes_the_plan_worse(inst) -> None:
    # running jobs not kept by the heuristic: the step has something to return
    _check(inst, restore=False)


def test_the_return_step_keeps_jobs_restore_does_not() -> None:
    # restoring one job at a time first: what is left needs several jobs moved together
    inst = generate_custom(gpus=256, tenants=8, jobs=300, seed=1)
    out = _check(inst, restore=True)
    assert out.improved >= 1
    assert out.saved_l3 > 0


def test_decomp_returns_running_jobs_after_its_repair(monkeypatch) -> None:
    # the step on decomp's own plan, given time enough (the test is not about speed)
    seen: list[tuple[tuple[float, float, float], tuple[float, float, float], float]] = []

    def recorded(state, seconds, out):
        inst = state.data.instance
        before = evaluate(inst, state.solution())
        return_running(state, 30.0, out)
        seen.append((before, evaluate(inst, state.solution()), out.saved_l3))
        return out

    monkeypatch.setattr(join_levels, "return_running", recorded)
    inst = generate_custom(gpus=1024, tenants=20, jobs=1500, seed=0)
    got = schedopt.solve(inst, "decomp", time_limit_s=30, params={"parts": 2})
    assert len(seen) == 1
    (l1, l2, l3), (n1, n2, n3), saved = seen[0]
    # (whether the plan leaves a set to return depends on the parts' rounding, which
    # follows the time: test_the_return_step_keeps_jobs_restore_does_not shows that it does)
    assert saved >= 0
    assert n3 == pytest.approx(l3 - saved)
    assert n1 >= l1 - 1e-12
    assert n2 >= l2 - 1e-9 * l2
    assert got.stats["l3_return_saved"] == pytest.approx(saved, abs=1e-3)
    assert got.objectives[2] <= n3 + 1e-9  # the L3 neighbourhoods after it only lower it
    assert got.stats["L3_bound"] <= got.objectives[2]
