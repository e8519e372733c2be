"""ETTR replays over fault events: no fault keeps the whole rate, a fault costs its rebuild and
recovery, a method without a plan trains nothing until the next event."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedopt.problems.reconfig import ReconfigSolution, generate_custom
from schedopt.problems.reconfig.policy import REBUILD_S, episodes, evaluate, replay_ettr
from schedopt.problems.reconfig.validate import evaluate as evaluate_plan

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


@pytest.fixture(scope="module")
def base():
    return generate_custom(4, 8, "llama2-7b", 64, 0, 0, seed=0)


def _healthy_s(base) -> float:
    return evaluate_plan(base, ReconfigSolution(pipelines=base.current_plan or ()))[0]


def test_no_fault_trains_at_the_full_rate(base) -> None:
    row = replay_ettr("heuristic:megatron", base, [], 1.0, _healthy_s(base))
    assert row["ettr"] == pytest.approx(1.0) and row["decisions"] == 0


def test_a_host_fault_costs_its_rebuilds_and_a_degraded_day(base) -> None:
    host = next(iter(base.cluster.hosts()))
    events = [(1.0, "start", host, "host"), (2.0, "end", host, "host")]
    row = replay_ettr(
        "heuristic:megatron", base, events, 3.0, _healthy_s(base), count_decisions=False
    )
    assert row["decisions"] == 1
    assert row["lost_h"] >= 2 * REBUILD_S / 3600  # one rebuild at the fault, one after it
    assert 0.0 < row["ettr"] < 1.0 and row["degraded_h"] > 0


def test_no_plan_and_no_fallback_trains_nothing_until_the_next_event(base) -> None:
    hosts = list(base.cluster.hosts())
    # Every host down at noon: no plan can exist; two back at 18:00: a plan again.
    every = [(0.5, "start", h, "host") for h in hosts] + [
        (0.75, "end", h, "host") for h in hosts[:2]
    ]
    row = replay_ettr(
        "heuristic:megatron",
        base,
        every,
        1.0,
        _healthy_s(base),
        fallback=None,
        count_decisions=False,
    )
    # The first half-day trained at the full rate, the next quarter not at all, the last at
    # two hosts' rate less one rebuild.
    assert 0.5 < row["ettr"] < 0.75


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "infinitehbd-faults").is_dir(), reason=f"no traces at {DATA}")
def test_an_episode_of_the_trace() -> None:
    (episode,) = episodes(DATA, "infinitehbd", 120, 1, 60)
    assert episode.name == "infinitehbd[day 120:180]" and episode.events
    ettr, lost_h = evaluate("heuristic:oobleck", episode, {})
    assert 0.5 < ettr <= 1.01 and lost_h > 0
