"""What every L3 step's test checks (the return step, the exchange, the swap step): on
Astraea's plan of an instance (its running jobs restored one at a time first, or returned by
the return step first, when asked) the step leaves a valid plan, L1 and L2 never lower, L3
never higher and lower by exactly what the step says it saved, and no kept job unkept."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, settings

from schedopt.core.stopping import Deadline
from schedopt.problems.fairshare.data import build_data
from schedopt.problems.fairshare.heuristics import AstraeaParams, run_astraea
from schedopt.problems.fairshare.l2_repair import RepairStats
from schedopt.problems.fairshare.l3_return import return_running
from schedopt.problems.fairshare.plan import Plan
from schedopt.problems.fairshare.restore import restore_running
from schedopt.problems.fairshare.validate import evaluate, validate

#: The property tests' settings (the examples are the instances strategy's, replayed).
STEP_SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=80, suppress_health_check=[HealthCheck.too_slow]
)


def check_step(
    inst,
    step: Callable[[Plan, RepairStats], object],
    *,
    restore: bool = False,
    returned: bool = False,
) -> tuple[RepairStats, tuple[float, float, float], tuple[float, float, float], set[int], set[int]]:
    """``step(state, out)`` on ``inst``'s Astraea plan, checked (module docstring): ``out``,
    the levels before and after, and the jobs kept before and after (``out`` alone, the
    levels 0 and no jobs, when Astraea finds no plan)."""
    data = build_data(inst, check_size=False)
    state, problem = run_astraea(data, AstraeaParams(keep_running=0))
    out = RepairStats()
    if problem:
        return out, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), set(), set()
    if restore or returned:
        restore_running(state, Deadline.after(30))
    if returned:
        return_running(state, 30.0, RepairStats())
    before = evaluate(inst, state.solution())
    kept = {i for i, r in enumerate(state.raw) if r.keep}
    step(state, out)
    solution = state.solution()
    assert validate(inst, solution) == []
    after = evaluate(inst, solution)
    assert after[0] >= before[0] - 1e-12
    assert after[1] >= before[1] - 1e-9 * max(1.0, abs(before[1]))
    assert after[2] <= before[2] + 1e-9
    assert after[2] == pytest.approx(before[2] - out.saved_l3, abs=1e-6)
    now_kept = {i for i, r in enumerate(state.raw) if r.keep}
    assert kept <= now_kept  # kept jobs stay kept
    return out, before, after, kept, now_kept
