"""Gavel's strategy-proof policy through its interface (issue #19): Gavel's name, constructor,
``get_allocation`` signature and return values, and, when Gavel's source (``GAVEL_SRC``) and
cvxpy are there, the same objective, discounts and allocation as Gavel's own class."""

from __future__ import annotations

import math
import os
import sys

import numpy as np
import pytest

from schedopt.core.status import Status
from schedopt.integrations.gavel import (
    MaxMinFairnessStrategyProofPerf,
    MaxMinFairnessStrategyProofPolicyWithPerf,
    RoundFailed,
)
from schedopt.problems.timeshare.validate import validate


def _round(seed: int, n: int = 6):
    rng = np.random.default_rng(seed)
    thr = {
        i: {
            "k80": float(rng.uniform(0.2, 2)),
            "p100": float(rng.uniform(1, 5)),
            "v100": float(rng.uniform(2, 10)),
        }
        for i in range(n)
    }
    sf = {i: int(rng.choice([1, 1, 2])) for i in thr}
    pw = {i: float(rng.choice([1.0, 2.0])) for i in thr}
    return thr, sf, pw, {"k80": 4, "p100": 3, "v100": 2}


def _rates(allocation, thr) -> np.ndarray:
    return np.array([sum(x * thr[k][w] for w, x in allocation[k].items()) for k in sorted(thr)])


def test_gavel_names_constructor_and_return_values() -> None:
    assert MaxMinFairnessStrategyProofPolicyWithPerf is MaxMinFairnessStrategyProofPerf
    policy = MaxMinFairnessStrategyProofPerf("ECOS")
    assert policy.name == "MaxMinFairness_Perf"  # Gavel's
    thr, sf, pw, cluster = _round(0)
    thr[(0, 1)] = {w: [1.0, 1.0] for w in cluster}  # a pair key: Gavel's policy has no packing
    allocation, factors = policy.get_allocation(thr, sf, pw, cluster)
    assert set(allocation) == set(thr)
    assert all(x == 0.0 for x in allocation[(0, 1)].values())
    assert isinstance(factors, np.ndarray) and factors.shape == (6,)
    assert np.all((factors > 0) & (factors <= 1))
    result = policy.last_result
    assert result.status is Status.OPTIMAL
    assert result.stats["gap"] <= result.stats["tolerance"] == 1e-6
    assert not validate(policy.last_instance, result.solution)
    # each job's row is the Nash welfare row times its discount
    nash = policy.get_allocation(thr, sf, pw, cluster, recurse_deeper=False)
    rates = _rates({k: allocation[k] for k in sf}, {k: thr[k] for k in sf})
    assert rates == pytest.approx(np.array([nash[k] for k in sorted(sf)]) * factors, rel=1e-9)
    assert policy.get_allocation({}, {}, {}, cluster) is None


def test_a_lone_job_keeps_everything_and_failures_are_not_silent() -> None:
    """One job: no other job to discount against, so d = 1 (Gavel's raises a TypeError)."""
    policy = MaxMinFairnessStrategyProofPerf()
    allocation, factors = policy.get_allocation(
        {7: {"v100": 2.0, "k80": 1.0}}, {7: 1}, {7: 1.0}, {"v100": 1, "k80": 1}
    )
    assert factors.tolist() == [1.0]
    assert sum(allocation[7].values()) == pytest.approx(1.0)
    thr = {i: {"v100": 1.0 + i, "k80": 0.5} for i in range(200)}
    ones = {i: 1 for i in thr}
    with pytest.raises(RoundFailed):
        MaxMinFairnessStrategyProofPerf(time_limit_s=1e-6).get_allocation(
            thr, ones, {i: 1.0 for i in thr}, {"v100": 4, "k80": 4}
        )
    with pytest.raises(ValueError, match="tol"):
        MaxMinFairnessStrategyProofPerf(tol=0.0)


def _gavel():
    src = os.environ.get("GAVEL_SRC")
    if not src or not os.path.isdir(os.path.join(src, "scheduler", "policies")):
        pytest.skip("GAVEL_SRC (a checkout of stanford-futuredata/gavel) is not set")
    pytest.importorskip("cvxpy")
    pytest.importorskip("ecos")
    sys.path.insert(0, os.path.join(src, "scheduler"))
    from policies import max_min_fairness_strategy_proof  # type: ignore[import-not-found]

    return max_min_fairness_strategy_proof.MaxMinFairnessStrategyProofPolicyWithPerf


@pytest.mark.parametrize("seed", range(3))
def test_the_same_as_gavels_cvxpy_policy(seed: int) -> None:
    """Gavel (cvxpy + ECOS, to ECOS's 1e-8) against the outer approximation: the same Nash
    welfare (Gavel's objective, the geometric mean) to 1e-6, and the same discounted rates; the
    discounts and the undiscounted rates themselves only to about the square root of the gap
    (formulations/timeshare.md, "Strategy proof")."""
    gavel = _gavel()
    thr, sf, pw, cluster = _round(seed, n=5 + seed)
    g_alloc, g_factors = gavel("ECOS").get_allocation(thr, sf, pw, cluster)
    g_nash = gavel("ECOS").get_allocation(thr, sf, pw, cluster, recurse_deeper=False)
    policy = MaxMinFairnessStrategyProofPerf("ECOS")
    s_alloc, s_factors = policy.get_allocation(thr, sf, pw, cluster)
    s_nash = policy.get_allocation(thr, sf, pw, cluster, recurse_deeper=False)
    # Gavel's objective: the geometric mean of s_j ρ_j / (π_j p_j), p_j the equal split's rate
    total = sum(cluster.values())
    p = {k: sum(thr[k][w] * n / total for w, n in cluster.items()) for k in thr}

    def geo(rho):
        return math.exp(np.mean([math.log(sf[k] * rho[k] / (pw[k] * p[k])) for k in thr]))

    assert geo(s_nash) == pytest.approx(geo(g_nash), rel=1e-6)
    assert policy.last_result.objective == pytest.approx(geo(g_nash), rel=1e-6)
    assert _rates(s_alloc, thr) == pytest.approx(_rates(g_alloc, thr), rel=1e-5)
    assert s_factors == pytest.approx(g_factors, rel=1e-2)
