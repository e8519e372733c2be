"""Gavel's own simulator with schedopt's drop-in policies (issue #19 item 4): a 30-job trace
from Gavel's ``generate_trace.py`` (seed 0, Gavel's defaults) on a 4:4:4 cluster, run through
Gavel's ``Scheduler(simulate=True)`` with each policy (``schedopt.integrations.gavel_sim``).

Every round's allocation must satisfy Gavel's constraints (checked independently), no round
may fail and every job must complete. Where the policy's answer is unique (the heuristics
that define one allocation: AlloX, FIFO by performance and with packing, Gandiva with the
same seed, isolated) the average JCT and the makespan must be Gavel's own. The LP policies'
optimal allocations are not unique (max-min, max-sum), so the trajectories and JCTs drift
apart (benchmarks/gavel_simulator.py reports by how much); instead, on every round of
schedopt's run, Gavel's class answers the same inputs and the two objectives must agree
(Gavel's minimum makespan bisects to 5%: schedopt's may only be shorter).

Needs Gavel's source (``GAVEL_SRC``: a checkout of github.com/stanford-futuredata/gavel) and
cvxpy with ECOS (the ``gavel`` extra), which Gavel's modules import."""

from __future__ import annotations

import importlib.util
import os

import pytest

from schedopt.integrations.gavel_sim import OBJECTIVES, POLICIES, gavel_scheduler_dir, simulate


def _skip_reason() -> str | None:
    src = os.environ.get("GAVEL_SRC")
    if not src:
        return "GAVEL_SRC is not set (the path of a checkout of stanford-futuredata/gavel)"
    try:
        gavel_scheduler_dir(src)
    except FileNotFoundError as exc:
        return f"GAVEL_SRC={src}: {exc}"
    for module in ("cvxpy", "ecos"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (Gavel's policies import it: the gavel extra)"
    return None


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason())),
]

TRACE = {"num_jobs": 30, "cluster_spec": (4, 4, 4), "seed": 0, "timeout_s": 600}

#: Gavel's simulator reads a ``SLOs`` entry its state never has (scheduler.py,
#: ``_compute_allocation``: KeyError): no policy is ever called.
GAVEL_CANNOT_RUN = {
    "max_sum_throughput_normalized_by_cost_perf_SLOs",
    "max_sum_throughput_normalized_by_cost_packed_SLOs",
}
#: one allocation by definition: the same JCT as Gavel's own class
UNIQUE = ("allox", "fifo_perf", "fifo_packed", "gandiva", "isolated")
RUNNABLE = sorted(set(POLICIES) - GAVEL_CANNOT_RUN)


def _check(result) -> None:
    assert result.aborted is None, result.aborted
    assert result.rounds > 0
    assert result.failed_rounds == (), result.failed_rounds[:3]
    assert result.invalid_rounds == (), result.invalid_rounds[:3]
    assert result.completed_jobs == result.num_jobs


@pytest.mark.parametrize("policy", RUNNABLE)
def test_every_round_is_valid_and_every_job_completes(policy: str) -> None:
    _check(simulate(policy, system="schedopt", **TRACE))


def test_gangs_too() -> None:
    """Gavel's multi-GPU jobs (scale factors 1, 2 and 4) with the exact policies."""
    for policy in ("max_min_fairness_perf", "max_min_fairness_packed", "min_total_duration"):
        _check(simulate(policy, system="schedopt", multi_gpu=True, **TRACE))


@pytest.mark.parametrize("policy", UNIQUE)
def test_the_same_jct_as_gavel_where_the_answer_is_unique(policy: str) -> None:
    ours = simulate(policy, system="schedopt", **TRACE)
    theirs = simulate(policy, system="gavel", **TRACE)
    _check(ours)
    assert theirs.aborted is None and theirs.completed_jobs == theirs.num_jobs
    assert ours.average_jct_s == pytest.approx(theirs.average_jct_s, rel=1e-9)
    assert ours.makespan_s == pytest.approx(theirs.makespan_s, rel=1e-9)
    assert ours.rounds == theirs.rounds


@pytest.mark.parametrize("policy", sorted(OBJECTIVES))
def test_every_rounds_objective_is_gavels_on_the_same_inputs(policy: str) -> None:
    result = simulate(policy, system="schedopt", shadow=True, **TRACE)
    _check(result)
    assert len(result.objectives) >= result.rounds - 1  # a round without jobs has none
    for r, ours, theirs in result.objectives:
        if policy == "min_total_duration_perf":  # a makespan: Gavel's bisection stops at 5%
            assert ours <= theirs * (1 + 1e-6), (r, ours, theirs)
            assert ours >= theirs / 1.05 * (1 - 1e-6), (r, ours, theirs)
        else:  # ECOS stops at its own tolerance
            assert ours == pytest.approx(theirs, rel=1e-6), (r, ours, theirs)


def test_the_check_catches_gavels_own_fifo() -> None:
    """Gavel's base FIFO places every queued job on the type its loop last looked at
    (``worker_type`` is never set from the random index in ``policies/fifo.py``): more jobs
    on a type than it has GPUs, which the round check reports; schedopt's FIFO is valid."""
    theirs = simulate("fifo", system="gavel", **TRACE)
    assert theirs.invalid_rounds
    assert "GPUs in use" in theirs.invalid_rounds[0][1]


@pytest.mark.parametrize("policy", sorted(GAVEL_CANNOT_RUN))
def test_gavels_simulator_cannot_run_the_slo_policies(policy: str) -> None:
    """Recorded so that a fixed Gavel is noticed (the policies then join RUNNABLE)."""
    result = simulate(policy, system="schedopt", **TRACE)
    assert result.rounds == 0
    assert result.aborted is not None and "KeyError: 'SLOs'" in result.aborted
