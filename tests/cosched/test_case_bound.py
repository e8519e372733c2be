"""Exact pricing's pieces against brute force (formulations/cosched.md, "R' and exact pricing",
"Cheaper exact rounds"): one case's CP-SAT bound with dominated combinations left out, a stop
at ``enough`` and a hint; Dantzig's screen of the surrogate knapsacks; the greedy fill."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from schedopt.problems.cosched.farley import Stack, _fractional, _knapsack
from schedopt.problems.cosched.greedy import _fill
from schedopt.problems.cosched.pricing import (
    KEEP_GROUPS,
    SCALE,
    case_bound,
    case_model,
    undominated,
)

from .cases import best_group, fits, random_case

P = 2


def _case(seed: int, universal: bool = False):
    """A random case of 4 jobs × 3 combinations on 2 pools (:func:`.cases.random_case`)."""
    return random_case(seed, universal, jobs=4, pools=P, slo_span=(20, 1), pi_least=0.1)


@pytest.mark.parametrize("universal", [False, True])
@pytest.mark.parametrize("seed", range(40))
def test_the_case_bound_is_the_brute_force_maximum(seed: int, universal: bool) -> None:
    """Solved to the end, CP-SAT's bound is the case's maximum (to π's rounding up), with the
    dominated combinations left out; stopped at any ``enough`` or started from any hint it is
    never below it. With a pool every combination uses, the groups of one member are found
    outside the model and the model states that pool's R3' without its big-M."""
    case = _case(seed, universal)
    best = best_group(case)
    slack = len(case[1]) / SCALE + 1e-6  # π rounded up to 1/SCALE per member
    got = case_bound(*case, 30.0)
    assert best - 1e-9 <= got.upper <= best + slack
    assert got.value == pytest.approx(best, abs=slack)
    for enough in (0.0, best / 2, best, best * 2 + 1):
        stopped = case_bound(*case, 30.0, enough, got.found)
        assert stopped.upper >= best - 1e-9, enough
        assert stopped.upper <= max(enough, best + slack) + 1e-9


def test_every_group_the_search_finds_is_a_group_of_the_case() -> None:
    """``groups`` holds the solutions CP-SAT found on its way, each one a column: a group of
    the case (brute force's rows), with its own Σ π, the best first and ``found`` among them;
    on some of 40 random cases there are several (one a case before #17's KEEP_GROUPS)."""
    several = 0
    for seed in range(40):
        case = _case(seed, seed % 2 == 1)
        got = case_bound(*case, 30.0)
        pi, items = case[0], case[1]
        values = [v for v, _ in got.groups]
        assert values == sorted(values, reverse=True)
        assert len(got.groups) <= KEEP_GROUPS
        assert len({g for _, g in got.groups}) == len(got.groups)
        if got.found:
            assert tuple(got.found) in {g for _, g in got.groups}
        for value, group in got.groups:
            where = {int(j): i for i, j in enumerate(items)}
            chosen = [(where[j], c) for j, c in group]
            assert len({i for i, _ in chosen}) == len(chosen)
            assert fits(*case, chosen), (seed, group)
            assert value == pytest.approx(sum(pi[j] for j, _ in group))
            assert value <= got.upper + 1e-9
        several += len(got.groups) > 1
    assert several >= 5, several


@pytest.mark.parametrize("seed", range(40))
def test_dominated_combinations_leave_the_maximum_unchanged(seed: int) -> None:
    """The brute-force maximum over the undominated combinations equals the one over all."""
    case = list(_case(seed))
    ok, duration, load, mem, chain = case[2:7]
    kept = undominated(ok, duration, load, mem, chain)
    assert not (kept & ~ok).any()
    assert (kept.any(axis=1) == ok.any(axis=1)).all()  # a job keeps a combination
    case[2] = kept
    assert best_group(case) == pytest.approx(best_group(_case(seed)))


def test_a_dominated_combination_is_left_out() -> None:
    ok = np.ones((1, 3), dtype=bool)
    duration = np.array([[[10, 0], [20, 0], [10, 0]]])
    load = duration + 5 * (duration > 0)
    mem = np.array([[[100, 0], [100, 0], [100, 0]]])
    chain = np.array([[10, 20, 10]])
    # the second is dominated by the first; the third equals the first (the first is kept)
    assert undominated(ok, duration, load, mem, chain).tolist() == [[True, False, False]]


def _best_knapsack(v: np.ndarray, w: np.ndarray, cap: int) -> float:
    return max(
        float(v[list(s)].sum())
        for r in range(len(v) + 1)
        for s in itertools.combinations(range(len(v)), r)
        if w[list(s)].sum() <= cap
    )


@pytest.mark.parametrize("seed", range(30))
def test_dantzigs_screen_is_above_every_knapsack(seed: int) -> None:
    """Dantzig's bound of each column is at least the knapsack's value (brute force) and at
    most Σ v; with every weight fitting whole it is Σ v."""
    rng = np.random.default_rng(seed)
    n, S = int(rng.integers(1, 8)), 5
    v = rng.uniform(-1, 10, n)
    w = rng.integers(0, 50, (n, S))
    caps = rng.integers(0, 120, S)
    got = _fractional(v, w, caps)
    positive = v > 0
    for s in range(S):
        exact = _best_knapsack(v[positive], w[positive, s], int(caps[s])) if positive.any() else 0
        assert exact - 1e-9 <= got[s] <= v[positive].sum() + 1e-9
        assert _knapsack(v, w[:, s], int(caps[s])) >= exact - 1e-9
    assert _fractional(v, w, np.full(S, 10**6)) == pytest.approx(np.full(S, v[positive].sum()))


def _fill_one_by_one(jobs, pick, order, stack, on, switch, level, room):
    """The greedy fill as it was written first: every candidate tested once, in order."""
    Pn = stack.load.shape[2]
    load, mem, users, chosen = [0] * Pn, [0] * Pn, [0] * Pn, []
    for t in order:
        j, i = int(jobs[t]), int(pick[t])
        cl, cm, co = stack.load[j, i], stack.mem[j, i], on[j, i]
        if all(
            mem[p] + cm[p] <= room[p]
            and (not co[p] or load[p] + cl[p] <= level + (switch[j] if not users[p] else 0))
            for p in range(Pn)
        ):
            for p in range(Pn):
                users[p] += int(co[p])
                load[p] += int(cl[p])
                mem[p] += int(cm[p])
            chosen.append((j, i))
    return chosen


@pytest.mark.parametrize("seed", range(30))
def test_the_greedy_fill_takes_the_group_of_one_by_one_tests(seed: int) -> None:
    rng = np.random.default_rng(seed)
    J, K = 12, 3
    stack = Stack.__new__(Stack)
    stack.load = rng.integers(0, 4, (J, K, 3)) * 10
    stack.mem = rng.integers(0, 3, (J, K, 3)) * 100
    on = stack.load > 0
    switch = rng.integers(0, 3, J) * 5
    jobs = np.flatnonzero(rng.random(J) < 0.8)
    pick = rng.integers(0, K, len(jobs))
    order = rng.permutation(len(jobs))
    level, room = int(rng.integers(20, 80)), rng.integers(1, 5, 3) * 100
    args = (jobs, pick, order, stack, on, switch, level, room)
    assert _fill(*args) == _fill_one_by_one(*args)


def test_a_pool_every_combination_uses_has_no_big_m() -> None:
    """R3' on a pool every admissible combination uses is the load row alone (formulations/
    cosched.md, "Cheaper exact rounds"): the model's only variables are the cycle and one
    Boolean per combination; a pool some combination leaves unused keeps its binary."""
    pi, items, ok, duration, load, mem, chain, slo, factor, switch, level, room = _case(3, True)
    ok = np.ones_like(ok)
    kept = undominated(ok, duration, load, mem, chain)
    uses0 = bool(np.where(kept[..., None], load > 0, True).all(axis=(0, 1))[0])
    m, x, _ = case_model(
        pi, items, ok, duration, load, mem, chain, slo, factor, switch, level, room
    )
    assert len(x) == int(kept.sum())
    assert len(m.proto.variables) == 1 + len(x) + (0 if uses0 else 1)
    duration[..., 0] = 10  # every combination on both pools: no binary at all
    load = duration + switch[:, None, None]
    m, x, _ = case_model(
        pi, items, ok, duration, load, mem, chain, slo, factor, switch, level, room
    )
    assert len(m.proto.variables) == 1 + len(x)


@pytest.mark.parametrize("seed", range(20))
def test_the_best_group_of_one_member_is_found_outside_the_model(seed: int) -> None:
    """Every job's phase on pool 1 fills its whole cycle alone, so no two share a group and a
    member's switch is never paid: the case's maximum is its best job alone (the model, which
    holds a universal pool's load with the switch, has none of these groups), and case_bound
    returns it and that group."""
    pi, items, ok, _, _, mem, _, slo, factor, switch, level, room = _case(seed, True)
    switch = switch + 5
    duration = np.zeros((len(items), ok.shape[1], P), dtype=np.int64)
    duration[..., 1] = np.minimum(level, slo)[:, None]
    load = duration + switch[:, None, None]
    chain = duration.sum(axis=2)
    case = (pi, items, ok, duration, load, mem, chain, slo, factor, switch, level, room)
    best = best_group(case)
    assert best == max([0.0] + [pi[j] for j in items if (ok[j] & (mem[j] <= room).all(1)).any()])
    got = case_bound(*case, 30.0)
    assert best - 1e-9 <= got.upper <= best + 1 / SCALE + 1e-9
    assert len(got.found) <= 1 and got.value == pytest.approx(best)
