"""The lease-round replay driver for deadline admission."""

from __future__ import annotations

from dataclasses import replace

import pytest

from schedopt import Cluster, Status
from schedopt.io.traces import TraceJob
from schedopt.problems.admission import driver
from schedopt.problems.admission.driver import DriverConfig, RoundRecord, replay

CLUSTER = Cluster.dgx(nodes=1, gpus_per_node=8)
SLOT = 60.0


def _config(method: str, **kw: object) -> DriverConfig:
    return DriverConfig(slot_s=SLOT, horizon_slots=6, method=method, time_limit_s=2.0, **kw)


def _job(id: str, submit: float, n: int, dur: float, kind: str, *tiers: float) -> TraceJob:
    """8 iterations/s at ``n`` GPUs for ``dur`` seconds; tiers valued 10, 8, 5, 2."""
    deadlines = tuple(zip(tiers, (10.0, 8.0, 5.0, 2.0)[: len(tiers)], strict=True))
    return TraceJob(id, f"vc{len(id) % 2}", submit, n, int(8 * dur), dur, kind, deadlines)


def _jobs() -> list[TraceJob]:
    jobs = [
        # 1 GPU, 6000 iterations; even on 2 GPUs (≈ 18.7 it/s) it needs 6 slots > 120 s
        TraceJob("impossible", "vc0", 0.0, 1, 6000, 600.0, "strict_slo", ((120.0, 10.0),)),
        # 2 slots on 2 GPUs, deadline 330 s: fits alone with room to spare
        _job("generous", 0.0, 2, 120.0, "strict_slo", 330.0),
    ]
    for i in range(13):
        kind = ("strict_slo", "soft_slo", "best_effort")[i % 3]
        n, dur = (1, 2, 4, 1)[i % 4], SLOT * (1 + i % 3)
        tiers = {
            "strict_slo": (2.0 * dur + SLOT,),
            "soft_slo": (1.2 * dur, 2.0 * dur, 4.0 * dur, 8.0 * dur),  # later tiers clipped
            "best_effort": (),
        }[kind]
        jobs.append(_job(f"j{i}", 40.0 * i, n, dur, kind, *tiers))
    return jobs


@pytest.mark.parametrize("method", ["heuristic:edf", "milp:highs"])
def test_replay_keeps_every_guarantee(method: str) -> None:
    jobs = _jobs()
    seen: list[RoundRecord] = []
    report = replay(CLUSTER, jobs, _config(method), progress=seen.append)

    assert report.slo_missed == 0
    assert report.slo_met == report.slo_admitted > 0
    assert report.unfinished == report.not_arrived == report.unschedulable == 0
    assert set(report.outcomes) == {j.id for j in jobs}
    assert set(report.outcomes.values()) <= {"met", "rejected", "finished"}
    assert report.slo_met + report.rejected == report.slo_jobs == 11
    assert report.be_finished == report.be_jobs == 4 and report.be_mean_jct_s is not None
    assert report.outcomes["impossible"] == "rejected"
    assert report.outcomes["generous"] == "met"
    assert report.deadline_miss_rate == pytest.approx(report.rejected / 11)

    assert seen == list(report.rounds)
    assert [r.round for r in report.rounds] == list(range(len(report.rounds)))
    assert [r.time_s for r in report.rounds] == [SLOT * k for k in range(len(report.rounds))]
    assert sum(r.arrived for r in report.rounds) == len(jobs)
    assert sum(r.admitted for r in report.rounds) == report.slo_admitted
    assert sum(r.rejected for r in report.rounds) == report.rejected
    assert all(r.gpus_busy <= 8 and "->" not in r.status for r in report.rounds)
    assert "deadline miss rate" in report.summary()


def test_unschedulable_past_and_idle_gaps() -> None:
    jobs = [
        _job("huge", 0.0, 64, 100.0, "strict_slo", 1000.0),  # 32..128 GPUs: never fits on 8
        _job("huge-be", 0.0, 64, 100.0, "best_effort"),
        _job("late", 0.0, 1, 10.0, "strict_slo", 30.0),  # less than one slot to its deadline
        _job("later", 6000.0, 1, 60.0, "strict_slo", 300.0),
    ]
    report = replay(CLUSTER, jobs, _config("heuristic:edf"))
    assert report.outcomes == {
        "huge": "unschedulable",
        "huge-be": "unschedulable",
        "late": "rejected",
        "later": "met",
    }
    assert (report.rejected, report.unschedulable, report.slo_jobs, report.be_jobs) == (2, 2, 3, 1)
    assert report.rounds[0].status == "idle" and report.rounds[0].rejected == 2
    assert report.rounds[1].time_s == 6000.0  # idle time skipped
    dense = replay(CLUSTER, jobs, _config("heuristic:edf", skip_idle=False))
    assert [r.time_s for r in dense.rounds] == [SLOT * k for k in range(len(dense.rounds))]
    assert len(dense.rounds) == 6000 / SLOT + len(report.rounds) - 1
    assert dense.outcomes == report.outcomes


def test_max_rounds_leaves_jobs_unfinished() -> None:
    report = replay(CLUSTER, _jobs(), _config("heuristic:edf"), max_rounds=2)
    assert len(report.rounds) == 2
    assert report.unfinished > 0 and report.not_arrived > 0
    assert report.slo_missed == 0
    assert report.slo_met + report.rejected + report.unfinished <= report.slo_jobs


def test_fallback_is_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    real = driver.solve
    calls: list[str] = []

    def flaky(inst, method, **kw):  # the configured method "fails" once jobs are admitted
        calls.append(method)
        result = real(inst, method, **kw)
        if method == "milp:highs" and any(j.admitted for j in inst.jobs):
            return replace(result, status=Status.INFEASIBLE, solution=None)
        return result

    monkeypatch.setattr(driver, "solve", flaky)
    report = replay(CLUSTER, _jobs()[:2], _config("milp:highs"))
    statuses = [r.status for r in report.rounds]
    assert statuses[0] == "optimal"
    assert (
        "milp:highs infeasible -> milp:highs held infeasible -> heuristic:edf held" in statuses[1]
    )
    assert report.slo_missed == 0 and report.outcomes["generous"] == "met"


def test_missed_guarantees_are_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    real = driver.solve

    def never_with_admitted(inst, method, **kw):
        result = real(inst, method, **kw)
        if any(j.admitted for j in inst.jobs):
            return replace(result, status=Status.NO_SOLUTION, solution=None)
        return result

    monkeypatch.setattr(driver, "solve", never_with_admitted)
    report = replay(CLUSTER, _jobs()[:2], _config("heuristic:edf"))
    assert "guarantee of 'generous' dropped" in report.rounds[1].status
    assert report.outcomes["generous"] == "missed"
    assert report.slo_missed == 1 and report.deadline_miss_rate == 1.0


def test_duplicate_ids_and_bad_config() -> None:
    job = _job("a", 0.0, 1, 60.0, "best_effort")
    with pytest.raises(ValueError, match="unique"):
        replay(CLUSTER, [job, job], _config("heuristic:edf"))
    with pytest.raises(ValueError):
        DriverConfig(slot_s=0)
