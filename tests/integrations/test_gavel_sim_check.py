"""The independent check of a round's allocation against Gavel's constraints
(``schedopt.integrations.gavel_sim.check_allocation``), which the simulator test applies to
every round: one test per constraint, each able to fail."""

from __future__ import annotations

import pytest

from schedopt.integrations.gavel_sim import (
    POLICIES,
    check_allocation,
    gavel_scheduler_dir,
    objective,
    simulate,
)

CLUSTER = {"v100": 2, "p100": 1, "k80": 1}
THR = {0: {"v100": 4.0, "p100": 2.0, "k80": 1.0}, 1: {"v100": 3.0, "p100": 2.0, "k80": 1.0}}
PAIR = (0, 1)
SCALE = {0: 1, 1: 1}


def test_a_valid_allocation_passes() -> None:
    alloc = {0: {"v100": 0.5, "p100": 0.5, "k80": 0.0}, 1: {"v100": 1.0, "p100": 0.0, "k80": 0}}
    assert check_allocation(alloc, THR, SCALE, CLUSTER) == []


def test_a_job_without_a_row() -> None:
    assert "without a row" in check_allocation({0: THR[0]}, THR, SCALE, CLUSTER)[0]
    assert check_allocation(None, THR, SCALE, CLUSTER) == ["no allocation for 2 jobs"]
    assert check_allocation(None, {}, {}, CLUSTER) == []


@pytest.mark.parametrize("x", [-0.1, 1.1, float("nan")])
def test_a_fraction_outside_0_1(x: float) -> None:
    alloc = {0: {"v100": x, "p100": 0, "k80": 0}, 1: {"v100": 0, "p100": 0, "k80": 0}}
    assert "outside [0, 1]" in check_allocation(alloc, THR, SCALE, CLUSTER)[0]


def test_a_job_given_more_than_all_its_time_alone_and_in_pairs() -> None:
    thr = {**THR, PAIR: {"v100": [2.0, 2.0], "p100": [1.0, 1.0], "k80": [0.5, 0.5]}}
    alloc = {
        0: {"v100": 0.0, "p100": 0.6, "k80": 0.0},
        1: {"v100": 0.0, "p100": 0.0, "k80": 0.0},
        PAIR: {"v100": 0.5, "p100": 0.0, "k80": 0.0},
    }
    assert check_allocation(alloc, thr, SCALE, CLUSTER) == ["job 0: total time 1.1 > 1"]


def test_a_type_over_its_gpus_counts_scale_factors() -> None:
    alloc = {0: {"v100": 0.0, "p100": 0.6, "k80": 0}, 1: {"v100": 0, "p100": 0.6, "k80": 0}}
    assert check_allocation(alloc, THR, SCALE, CLUSTER) == ["p100: 1.2 GPUs in use > 1"]
    alloc = {0: {"v100": 0.6, "p100": 0, "k80": 0}, 1: {"v100": 0.6, "p100": 0, "k80": 0}}
    assert check_allocation(alloc, THR, SCALE, CLUSTER) == []
    assert check_allocation(alloc, THR, {0: 2, 1: 2}, CLUSTER) == ["v100: 2.4 GPUs in use > 2"]


def test_a_key_or_type_the_round_has_not() -> None:
    zero = {"v100": 0.0, "p100": 0.0, "k80": 0.0}
    alloc = {0: zero, 1: zero, 7: {"v100": 0.0}}
    assert check_allocation(alloc, THR, SCALE, CLUSTER) == ["7: not a job or pair of the round"]
    alloc = {0: {"a100": 0.5}, 1: {"v100": 0.0}}
    assert check_allocation(alloc, THR, SCALE, CLUSTER) == ["0 on a100: a type the cluster has not"]


def test_every_gavel_policy_name_has_a_schedopt_class() -> None:
    from schedopt.integrations import gavel

    for name, (attr, _) in POLICIES.items():
        assert hasattr(gavel, attr), name


def test_bad_requests_are_refused_before_any_process_starts(tmp_path) -> None:
    with pytest.raises(ValueError, match="policy"):
        simulate("max_min_fairness_perfect", gavel_src=tmp_path)
    with pytest.raises(ValueError, match="system"):
        simulate("max_min_fairness_perf", system="slurm", gavel_src=tmp_path)
    with pytest.raises(FileNotFoundError, match="no Gavel scheduler"):
        gavel_scheduler_dir(tmp_path)


def test_gavels_objectives_by_hand() -> None:
    """Gavel's max-min normalises by an equal split of each type in proportion to its GPUs
    (here 2/4 v100, 1/4 p100, 1/4 k80): job 0's fair rate is 4*0.5 + 2*0.25 + 1*0.25 = 2.75."""
    alloc = {0: {"v100": 0.5, "p100": 0.5, "k80": 0.0}, 1: {"v100": 1.0, "p100": 0, "k80": 0}}
    weights = {0: 1.0, 1: 2.0}
    job0 = (4 * 0.5 + 2 * 0.5) / 2.75
    job1 = 3.0 / (3 * 0.5 + 2 * 0.25 + 1 * 0.25) / 2.0
    perf = objective("max_min_fairness_perf", alloc, THR, SCALE, CLUSTER, weights)
    assert perf == pytest.approx(min(job0, job1))
    blind = objective("max_min_fairness", alloc, THR, {0: 2, 1: 1}, CLUSTER, weights)
    assert blind == pytest.approx(min(2 * 1.0, 1.0 / 2.0))
    assert objective("max_sum_throughput_perf", alloc, THR, SCALE, CLUSTER) == 6.0
    steps = {0: 300.0, 1: 600.0}
    makespan = objective("min_total_duration_perf", alloc, THR, SCALE, CLUSTER, None, steps)
    assert makespan == 200.0
    with pytest.raises(ValueError, match="no objective"):
        objective("fifo", alloc, THR, SCALE, CLUSTER)
