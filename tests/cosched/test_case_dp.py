"""The two-pool programme's bound on a case (formulations/cosched.md, "The case's two-pool
programme") against brute force: never below the most ``Σ π`` of a group of two or more members
of the case, and so ``case_bound`` stays a valid bound with it; on cases of three pools it is
often tighter than the sum of the positive π (it binds)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedopt.problems.cosched import case_dp
from schedopt.problems.cosched.pricing import case_bound, open_bound, undominated, with_programme

from .test_case_bound import _fits

P = 3


def _case(seed: int, universal: bool):
    """A random case of 5 jobs × 3 combinations on 3 pools (small whole numbers, repeated and
    dominated combinations likely, SLOs below the level); ``universal``: every combination
    uses pool 1."""
    rng = np.random.default_rng(seed)
    n, K = 5, 3
    items = np.arange(n)
    duration = rng.integers(0, 4, (n, K, P)) * 10
    if universal:
        duration[..., 1] = rng.integers(1, 4, (n, K)) * 10
    switch = rng.integers(0, 3, n) * 5
    load = duration + np.where(duration > 0, switch[:, None, None], 0)
    mem = rng.integers(0, 3, (n, K, P)) * 100
    chain = duration.sum(axis=2) + rng.integers(0, 2, (n, K)) * 10
    ok = rng.random((n, K)) < 0.85
    level = int(rng.integers(40, 90))
    slo = rng.integers(level - 30, level + 10, n)
    factor = 1 + rng.integers(0, 2, n)
    pi = rng.uniform(-1.0, 5.0, n)
    room = rng.integers(1, 4, P) * 150
    return pi, items, ok, duration, load, mem, chain, slo, factor, switch, level, room


def _best_of_two_or_more(case) -> float:
    """The most Σ π of a group of two or more members of the case, by enumeration."""
    pi, items, ok = case[:3]
    best = 0.0
    for pick in itertools.product(range(-1, ok.shape[1]), repeat=len(items)):
        chosen = [(i, c) for i, c in enumerate(pick) if c >= 0]
        if len(chosen) >= 2 and _fits(*case, chosen):
            best = max(best, float(sum(pi[items[i]] for i, _ in chosen)))
    return best


def _bound(case, cells: int | None = None) -> float:
    pi, items, ok, duration, load, mem, chain, slo, _, switch, level, _ = case
    old = case_dp.CELLS
    case_dp.CELLS = cells or old
    try:
        return open_bound(pi, items, ok, duration, load, mem, chain, slo, level, switch)
    finally:
        case_dp.CELLS = old


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), universal=st.booleans(), cells=st.sampled_from([3, 7, 160]))
def test_the_programme_never_cuts_a_group(seed: int, universal: bool, cells: int) -> None:
    """The bound is at least the brute-force maximum over the groups of two or more members,
    at any cell size (coarse cells round the weights down: the bound only rises)."""
    case = _case(seed, universal)
    assert _bound(case, cells) >= _best_of_two_or_more(case) - 1e-9


def test_the_programme_binds_on_some_cases() -> None:
    """On random cases it is often below Σ of the positive π, and on some exactly the
    brute-force maximum: a bound that works, not only a valid one."""
    below = exact = 0
    for seed in range(40):
        case = _case(seed, seed % 2 == 1)
        pi = case[0]
        got, best = _bound(case), _best_of_two_or_more(case)
        below += got < pi[pi > 0].sum() - 1e-9
        exact += abs(got - best) < 1e-9
    assert below >= 15, below
    assert exact >= 5, exact


@pytest.mark.parametrize("seed", range(20))
def test_the_case_bound_with_the_programme_stays_above_the_maximum(seed: int) -> None:
    """``case_bound`` stopped at once leaves the model open; with the programme's bound
    (``with_programme``, as the refinement takes it) it is never below the case's maximum
    (brute force over every group, one member included), nor above CP-SAT's own."""
    case = _case(seed, seed % 2 == 0)
    pi, items = case[0], case[1]
    single = 0.0
    for i in range(len(items)):  # the best group of one member
        for c in range(case[2].shape[1]):
            if _fits(*case, [(i, c)]):
                single = max(single, float(pi[items[i]]))
    best = max(single, _best_of_two_or_more(case))
    got = case_bound(*case, 0.0, None, (), 0.0)  # no CP-SAT time: the model is left open
    assert not got.decided
    pi, items, ok, duration, load, mem, chain, slo, _, switch, level, _ = case
    args = (pi, items, ok, duration, load, mem, chain, slo, level, switch)
    tight = with_programme(got, open_bound(*args))
    assert best - 1e-9 <= tight.upper <= got.upper
    solved = case_bound(*case, 30.0)  # proven: not open
    assert solved.decided and solved.upper >= best - 1e-9


def test_an_undominated_order_is_kept() -> None:
    """The programme reads the undominated combinations only: a dominated one never lowers
    the bound (the same bound with and without it)."""
    case = list(_case(5, True))
    kept = undominated(*[case[k] for k in (2, 3, 4, 5, 6)])
    with_all = _bound(tuple(case))
    case[2] = kept
    assert _bound(tuple(case)) == pytest.approx(with_all)
