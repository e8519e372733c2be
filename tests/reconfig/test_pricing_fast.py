"""The priced test's vectorised passes (pricing.py, dw_prices.py; #17) give what the loops they
replaced gave, array for array: the same capacities, the same rows, the same least prices
and choices, so the same bound from the same prices."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from schedopt.problems.reconfig.dw_prices import _credit
from schedopt.problems.reconfig.generate import generate_custom
from schedopt.problems.reconfig.pricing import (
    _caps,
    _least_cost,
    _Runs,
    best_columns,
    cheapest_types,
    least_per_count,
    priced_out,
    supply_value,
    unique_rows,
)
from schedopt.problems.reconfig.stage_bound import (
    StageData,
    every_packing,
    host_packings,
    maximal,
    stage_data,
)
from schedopt.problems.reconfig.validate import physical_bound_us


def caps_loop(sd: StageData, p: int, lam: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``_caps`` as it was (1d3dc85): a column per position and type."""
    left = lam - sd.sync_floor[p]
    if left <= 0:
        return None
    m = np.arange(1, sd.M + 1)
    tau = left // (m + p - 1)
    m, tau = m[tau >= 1], tau[tau >= 1]
    if not len(m):
        return None
    caps = np.zeros((len(m), p, len(sd.types)), dtype=np.int64)
    for j, (t, kappa) in enumerate(sd.types):
        inner = np.searchsorted(sd.time_n[(t, kappa, False, p > 1)], tau, "right") - 1
        end = np.searchsorted(sd.time_n[(t, kappa, True, p > 1)], tau, "right") - 1
        for i in range(p):
            f = p - i
            caps[:, i, j] = np.minimum(end if f == 1 else inner, sd.mem_n[(t, f, f == p, f == 1)])
    caps = np.clip(caps, 0, sd.L)
    best = caps.max(axis=2)
    ok = (best >= 1).all(axis=1) & (best.sum(axis=1) >= sd.L)
    return (m[ok], caps[ok]) if ok.any() else None


def least_cost_loop(sd: StageData, mu: np.ndarray, caps: np.ndarray) -> tuple:
    """``_least_cost`` as it was (1d3dc85): two-array indexing, then the unusable types."""
    nm, p, _ = caps.shape
    L = sd.L
    cost = np.full((nm, L + 1), np.inf)
    cost[:, 0] = 0.0
    held = np.arange(L + 1)[None, None, :]
    rows = np.arange(nm)[:, None, None]
    price = np.asarray(mu, float)[None, :, None]
    args = np.full((p, nm, L + 1), -1, dtype=np.int16)
    for i in range(p):
        cap = caps[:, i, :]
        cand = cost[rows, np.clip(held - cap[:, :, None], 0, L)] + price
        cand[cap < 1] = np.inf
        args[i] = cand.argmin(axis=1)
        cost = cand.min(axis=1)
    return cost[:, L], args


def types_loop(sd: StageData, caps: np.ndarray, args: np.ndarray, row: int) -> list[int]:
    """``cheapest_types`` as it was (1d3dc85), over ``least_cost_loop``'s choices."""
    p = caps.shape[1]
    out, held = [0] * p, sd.L
    for i in range(p - 1, -1, -1):
        out[i] = int(args[i, row, held])
        held = max(0, held - int(caps[row, i, out[i]]))
    return out


def same_choices(sd: StageData, mu: np.ndarray, caps: np.ndarray) -> bool:
    """``_least_cost`` gives the loop's least prices bit for bit, with and without choices,
    and the loop's cheapest types for every row of finite price."""
    cost, args = _least_cost(sd, mu, caps, keep=True)
    ref_cost, ref_args = least_cost_loop(sd, mu, caps)
    assert args is not None
    return (
        np.array_equal(cost, ref_cost)
        and np.array_equal(_least_cost(sd, mu, caps)[0], ref_cost)
        and np.array_equal(args.finite, np.isfinite(ref_cost))
        and cheapest_types(sd, caps, args, np.flatnonzero(np.isfinite(ref_cost))).tolist()
        == [types_loop(sd, caps, ref_args, r) for r in np.flatnonzero(np.isfinite(ref_cost))]
    )


def per_count_loop(sd: StageData, lam: int, mu: np.ndarray) -> np.ndarray:
    best = np.full(sd.M + 1, np.inf)
    for p in sd.depths:
        found = caps_loop(sd, p, lam)
        if found is None:
            continue
        m, caps = found
        uniq, inv = np.unique(caps.reshape(len(m), -1), axis=0, return_inverse=True)
        cost = least_cost_loop(sd, mu, uniq.reshape(len(uniq), p, -1))[0]
        np.minimum.at(best, m, cost[inv.ravel()])
    return np.minimum.accumulate(best[::-1])[::-1]


@pytest.fixture(scope="module")
def case() -> tuple[StageData, int]:
    inst = generate_custom(8, 8, "llama2-70b", 128, 4, 4, seed=0)
    sd = stage_data(inst, True)
    base = physical_bound_us(inst)
    assert sd is not None and base is not None
    return sd, base


def test_same_capacities_rows_and_prices(case: tuple[StageData, int]) -> None:
    sd, base = case
    rng = np.random.default_rng(0)
    seen = 0
    for lam in (int(base * 1.05), int(base * 1.2), int(base * 2)):
        for _ in range(2):
            mu = np.array([t for t, _ in sd.types], float) * rng.uniform(0.3, 2.0, len(sd.types))
            for p in sd.depths:
                old, new = caps_loop(sd, p, lam), _caps(sd, p, lam)
                assert (old is None) == (new is None)
                if old is None or new is None:
                    continue
                seen += 1
                assert np.array_equal(old[0], new[0]) and np.array_equal(old[1], new[1])
                for rows in (new[1], new[1][rng.permutation(len(new[1]))]):  # any order
                    want = np.unique(rows.reshape(len(rows), -1), axis=0, return_inverse=True)
                    got = unique_rows(rows)
                    assert np.array_equal(want[0], got[0])
                    assert np.array_equal(want[1].ravel(), got[1].ravel())
                assert same_choices(sd, mu, new[1])
            want_c = per_count_loop(sd, lam, mu)
            assert np.array_equal(least_per_count(sd, lam, mu), want_c)
            assert np.array_equal(least_per_count(sd, lam, mu, {}), want_c)
            supply = supply_value(sd, mu)
            assert priced_out(sd, lam, mu, supply, 8) == priced_out(sd, lam, mu, supply, 8, {})
    assert seen > 10


def test_same_credit(case: tuple[StageData, int]) -> None:
    sd, base = case
    rng = np.random.default_rng(1)
    nt = len(sd.types)
    seqs = [tuple(int(x) for x in rng.integers(0, nt, p)) for p in sd.depths for _ in range(6)]
    for lam in (int(base * 1.05), int(base * 1.5), int(base * 3)):
        want = [0] * len(seqs)
        for i, q in enumerate(seqs):
            found = caps_loop(sd, len(q), lam)
            if found is None:
                continue
            got = found[1][:, np.arange(len(q)), list(q)]
            ok = (got >= 1).all(axis=1) & (got.sum(axis=1) >= sd.L)
            want[i] = int(found[0][ok].max()) if ok.any() else 0
        assert _credit(sd, seqs, lam) == want
    assert any(_credit(sd, seqs, int(base * 3)))  # some sequence fits: the test sees values


def test_the_types_left_out_change_no_price_and_no_choice(case: tuple[StageData, int]) -> None:
    # _least_cost gathers only the types no other beats (at least the capacity, at most the
    # price): with prices tied (as the master's duals are: zeros, equal values), nearly tied
    # (one ulp apart) and apart, the least prices and the choices are the loop's, bit for bit
    sd, base = case
    rng = np.random.default_rng(2)
    nt = len(sd.types)
    tied = rng.choice([0.0, 1.0, 2.5], nt)
    near = tied + np.where(rng.random(nt) < 0.5, np.spacing(np.maximum(tied, 1.0)), 0.0)
    spread = rng.uniform(0.0, 3.0, nt)
    checked = 0
    for mu in (tied, near, spread, np.zeros(nt)):
        for lam in (int(base * 1.05), int(base * 1.5)):
            for p in sd.depths:
                found = _caps(sd, p, lam)
                if found is None:
                    continue
                assert same_choices(sd, mu, found[1])
                ref_cost, ref_args = least_cost_loop(sd, mu, found[1])
                m = found[0]
                _, picked = best_columns(sd, mu, m, found[1], 8)
                order = [int(r) for r in np.argsort(-(m - ref_cost))[:8]]
                want = [
                    (r, types_loop(sd, found[1], ref_args, r))
                    for r in order
                    if m[r] - ref_cost[r] > 1e-6 and np.isfinite(ref_cost[r])
                ]
                assert picked == want
                checked += 1
    assert checked > 10


def test_rows_sharing_their_first_positions_in_any_order(case: tuple[StageData, int]) -> None:
    # _least_cost prices rows that share their first positions' capacities as one state there
    # (consecutive rows), and only the layers held a row can still use: rows in m's order,
    # in unique_rows' order, shuffled, repeated, and rows that share a long prefix with a
    # changed last position give the loop's prices and choices
    sd, base = case
    rng = np.random.default_rng(3)
    shared = 0
    for lam in (int(base * 1.02), int(base * 1.3)):
        mu = rng.uniform(0.0, 3.0, len(sd.types))
        for p in sd.depths:
            found = _caps(sd, p, lam)
            if found is None:
                continue
            rows = found[1]
            uniq = unique_rows(rows)[0].reshape(-1, p, len(sd.types))
            tail = np.repeat(rows[:1], 3, axis=0)
            tail[1, -1] = np.maximum(tail[1, -1] - 1, 1)  # the same first p - 1 positions
            tail[2, -1] = tail[2, -1] + 2
            for caps in (rows, uniq, rows[rng.permutation(len(rows))], rows[[0, 0, -1, 0]], tail):
                assert same_choices(sd, mu, caps)
            shared += int((_Runs(rows).run[0] == 0).sum() > 1)
    assert shared > 2  # the rows share states: the test sees them


def maximal_loop(found: list[Counter]) -> list[Counter]:
    """``host_packings``' maximality filter as it was (4da5eec): each pair of packings."""
    return [
        a for a in found if not any(b != a and all(b[k] >= v for k, v in a.items()) for b in found)
    ]


@pytest.mark.parametrize(
    "speeds",
    [
        (1.0,) * 8,
        (0.25, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
        (0.25, 0.25, 0.5, 0.5, 1.0, 1.0, 1.0, 1.0),
        (0.5, 1.0, 1.0, 1.0, 1.0),
        (0.25, 0.5, 0.75),
        (1.0,),
    ],
)
def test_the_maximal_packings_are_the_pairwise_filter(speeds: tuple[float, ...]) -> None:
    # maximal keeps the packings no other covers, all pairs at once: the same packings in the
    # same order as the pair-by-pair loop, over every packing of a host, in any order
    rng = np.random.default_rng(4)
    dropped = 0
    for degrees in ((1, 2, 4, 8), (2, 4), (1, 3)):
        found = every_packing(speeds, degrees)
        for order in (found, [found[i] for i in rng.permutation(len(found))]):
            assert maximal(order) == maximal_loop(order)
        assert host_packings(speeds, degrees) == (maximal_loop(found) or [Counter()])
        dropped += len(found) - len(maximal(found))
    assert dropped > 0 or len(speeds) == 1  # some packings are covered: the test sees them
