"""The two-pool programme's bound on a case (formulations/cosched.md, "The case's two-pool
programme") against brute force: never below the most ``Σ π`` of a group of two or more members
of the case, and so ``case_bound`` stays a valid bound with it; on cases of three pools it is
often tighter than the sum of the positive π (it binds)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedopt.problems.cosched import case_dp
from schedopt.problems.cosched.pricing import case_bound, open_bound, undominated, with_programme

from .cases import best_group, fits, random_case

P = 3


def _case(seed: int, universal: bool):
    """A random case of 5 jobs × 3 combinations on 3 pools (:func:`.cases.random_case`), π
    of either sign, SLOs below the level likely; ``universal``: every combination uses pool 1."""
    return random_case(seed, universal, jobs=5, pools=P, slo_span=(30, 10), pi_least=-1.0)


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
    assert _bound(case, cells) >= best_group(case, 2) - 1e-9


def test_the_programme_binds_on_some_cases() -> None:
    """On random cases it is often below Σ of the positive π, and on some exactly the
    brute-force maximum: a bound that works, not only a valid one."""
    below = exact = 0
    for seed in range(40):
        case = _case(seed, seed % 2 == 1)
        pi = case[0]
        got, best = _bound(case), best_group(case, 2)
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
            if fits(*case, [(i, c)]):
                single = max(single, float(pi[items[i]]))
    best = max(single, best_group(case, 2))
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


def _scaled(case, k: int):
    """The case with every time (durations, loads, switches, chains, SLOs, level) times
    ``k``: the same groups, the same maximum."""
    pi, items, ok, duration, load, mem, chain, slo, factor, switch, level, room = case
    return (
        pi,
        items,
        ok,
        duration * k,
        load * k,
        mem,
        chain * k,
        slo * k,
        factor,
        switch * k,
        level * k,
        room,
    )


@pytest.mark.parametrize("seed", range(20))
def test_loads_of_a_common_divisor_are_not_rounded(seed: int) -> None:
    """Every time times 100 (the loads then multiples of 500 ms, a cycle of at most 9.9 s):
    the programme at 21 cells gives the bound of the unscaled case at 160 (there 1 to 5 ms
    cells: exact), its cells being the divisor (no weight rounded down), and never below brute
    force. Cells of ``⌈top / 21⌉`` ms (up to 472) round the loads down: a looser bound on 5 of
    these 20 cases."""
    case = _case(seed, seed % 2 == 0)
    exact = _bound(case)
    assert _bound(_scaled(case, 100), 21) == pytest.approx(exact, abs=1e-9)
    assert exact >= best_group(case, 2) - 1e-9


def test_finer_cells_bind_where_coarse_ones_round() -> None:
    """At 3 cells a pool (weights rounded down hard) the bound is above the one at
    :data:`.case_dp.FINE_CELLS` (there exact: the loads' divisor, 5 ms) on some cases and
    never below it; both stay above brute force."""
    looser = 0
    for seed in range(30):
        case = _case(seed, seed % 2 == 1)
        coarse, fine = _bound(case, 3), _bound(case, case_dp.FINE_CELLS)
        assert coarse >= fine - 1e-9 >= best_group(case, 2) - 2e-9
        looser += coarse > fine + 1e-9
    assert looser >= 3, looser


def test_past_its_deadline_the_programme_gives_the_trivial_bound() -> None:
    """Stopped by its deadline, the programme answers the sum of the positive π (a bound,
    the case's trivial one) at once, so the refinement keeps the time limit."""
    from schedopt.core.stopping import Deadline

    case = _case(3, True)
    pi, items, ok, duration, load, mem, chain, slo, _, switch, level, _ = case
    args = (pi, items, ok, duration, load, mem, chain, slo, level, switch)
    assert open_bound(*args, None, Deadline.after(0.0)) == pytest.approx(pi[pi > 0].sum())
    assert open_bound(*args, None, Deadline.after(60.0)) < pi[pi > 0].sum() - 1e-9
