"""Gavel's rule-based policies through the drop-in (issue #19): FIFO's three modes and the
isolated split, on rounds worked by hand from Gavel's rules (formulations/timeshare.md)."""

from __future__ import annotations

import pytest

from schedopt.integrations.gavel import (
    FIFO,
    FIFOPolicyWithPacking,
    FIFOPolicyWithPerf,
    GandivaPolicy,
    IsolatedPolicy,
)

V, K = "v100", "k80"


def _placed(out) -> dict:
    return {k: w for k, row in out.items() for w, x in row.items() if x == 1.0}


def test_perf_takes_the_fastest_type_with_room_in_arrival_order() -> None:
    thr = {0: {V: 4.0, K: 1.0}, 1: {V: 3.0, K: 2.0}, 2: {V: 5.0, K: 1.0}}
    out = FIFOPolicyWithPerf().get_allocation(thr, {0: 1, 1: 1, 2: 1}, {V: 1, K: 1})
    # job 0 takes the V100; job 1 the K80 (no V100 left); job 2 waits, with no time
    assert _placed(out) == {0: V, 1: K}
    assert out[2] == {V: 0.0, K: 0.0}
    assert FIFOPolicyWithPerf().name == "FIFO_Perf"


def test_no_job_jumps_the_queue() -> None:
    """The head needs 2 GPUs of one type and no type has them: nobody behind it runs."""
    thr = {0: {V: 4.0, K: 1.0}, 1: {V: 3.0, K: 2.0}}
    out = FIFOPolicyWithPerf().get_allocation(thr, {0: 2, 1: 1}, {V: 1, K: 1})
    assert _placed(out) == {}


def test_base_mode_keeps_jobs_in_place_and_refills_from_the_queue() -> None:
    policy = FIFO(seed=0)
    thr = {0: {V: 4.0, K: 1.0}, 1: {V: 3.0, K: 2.0}, 2: {V: 5.0, K: 1.0}}
    first = _placed(policy.get_allocation(thr, {0: 1, 1: 1, 2: 1}, {V: 1, K: 1}))
    assert set(first) == {0, 1} and set(first.values()) == {V, K}
    # job 0 leaves: job 2 (the head of the queue) takes its type; job 1 stays where it was
    del thr[0]
    second = _placed(policy.get_allocation(thr, {1: 1, 2: 1}, {V: 1, K: 1}))
    assert second == {1: first[1], 2: first[0]}
    assert FIFO().name == "FIFO"
    with pytest.raises(ValueError, match="mode"):
        FIFO(mode="lifo")


def test_packing_pairs_a_waiting_job_when_sharing_gains_enough() -> None:
    thr = {
        0: {V: 4.0, K: 1.0},
        1: {V: 2.0, K: 0.5},
        (0, 1): {V: [3.0, 1.5], K: [0.5, 0.25]},  # 3/4 + 1.5/2 = 1.5 on the V100: not > 1.5
    }
    sf = {0: 1, 1: 1}
    out = FIFOPolicyWithPacking().get_allocation(thr, sf, {V: 1, K: 0})
    assert _placed(out) == {0: V}
    thr[(0, 1)] = {V: [3.2, 1.6], K: [0.5, 0.25]}  # 0.8 + 0.8 = 1.6 > 1.5: they share
    out = FIFOPolicyWithPacking().get_allocation(thr, sf, {V: 1, K: 0})
    assert _placed(out) == {(0, 1): V}
    assert FIFOPolicyWithPacking(packing_threshold=1.7).get_allocation(thr, sf, {V: 1, K: 0})[
        0
    ] == {V: 1.0, K: 0.0}
    assert "Packing" in FIFOPolicyWithPacking().name


def test_isolated_split_by_hand() -> None:
    """2 jobs on 2 + 2 GPUs: each is offered 1 GPU of each type; job 0 (1 GPU) would run
    1 + 1 rounds, scaled to 1/2 each; job 1 (2 GPUs) runs 1/2 + 1/2."""
    out = IsolatedPolicy().get_allocation(
        {0: {V: 1.0, K: 0.0}, 1: {V: 2.0, K: 1.0}}, {0: 1, 1: 2}, {V: 2, K: 2}
    )
    assert out == {0: {V: 0.5, K: 0.5}, 1: {V: 0.5, K: 0.5}}
    assert IsolatedPolicy().get_allocation({}, {}, {V: 1}) is None
    assert IsolatedPolicy().name == "Isolated"


def _gandiva_round(n: int, gain: float = 0.7):
    thr: dict = {j: {V: 2.0 + j, K: 1.0} for j in range(n)}
    for a in range(n):
        for b in range(a + 1, n):
            thr[(a, b)] = {w: [gain * thr[a][w], gain * thr[b][w]] for w in (V, K)}
    return thr, {j: 1 for j in range(n)}


def _combos(out) -> list:
    return sorted((k for k, row in out.items() if sum(row.values()) > 0), key=repr)


def test_gandiva_without_packing_while_the_jobs_fit() -> None:
    thr, sf = _gandiva_round(2)
    out = GandivaPolicy(seed=1).get_allocation(thr, sf, {V: 2, K: 2})
    assert out[0] == out[1] == {V: 0.5, K: 0.5}
    assert out[(0, 1)] == {V: 0.0, K: 0.0}
    assert GandivaPolicy().name == "Gandiva_Packing"


def test_gandiva_pairs_at_random_and_splits_equally_when_they_do_not() -> None:
    """4 one-GPU jobs on 2 GPUs: two random pairs (every pair is offered), each 1/2 of each
    type; the pairs stay next round; when a job leaves its partner is paired again or alone;
    a pair whose normalised throughput falls below 1 is dropped."""
    thr, sf = _gandiva_round(4)
    policy = GandivaPolicy(seed=3)
    out = policy.get_allocation(thr, sf, {V: 1, K: 1})
    pairs = _combos(out)
    assert len(pairs) == 2 and all(isinstance(p, tuple) for p in pairs)
    assert sorted(j for p in pairs for j in p) == [0, 1, 2, 3]
    for p in pairs:
        assert out[p] == {V: 0.5, K: 0.5}
    assert _combos(policy.get_allocation(thr, sf, {V: 1, K: 1})) == pairs
    # job 0 leaves: its partner and the other pair; 3 jobs still ask for more than 2 GPUs
    partner = next(j for p in pairs if 0 in p for j in p if j != 0)
    left = {k: v for k, v in thr.items() if k != 0 and not (isinstance(k, tuple) and 0 in k)}
    out = policy.get_allocation(left, {j: 1 for j in (1, 2, 3)}, {V: 1, K: 1})
    kept = [p for p in pairs if 0 not in p]
    assert kept[0] in _combos(out) and partner in _combos(out)
    assert all(out[k] == {V: 0.5, K: 0.5} for k in _combos(out))
    # sharing becomes slow (Σ T^P/T = 4 · 0.2 < 1): the pair is dropped, then drawn again
    slow, _ = _gandiva_round(4, gain=0.2)
    fresh = GandivaPolicy(seed=3)
    fresh.get_allocation(thr, sf, {V: 1, K: 1})
    fresh._drop_stale(slow, [K, V])
    assert fresh._combos == {}
