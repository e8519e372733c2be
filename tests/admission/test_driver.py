"""The lease-round replay driver for deadline admission."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from schedopt import Cluster, Status
from schedopt.core.registry import Outcome
from schedopt.io.traces import TraceJob
from schedopt.problems.admission import SPEC, driver
from schedopt.problems.admission.driver import DriverConfig, RoundRecord, replay
from schedopt.problems.admission.replay_check import ReplayCheck, check_replay, finish_time

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


def _no_plan_once_admitted(monkeypatch: pytest.MonkeyPatch, methods: set[str] | None = None):
    """Every method (or those in ``methods``) finds nothing once a job is admitted: a method
    that ran out of time."""
    real = driver.solve
    calls: list[str] = []

    def flaky(inst, method, **kw):
        calls.append(method)
        result = real(inst, method, **kw)
        if (methods is None or method in methods) and any(j.admitted for j in inst.jobs):
            return replace(result, status=Status.NO_SOLUTION, solution=None)
        return result

    monkeypatch.setattr(driver, "solve", flaky)
    return calls


def _checked(report, jobs, cfg) -> ReplayCheck:
    check = check_replay(jobs, report, slot_s=cfg.slot_s, exponent=cfg.scaling_exponent)
    assert (check.met, check.late, check.dropped) == (
        report.slo_met,
        report.slo_late,
        report.slo_dropped,
    )
    return check


def test_fallback_is_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_plan_once_admitted(monkeypatch, {"milp:highs"})
    cfg = _config("milp:highs")
    report = replay(CLUSTER, _jobs()[:2], cfg)
    statuses = [r.status for r in report.rounds]
    assert statuses[0] == "optimal"
    assert statuses[1] == "milp:highs no_solution -> heuristic:edf feasible"
    assert report.slo_missed == 0 and report.outcomes["generous"] == "met"
    assert _checked(report, _jobs()[:2], cfg).met == 1


@pytest.mark.parametrize("method", ["heuristic:edf", "cpsat"])
def test_a_method_that_finds_nothing_keeps_every_guarantee(
    monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    """Issue 7, item 1: no plan from any method (out of time) never drops a guarantee — the
    previous plan's remainder is kept, and every admitted job meets its deadline."""
    calls = _no_plan_once_admitted(monkeypatch)
    jobs, cfg = _jobs(), _config(method)
    report = replay(CLUSTER, jobs, cfg)
    assert any("-> previous plan" in r.status for r in report.rounds)
    assert "guarantee" not in " ".join(r.status for r in report.rounds)
    assert report.slo_dropped == report.slo_late == 0 and report.dropped == {}
    assert report.slo_met == report.slo_admitted > 0
    assert report.unfinished == 0
    check = _checked(report, jobs, cfg)
    assert check.late == check.dropped == check.pending == 0 and check.met > 0
    assert {"heuristic:edf", "heuristic:slack", "auto"} <= set(calls)


def test_a_slow_method_that_runs_out_of_time_costs_no_guarantee(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A real out-of-time method (registered, sleeping through its limit): solve() hands the
    hint back, the driver goes on to the heuristics, and every admitted job meets its deadline."""

    def slow(inst, options, deadline):
        time.sleep(max(0.0, deadline.remaining()))
        return Outcome(Status.NO_SOLUTION, explanation="out of time")

    monkeypatch.setitem(SPEC.methods, "cpsat", replace(SPEC.methods["cpsat"], run=slow))
    jobs, cfg = _jobs(), replace(_config("cpsat"), time_limit_s=0.5)
    report = replay(CLUSTER, jobs, cfg, max_rounds=100)
    statuses = [r.status for r in report.rounds]
    assert all(s.startswith("cpsat found nothing (hint kept) -> ") for s in statuses), statuses
    assert report.slo_dropped == report.slo_late == 0
    assert report.slo_met == report.slo_admitted > 0
    check = _checked(report, jobs, cfg)
    assert check.late == check.dropped == check.pending == 0


def test_a_replay_where_every_method_always_fails_still_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The remainder's idle GPUs go to best-effort jobs: nothing is admitted, but best-effort
    work progresses and the replay ends instead of looping for ever."""
    real = driver.solve
    monkeypatch.setattr(
        driver,
        "solve",
        lambda inst, method, **kw: replace(
            real(inst, method, **kw), status=Status.NO_SOLUTION, solution=None
        ),
    )
    report = replay(CLUSTER, _jobs(), _config("heuristic:edf"), max_rounds=200)
    assert len(report.rounds) < 200 and report.unfinished == 0
    assert report.be_finished == report.be_jobs == 4
    assert report.slo_admitted == 0 and report.rejected == report.slo_jobs


def test_the_previous_plan_is_the_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    real = driver.solve
    hints: list[tuple[object, object]] = []

    def spy(inst, method, **kw):
        hints.append((inst, kw.get("hint")))
        return real(inst, method, **kw)

    monkeypatch.setattr(driver, "solve", spy)
    replay(CLUSTER, _jobs()[:2], _config("cpsat"))
    assert len(hints) > 2
    for inst, hint in hints:  # a solution of that very round: the previous plan's remainder
        assert hint is not None and SPEC.validate(inst, hint) == []
    assert any(any(p.admitted for p in hint.plans) for _, hint in hints[1:])


def test_a_gpu_failure_drops_a_guarantee_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """The world changed (every GPU failed for 5 slots): the remainder is invalid, and only then
    a guarantee is dropped, naming the change."""
    jobs, cfg = _jobs()[:2], _config("heuristic:edf")
    down = {g for g in CLUSTER.gpus()}
    report = replay(CLUSTER, jobs, cfg, unavailable=lambda now: down if 0 < now < 330 else ())
    assert report.outcomes["generous"] == "dropped"
    why = report.dropped["generous"]
    assert why.startswith("GPUs h0/g0, h0/g1") and "became unavailable" in why
    assert "previous plan invalid (GPUs" in report.rounds[1].status
    assert "guarantee of 'generous' dropped" in report.rounds[1].status
    assert (report.slo_dropped, report.slo_late, report.slo_missed) == (1, 0, 1)
    check = _checked(report, jobs, cfg)
    assert check.dropped_why == {"generous": why} and check.late == 0


def test_the_check_recounts_from_the_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    """The independent check can fail: take one executed slot away from a met job and it is
    late; shift its guarantee earlier and it is late too."""
    jobs, cfg = _jobs(), _config("heuristic:edf")
    report = replay(CLUSTER, jobs, cfg)
    good = _checked(report, jobs, cfg)
    assert good.late == 0 and good.met == report.slo_met > 0
    job = "generous"
    cut = {**report.allocations, job: report.allocations[job][:-1]}
    bad = check_replay(jobs, replace(report, allocations=cut), slot_s=SLOT, exponent=0.9)
    assert bad.late_ids == (job,) and bad.met == good.met - 1
    finish = driver_finish(jobs, report, job)
    early = {**report.guarantees, job: finish - 1.0}
    bad = check_replay(jobs, replace(report, guarantees=early), slot_s=SLOT, exponent=0.9)
    assert bad.late_ids == (job,)


def driver_finish(jobs, report, job_id) -> float:
    job = next(j for j in jobs if j.id == job_id)
    done = finish_time(job, report.allocations[job_id], SLOT, 0.9)
    assert done is not None
    return done


def test_duplicate_ids_and_bad_config() -> None:
    job = _job("a", 0.0, 1, 60.0, "best_effort")
    with pytest.raises(ValueError, match="unique"):
        replay(CLUSTER, [job, job], _config("heuristic:edf"))
    with pytest.raises(ValueError):
        DriverConfig(slot_s=0)
