"""Bayesian tuning never records parameters worse than the defaults; the store round-trips."""

from __future__ import annotations

import pytest

from schedopt.problems.admission import generate_custom
from schedopt.tuning import load_tuned, save_tuned, tune


@pytest.fixture(scope="module")
def training():
    return [generate_custom(hosts=2, jobs=20, slots=6, seed=s, load=2.5) for s in range(2)]


@pytest.mark.parametrize("method", ["heuristic:edf", "heuristic:slack"])
def test_tuning_is_no_worse_than_the_defaults(training, method: str) -> None:
    result = tune(method, training, n_calls=8, seed=0)
    assert result.score <= result.default_score
    assert result.evaluations >= 7
    assert set(result.params) and all(isinstance(v, (int, float)) for v in result.params.values())


def test_exact_methods_cannot_be_tuned(training) -> None:
    with pytest.raises(ValueError, match="no tunable parameters"):
        tune("cpsat", training, n_calls=6)


def test_store_round_trip(tmp_path) -> None:
    assert load_tuned("admission", tmp_path) == {}
    save_tuned("admission", "heuristic:edf", {"params": {"laxity_weight": 0.5}}, tmp_path)
    save_tuned("admission", "heuristic:slack", {"params": {"share_boost": 1}}, tmp_path)
    assert load_tuned("admission", tmp_path) == {
        "heuristic:edf": {"laxity_weight": 0.5},
        "heuristic:slack": {"share_boost": 1},
    }
