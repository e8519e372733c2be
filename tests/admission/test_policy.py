"""Policy-level tuning on trace replays: episodes are cut as documented, scored by the replay's
deadline misses and best-effort JCT, and a tuning run on them keeps the defaults as its
reference. Skipped where the public traces (../shared/data) are absent."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedopt.core.registry import get_problem
from schedopt.io.traces.record import TraceJob
from schedopt.problems.admission.policy import Episode, episodes, evaluate, window
from schedopt.tuning.policy import sliding_retune, tune_policy

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
needs_data = pytest.mark.skipif(
    not (DATA / "philly-chronus").is_dir(), reason=f"no public traces at {DATA}"
)


def _job(i: int, submit: float, kind: str = "strict_slo", deadline: float = 900.0) -> TraceJob:
    return TraceJob(
        id=f"j{i}",
        tenant="t",
        submit_s=submit,
        num_gpus=8,
        iterations=600,
        duration_s=600.0,
        kind=kind,
        deadlines=((deadline, 10.0),) if kind != "best_effort" else (),
    )


def test_a_window_starts_at_zero_and_keeps_the_order() -> None:
    jobs = [_job(i, 100.0 * i) for i in range(5)]
    part = window(jobs, 2, 2)
    assert [j.id for j in part] == ["j2", "j3"]
    assert [j.submit_s for j in part] == [0.0, 100.0]
    with pytest.raises(ValueError, match="no job at position 9"):
        window(jobs, 9, 2)


def test_an_episode_counts_the_deadlines_it_cannot_meet() -> None:
    # One 8-GPU host; three strict jobs of 10 minutes each, all due 15 minutes after arrival:
    # at most one of the two that arrive together can meet its deadline.
    jobs = (_job(0, 0.0), _job(1, 0.0), _job(2, 3600.0), _job(3, 0.0, "best_effort"))
    misses, jct = evaluate("heuristic:edf", Episode("toy", jobs, hosts=1), {})
    assert misses == 1.0
    assert jct > 0


@pytest.mark.slow
@needs_data
def test_episodes_are_consecutive_windows_of_the_trace() -> None:
    eps = episodes(DATA, "philly-mix2", 5000, 3, 40)
    assert [e.name for e in eps] == [
        "philly-mix2[5000:5040]",
        "philly-mix2[5040:5080]",
        "philly-mix2[5080:5120]",
    ]
    assert all(len(e.jobs) == 40 and e.jobs[0].submit_s == 0 for e in eps)


@pytest.mark.slow
@needs_data
def test_policy_tuning_and_a_sliding_retune_on_a_replay() -> None:
    spec = get_problem("admission")
    eps = [
        e.__class__(e.name, e.jobs[:40], hosts=1)
        for e in episodes(DATA, "philly-mix2", 5000, 3, 40)
    ]
    result = tune_policy(spec, "heuristic:slack", eps[:1], held_out=eps[1:2], n_calls=6)
    assert result.evaluations == 6 and result.score <= result.default_score
    assert result.held_out_default_score is not None
    windows = sliding_retune(spec, "heuristic:slack", eps, n_calls=6)
    assert [w.window for w in windows] == [eps[1].name, eps[2].name]
    for w in windows:
        assert w.defaults is not None and w.one_time is not None and w.sliding is not None
