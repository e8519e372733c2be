"""Whole GPUs from the fractions: every round fits, and the rounds converge to the fractions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

import schedopt
from schedopt.problems.timeshare import TimeshareInstance, generate_custom
from schedopt.problems.timeshare.rounding import place
from schedopt.problems.timeshare.rounds import RoundSession
from schedopt.problems.timeshare.strategies import instances


@settings(max_examples=30, deadline=None)
@given(inst=instances(max_jobs=4))
def test_every_round_fits_the_cluster(inst: TimeshareInstance) -> None:
    result = schedopt.solve(inst, "milp:highs")
    assert result.solution is not None
    placed = place(inst, result.solution)
    jobs = [j for p in placed.placements for j in p.jobs]
    assert len(jobs) == len(set(jobs))  # a job runs in one place
    for w, used in placed.gpus_used.items():
        assert used <= inst.workers[w]
    scale = {j.id: j.scale_factor for j in inst.jobs}
    assert all(p.gpus == scale[p.jobs[0]] for p in placed.placements)
    # (the fractions hold level 1 within its 1e-7 tolerance, model.py)
    assert placed.rounded_value <= placed.fractional_value + 1e-6 * max(1.0, placed.rounded_value)


def test_rounds_approach_the_fractions() -> None:
    """Three one-GPU jobs, equally fast, on two GPUs: each should run 2/3 of the rounds; after
    30 rounds the worst job has 20 of them."""
    inst = TimeshareInstance.model_validate(
        {
            "policy": "max_min_fairness_perf",
            "workers": {"v100": 2},
            "jobs": [{"id": f"j{i}", "throughput": {"v100": 1.0}} for i in range(3)],
        }
    )
    session = RoundSession(inst)
    session.solve()
    for _ in range(30):
        last = session.place()
    assert last.fractional_value == pytest.approx(2 / 3, rel=1e-6)
    assert last.rounding_loss == pytest.approx(0.0, abs=1e-6)
    assert sorted(session.received.values()) == [20, 20, 20]


def test_generated_round_loss_shrinks() -> None:
    session = RoundSession(generate_custom(30, seed=2, gpus_per_type=4))
    session.solve()
    losses = [session.place().rounding_loss for _ in range(40)]
    assert losses[-1] < losses[4]


def test_ties_between_a_job_alone_and_its_pair_are_ordered() -> None:
    """Hypothesis found it: equal priority and fraction for a job alone and a pair compared
    None with a job id (TypeError)."""
    inst = TimeshareInstance.model_validate(
        {
            "policy": "finish_time_fairness",
            "workers": {"k80": 2, "v100": 2},
            "jobs": [
                {
                    "id": "j0",
                    "throughput": {"k80": 0.0, "v100": 3.0},
                    "scale_factor": 2,
                    "remaining_steps": 1.0,
                },
                {
                    "id": "j1",
                    "throughput": {"k80": 1.0, "v100": 1.0},
                    "scale_factor": 2,
                    "remaining_steps": 1.0,
                },
                {
                    "id": "j2",
                    "throughput": {"k80": 2.0, "v100": 1.0},
                    "scale_factor": 2,
                    "remaining_steps": 1.0,
                },
            ],
            "pairs": [{"jobs": ["j1", "j2"], "throughput": {"v100": [1.5, 0.5]}}],
        }
    )
    from schedopt.problems.timeshare import Share, TimeshareSolution

    sol = TimeshareSolution(
        shares=(
            Share(job="j1", worker_type="v100", fraction=0.5),
            Share(job="j1", with_job="j2", worker_type="v100", fraction=0.5),
        )
    )
    placed = place(inst, sol)
    assert [p.jobs for p in placed.placements] == [("j1",)]
