"""Round-by-round replays for policy-level tuning: the episode's metrics are the rounds' own
figures averaged, and a round without a plan is charged the whole fleet."""

from __future__ import annotations

import pytest

from schedopt.core.registry import get_problem
from schedopt.problems.cosched.policy import Episode, episodes, evaluate, replay_rounds
from schedopt.tuning.policy import tune_policy

SMALL = dict(
    rounds=2,
    start_jobs=3,
    finish=1,
    arrive=1,
    max_jobs=4,
    pool_jobs=6,
    h20_hosts=6,
    h800_hosts=6,
    cpu_hosts=6,
)


def test_the_metrics_are_the_rounds_averaged() -> None:
    episode = Episode("small", 3, **SMALL)
    rows = replay_rounds(episode, "heuristic:packing")
    assert [r["jobs"] for r in rows] == [3, 3]
    cost, miss, moved = evaluate("heuristic:packing", episode, {})
    planned = [r for r in rows if r["objectives"] is not None]
    assert planned, "the small fleet holds every round"
    assert cost == pytest.approx(
        sum(r["objectives"][0] if r["objectives"] else r["fleet_price"] for r in rows) / 2
    )
    assert 0.0 <= miss <= 1.0 and moved >= 0.0


def test_a_round_without_a_plan_is_charged_the_whole_fleet() -> None:
    # One host per pool cannot hold three RL jobs: no round is planned.
    episode = Episode("tight", 3, **{**SMALL, "h20_hosts": 1, "h800_hosts": 1, "cpu_hosts": 1})
    rows = replay_rounds(episode, "heuristic:disaggregated")
    assert all(r["objectives"] is None for r in rows)
    cost, miss, moved = evaluate("heuristic:disaggregated", episode, {})
    assert cost == pytest.approx(rows[0]["fleet_price"]) and miss == 1.0 and moved == 0.0


def test_generated_episodes_use_consecutive_seeds() -> None:
    eps = episodes("unused", "generated", 7, 3, 4)
    assert [(e.name, e.seed, e.rounds) for e in eps] == [
        ("generated-s7", 7, 4),
        ("generated-s8", 8, 4),
        ("generated-s9", 9, 4),
    ]
    with pytest.raises(ValueError, match="unknown trace"):
        episodes("unused", "philly", 0, 1, 1)


@pytest.mark.slow
def test_packing_tuned_on_a_replay() -> None:
    spec = get_problem("cosched")
    eps = [Episode(f"small-s{s}", s, **SMALL) for s in (0, 1)]
    result = tune_policy(spec, "heuristic:packing", eps[:1], held_out=eps[1:], n_calls=6)
    assert result.evaluations == 6 and result.score <= result.default_score
    assert result.held_out_score is not None
