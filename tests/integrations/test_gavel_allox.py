"""Gavel's AlloX through the drop-in (issue #19): the assignment is a minimum (brute force
over every placement on tiny rounds), the first job of each GPU starts and keeps it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from schedopt.core.errors import InvalidInstanceError
from schedopt.integrations.gavel import AlloXPolicy
from schedopt.integrations.gavel_allox import assign


def _cost(queues, steps, rates, waited) -> float:
    """Σ over GPUs and their queues of the job's k · R/T + τ (k: jobs from it to the end)."""
    total = 0.0
    for g, queue in enumerate(queues):
        for pos, i in enumerate(queue):
            total += (len(queue) - pos) * steps[i] / rates[i, g] + waited[i]
    return total


def _brute(steps, rates, waited) -> float:
    m, n = rates.shape
    best = np.inf
    for gpu_of in itertools.product(range(n), repeat=m):
        for order in itertools.permutations(range(m)):
            queues = [[i for i in order if gpu_of[i] == g] for g in range(n)]
            best = min(best, _cost(queues, steps, rates, waited))
    return best


@pytest.mark.parametrize("seed", range(8))
def test_the_assignment_is_a_minimum(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(1, 5)), int(rng.integers(1, 3))
    steps, rates = rng.uniform(10, 100, m), rng.uniform(0.5, 5, (m, n))
    waited = rng.uniform(0, 50, m)
    queues = assign(steps, rates, waited)
    assert sorted(i for q in queues for i, _ in q) == list(range(m))
    assert all([pos for _, pos in q] == list(range(len(q))) for q in queues)
    got = _cost([[i for i, _ in q] for q in queues], steps, rates, waited)
    assert got == pytest.approx(_brute(steps, rates, waited), rel=1e-9)


def test_first_jobs_start_and_keep_their_gpus() -> None:
    """One V100, one K80. Job 0 is 10x faster on the V100, job 1 indifferent, job 2 waits:
    SPT per GPU puts 0 on the V100 and 1 on the K80 (2 queues behind one of them)."""
    V, K = "v100", "k80"
    thr = {0: {V: 10.0, K: 1.0}, 1: {V: 1.0, K: 1.0}, 2: {V: 2.0, K: 1.0}}
    ones = {k: 1 for k in thr}
    since = {0: 30.0, 1: 20.0, 2: 10.0}
    steps = {0: 100.0, 1: 10.0, 2: 1000.0}
    policy = AlloXPolicy()
    out = policy.get_allocation(thr, ones, since, steps, {V: 1, K: 1})
    running = {k: w for k, row in out.items() for w, x in row.items() if x == 1.0}
    assert sorted(running) == [0, 1] and running[0] == V
    # next round: both keep their GPUs, job 2 still waits; when job 1 leaves, job 2 starts
    again = policy.get_allocation(thr, ones, since, steps, {V: 1, K: 1})
    assert again == out
    del thr[1]
    later = policy.get_allocation(thr, {0: 1, 2: 1}, since, steps, {V: 1, K: 1})
    assert later[0] == {V: 1.0, K: 0.0} and later[2] == {V: 0.0, K: 1.0}
    assert policy.name == "AlloX_Perf"
    with pytest.raises(InvalidInstanceError, match="scale_factors"):
        AlloXPolicy().get_allocation(thr, {0: 2, 2: 1}, since, steps, {V: 1, K: 1})
