"""The isolated split's tunable parameter: weight 0 is Gavel's isolated split, every weight
gives a valid round (checked by the independent validator), and tuning it works end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedopt
from schedopt.problems.timeshare import generate
from schedopt.problems.timeshare.data import build_data
from schedopt.problems.timeshare.heuristics import IsolatedParams, weighted_split
from schedopt.problems.timeshare.strategies import instances
from schedopt.problems.timeshare.validate import validate
from schedopt.tuning import tune

INSTANCES = Path(__file__).resolve().parents[2] / "instances" / "timeshare"


@settings(max_examples=60, derandomize=True, deadline=None)
@given(instances(), st.floats(*IsolatedParams.SPACE["speed_weight"]))
def test_every_weight_gives_a_valid_round(inst, weight: float) -> None:
    result = schedopt.solve(inst, "heuristic:isolated", params={"speed_weight": weight})
    assert result.solution is not None
    assert validate(inst, result.solution) == []
    if weight:  # no time where a job cannot run
        rates = {j.id: j.throughput for j in inst.jobs}
        assert all(rates[s.job].get(s.worker_type, 0) > 0 for s in result.solution.shares)


def test_weight_zero_is_the_isolated_split() -> None:
    inst = schedopt.load(INSTANCES / "max_min_fairness_perf-8j-s1.json")
    data = build_data(inst, pairs=False)
    assert np.array_equal(weighted_split(data, 0.0), data.isolated_split())
    leaning = weighted_split(data, 2.0)
    assert not leaning[data.throughput == 0].any()
    used = (data.counts[:, None] * data.scale[:, None] * leaning).sum(axis=0)  # C1
    assert (used <= data.capacity + 1e-9).all() and (leaning.sum(axis=1) <= 1 + 1e-12).all()


def test_the_weight_changes_the_answer_and_out_of_range_is_refused() -> None:
    inst = schedopt.load(INSTANCES / "max_min_fairness-8j-s0.json")
    values = {
        w: schedopt.solve(inst, "heuristic:isolated", params={"speed_weight": w}).objectives[0]
        for w in (0.0, 3.0)
    }
    assert values[3.0] > values[0.0]  # 0.279 > 0.1875 (measured): a knob worth tuning
    with pytest.raises(ValueError, match="speed_weight"):
        IsolatedParams(speed_weight=99.0)


def test_tuning_the_isolated_split_is_no_worse_than_the_defaults() -> None:
    training = [generate("small", seed) for seed in (100, 101)]
    result = tune("heuristic:isolated", training, n_calls=6, seed=0)
    assert result.score <= result.default_score
    low, high = IsolatedParams.SPACE["speed_weight"]
    assert low <= result.params["speed_weight"] <= high
