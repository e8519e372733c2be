"""The join's restore step (``restore.py``): running jobs put back on their hosts only where
the plan stays valid and gets no worse on L1 and L2, and L3 does not rise."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

import schedopt
from schedopt.core.stopping import Deadline
from schedopt.problems.fairshare import generate_custom
from schedopt.problems.fairshare.data import build_data
from schedopt.problems.fairshare.heuristics import AstraeaParams, run_astraea
from schedopt.problems.fairshare.restore import restore_running
from schedopt.problems.fairshare.strategies import instances
from schedopt.problems.fairshare.validate import evaluate, validate

SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=80, suppress_health_check=[HealthCheck.too_slow]
)


def _check(inst, params: AstraeaParams) -> int:
    data = build_data(inst, check_size=False)
    state, problem = run_astraea(data, params)
    if problem:
        return 0
    before = evaluate(inst, state.solution())
    was = sum(1 for r in state.raw if r.keep)
    restore_running(state, Deadline.after(30))
    kept = sum(1 for r in state.raw if r.keep) - was
    after_solution = state.solution()
    assert validate(inst, after_solution) == []
    after = evaluate(inst, after_solution)
    l1, l2, l3 = before
    assert after[0] >= l1 - 1e-12
    assert after[1] >= l2 - 1e-9 * max(1.0, abs(l2))
    assert after[2] <= l3 + 1e-9
    if kept:
        assert after[2] < l3  # every move saves a restart
    return kept


@SETTINGS
@given(inst=instances(max_jobs=6, max_hosts=4))
def test_restore_never_makes_the_plan_worse(inst) -> None:
    # running jobs not kept by the heuristic: the step has something to put back
    _check(inst, AstraeaParams(keep_running=0))


def test_restore_keeps_running_jobs_on_a_larger_round() -> None:
    inst = generate_custom(gpus=256, tenants=8, jobs=300, seed=1)
    assert _check(inst, AstraeaParams(keep_running=0)) > 0


def test_decomp_reports_the_jobs_it_restored() -> None:
    inst = generate_custom(gpus=256, tenants=12, jobs=300, seed=0)
    result = schedopt.solve(inst, "decomp", time_limit_s=30, params={"parts": 2})
    assert result.solution is not None
    assert result.stats["restored_jobs"] >= 0
