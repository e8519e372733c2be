"""Gavel's throughput-sum policies (issue #19): the exact LP against scipy's ``linprog`` on a
dense LP written from Gavel's ``max_sum_throughput.py``, SLOs, Gavel's fallback, Gavel's API."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from schedopt.core.errors import InvalidInstanceError
from schedopt.integrations.gavel import (
    RoundFailed,
    ThroughputNormalizedByCostSumWithPackingSLOs,
    ThroughputNormalizedByCostSumWithPerf,
    ThroughputNormalizedByCostSumWithPerfSLOs,
    ThroughputSumWithPerf,
)

TYPES = ("k80", "p100", "v100")


def _reference(T, s, N, c, min_rate=None) -> float | None:
    """max Σ T/c · x, Σ_w x ≤ 1, Σ_j s x ≤ N, ρ_j ≥ min_rate_j; None if infeasible."""
    m, n = T.shape
    A = [np.kron(np.eye(m), np.ones(n)), np.kron(s[None, :], np.eye(n))]
    b = [np.ones(m), N]
    if min_rate is not None:
        for j in np.flatnonzero(~np.isnan(min_rate)):
            row = np.zeros(m * n)
            row[j * n : (j + 1) * n] = -T[j]
            A.append(row[None, :])
            b.append([-min_rate[j]])
    res = linprog(-(T / c).reshape(-1), A_ub=np.vstack(A), b_ub=np.concatenate(b), bounds=(0, 1))
    return None if res.status == 2 else -res.fun


def _round(seed: int):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 8))
    T = rng.uniform(0.5, 10, (m, 3)) * (rng.random((m, 3)) > 0.2)
    s = rng.choice([1, 1, 2, 4], m).astype(float)
    N = rng.integers(1, 6, 3).astype(float)
    c = rng.uniform(0.5, 3.0, 3)
    thr = {j: dict(zip(TYPES, map(float, T[j]), strict=True)) for j in range(m)}
    sf = {j: int(s[j]) for j in range(m)}
    spec = dict(zip(TYPES, map(int, N), strict=True))
    costs = dict(zip(TYPES, map(float, c), strict=True))
    return T, s, N, c, thr, sf, spec, costs


def _value(out, T, c) -> float:
    x = np.array([[out[j][w] for w in TYPES] for j in range(len(T))])
    return float(((T / c) * x).sum())


@pytest.mark.parametrize("seed", range(12))
def test_throughput_sum_and_cost_normalised_match_the_reference(seed: int) -> None:
    T, s, N, c, thr, sf, spec, costs = _round(seed)
    out = ThroughputSumWithPerf("ECOS").get_allocation(thr, sf, spec)
    assert _value(out, T, np.ones(3)) == pytest.approx(_reference(T, s, N, np.ones(3)), rel=1e-7)
    out = ThroughputNormalizedByCostSumWithPerf().get_allocation(thr, sf, spec, costs)
    assert _value(out, T, c) == pytest.approx(_reference(T, s, N, c), rel=1e-7)


@pytest.mark.parametrize("seed", range(12))
def test_slos_match_the_reference_or_fall_back_as_gavel(seed: int) -> None:
    T, s, N, c, thr, sf, spec, costs = _round(seed)
    rng = np.random.default_rng(100 + seed)
    remaining = {j: float(rng.uniform(100, 1000)) for j in thr}
    slos = {j: float(rng.uniform(100, 400)) for j in thr if rng.random() < 0.5}
    min_rate = np.array([remaining[j] / slos[j] if j in slos else np.nan for j in thr])
    policy = ThroughputNormalizedByCostSumWithPerfSLOs()
    out = policy.get_allocation(thr, sf, spec, costs, SLOs=slos, num_steps_remaining=remaining)
    ref = _reference(T, s, N, c, min_rate)
    if ref is None:  # no allocation meets the SLOs: Gavel solves without them
        assert not policy.last_result.slos_kept
        ref = _reference(T, s, N, c)
    else:
        assert policy.last_result.slos_kept
        rho = np.array([sum(out[j][w] * thr[j][w] for w in TYPES) for j in thr])
        met = ~np.isnan(min_rate)
        assert np.all(rho[met] >= min_rate[met] * (1 - 1e-7))
    assert _value(out, T, c) == pytest.approx(ref, rel=1e-7)


def test_names_inputs_and_failures() -> None:
    assert ThroughputSumWithPerf().name == "ThroughputSumWithPerf"
    assert ThroughputNormalizedByCostSumWithPerf().name == "ThroughputNormalizedByCostSum_Perf"
    assert ThroughputSumWithPerf().get_allocation({}, {}, {"v100": 1}) is None
    with pytest.raises(InvalidInstanceError, match="throughputs"):
        ThroughputSumWithPerf().get_allocation({0: {"v100": float("nan")}}, {0: 1}, {"v100": 1})
    with pytest.raises(InvalidInstanceError, match="instance_costs"):
        ThroughputNormalizedByCostSumWithPerf().get_allocation(
            {0: {"v100": 1.0}}, {0: 1}, {"v100": 1}, {"v100": 0.0}
        )
    *_, thr, sf, spec, _ = _round(0)
    with pytest.raises(RoundFailed):
        ThroughputSumWithPerf(time_limit_s=0.0).get_allocation(thr, sf, spec)


@pytest.mark.parametrize("seed", range(6))
def test_packed_slos_match_the_reference_over_the_pairs(seed: int) -> None:
    """``...WithPackingSLOs``: pair keys share GPUs; the value is the dense LP of
    tests/timeshare/reference.py over jobs alone and every pair (C4 included)."""
    from tests.timeshare import reference

    rng = np.random.default_rng(200 + seed)
    n = 4
    T = rng.uniform(0.5, 10, (n, 3))
    thr = {j: dict(zip(TYPES, map(float, T[j]), strict=True)) for j in range(n)}
    for a in range(n):
        for b in range(a + 1, n):
            thr[(a, b)] = {w: [0.7 * thr[a][w], 0.6 * thr[b][w]] for w in TYPES}
    sf = {j: 1 for j in range(n)}
    spec = {"k80": 1, "p100": 1, "v100": 1}
    costs = {"k80": 0.5, "p100": 1.5, "v100": 3.0}
    remaining = {j: 1000.0 for j in range(n)}
    slos = {0: float(rng.uniform(100, 2000))}
    policy = ThroughputNormalizedByCostSumWithPackingSLOs()
    out = policy.get_allocation(thr, sf, spec, costs, SLOs=slos, num_steps_remaining=remaining)
    inst = policy.last_instance
    A, b, rho, nv = reference._polytope(inst)
    types = sorted(inst.workers)
    c = np.array([costs[types[v % len(types)]] for v in range(nv)])
    A_slo = -rho[:1]  # job 0 is the first job of the instance (the drop-in keeps the order)
    res = linprog(
        -(rho / c).sum(axis=0),
        A_ub=np.vstack([A, A_slo]),
        b_ub=np.concatenate([b, [-remaining[0] / slos[0]]]),
        bounds=(0, 1),
    )
    kept = res.status == 0
    if not kept:
        res = linprog(-(rho / c).sum(axis=0), A_ub=A, b_ub=b, bounds=(0, 1))
    assert policy.last_result.stats["slos_kept"] == float(kept)
    value = 0.0
    for k, row in out.items():
        for w, x in row.items():
            rates = thr[k][w] if isinstance(k, tuple) else [thr[k][w]]
            value += x * sum(rates) / costs[w]
    assert value == pytest.approx(-res.fun, rel=1e-7)
    assert policy.name == "ThroughputNormalizedByCostSum_PackingSLOs"
