"""Popularity posterior (Dirichlet–multinomial) and the scenario model."""

from __future__ import annotations

import numpy as np
import pytest

import schedopt
from schedopt.core.status import Status
from schedopt.problems.moe_placement import generate, generate_custom, posterior
from schedopt.problems.moe_placement.validate import layer_time


@pytest.fixture(scope="module")
def noisy():
    # 1 layer, 8 experts on 4 GPUs, skewed popularity seen through only 100 routed tokens.
    return generate_custom(
        shape="olmoe-1b-7b",
        layers=1,
        experts=8,
        hosts=1,
        gpus_per_host=4,
        observed_tokens=100,
        skew=1.2,
        seed=0,
    )


def test_posterior_mean_is_normalised_counts_plus_prior(noisy) -> None:
    counts = np.array([e.routing_count for e in noisy.layers[0].experts], dtype=float)
    a = noisy.prior_concentration
    expected = (counts + a) / (counts.sum() + a * len(counts))
    assert posterior.posterior_mean(noisy, 0) == pytest.approx(expected)
    tokens = noisy.layers[0].tokens_per_batch
    assert noisy.point_popularity(0) == pytest.approx(tuple(tokens * expected))


def test_prior_concentration_pulls_towards_uniform(noisy) -> None:
    flat = noisy.model_copy(update={"prior_concentration": 1e6})
    assert posterior.posterior_mean(flat, 0) == pytest.approx(np.full(8, 1 / 8), rel=1e-3)


def test_sampling_is_seeded_and_keeps_the_batch_size(noisy) -> None:
    a = posterior.scenario_popularity(noisy, 5, np.random.default_rng(7))
    b = posterior.scenario_popularity(noisy, 5, np.random.default_rng(7))
    c = posterior.scenario_popularity(noisy, 5, np.random.default_rng(8))
    assert a == b and a != c
    for s in a:
        assert sum(s[0]) == pytest.approx(noisy.layers[0].tokens_per_batch)


def test_layers_without_counts_are_certain() -> None:
    inst = generate("tiny", 0)
    draws = posterior.scenario_popularity(inst, 3, np.random.default_rng(0))
    assert all(d[0] == inst.point_popularity(0) for d in draws)
    assert "heldout_p95_max_load" not in schedopt.solve(inst, "heuristic:eplb").metrics


def test_scenario_model_beats_the_point_placement_on_its_scenarios(noisy) -> None:
    point = schedopt.solve(noisy, "milp:highs", time_limit_s=20)
    robust = schedopt.solve(noisy, "milp:scenario", time_limit_s=20, params={"scenarios": 16})
    assert point.status is Status.OPTIMAL and robust.status is Status.FEASIBLE
    assert robust.stats["scenario_status"] == "optimal"
    # the point placement is feasible for the scenario model, which is proven optimal
    train = posterior.scenario_popularity(noisy, 16, np.random.default_rng(0))
    point_expected = np.mean([layer_time(noisy, point.solution, pops) for pops in train])
    robust_expected = np.mean([layer_time(noisy, robust.solution, pops) for pops in train])
    assert robust.stats["scenario_objective_us"] == pytest.approx(robust_expected, rel=1e-6)
    assert robust_expected <= point_expected + 1e-6
    # Measured on this instance (seed 0): held-out p95 319.8 µs (scenario) vs 320.6 µs (point).
    assert robust.metrics["heldout_p95_max_load"] <= point.metrics["heldout_p95_max_load"] + 1e-6
    # ... while it gives up (at most a little) load under the point estimate.
    assert robust.metrics["point_max_load"] >= point.metrics["point_max_load"] - 1e-6


def test_cvar_objective(noisy) -> None:
    r = schedopt.solve(
        noisy,
        "milp:scenario",
        time_limit_s=20,
        params={"scenarios": 8, "risk": "cvar", "alpha": 0.75},
    )
    train = posterior.scenario_popularity(noisy, 8, np.random.default_rng(0))
    times = np.sort([layer_time(noisy, r.solution, pops) for pops in train])
    # CVaR at 0.75 over 8 equally likely scenarios = mean of the worst 2
    assert r.stats["scenario_objective_us"] == pytest.approx(times[-2:].mean(), rel=1e-6)


def test_bad_scenario_params() -> None:
    inst = generate("tiny", 0)
    with pytest.raises(ValueError):
        schedopt.solve(inst, "milp:scenario", params={"risk": "worst"})
    with pytest.raises(ValueError):
        schedopt.solve(inst, "milp:scenario", params={"nope": 1})


def test_tempered_posterior_keeps_the_shares_and_widens_the_spread(noisy) -> None:
    doc = noisy.model_dump(mode="json")
    doc["effective_tokens"] = 10.0
    wide = type(noisy).model_validate(doc)
    counts = np.array([e.routing_count for e in noisy.layers[0].experts], dtype=float)
    scaled = counts * 10.0 / counts.sum()
    assert posterior.alpha(wide, 0) == pytest.approx(1.0 + scaled)
    rng = np.random.default_rng(0)
    tight = np.std([d[0] for d in posterior.scenario_popularity(noisy, 200, rng)], axis=0)
    loose = np.std([d[0] for d in posterior.scenario_popularity(wide, 200, rng)], axis=0)
    assert loose.mean() > tight.mean()
