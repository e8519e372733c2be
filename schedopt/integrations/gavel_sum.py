"""Gavel's throughput-sum policies (``scheduler/policies/max_sum_throughput.py``) as drop-ins:
the exact LP of ``schedopt.problems.timeshare.throughput_sum``, Gavel's names, constructors
and ``get_allocation`` signatures. Jobs alone only (Gavel's packed SLO variant is not here)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from schedopt.core.errors import InvalidInstanceError
from schedopt.problems.timeshare.throughput_sum import SumResult, solve_sum, violations

from .gavel_base import TimesharePolicy

Key = Hashable


class ThroughputNormalizedByCostSumWithPerfSLOs(TimesharePolicy):
    """max Σ_j Σ_w T_jw x_jw / c_w on Gavel's polytope, with ρ_j ≥ R_j / SLO_j for the jobs
    in ``SLOs``; when no allocation meets the SLOs, the optimum without them (as Gavel)."""

    name = "ThroughputNormalizedByCostSum_PerfSLOs"

    def get_allocation(
        self,
        throughputs: Mapping[Key, Mapping[str, Any]],
        scale_factors: Mapping[Key, int],
        cluster_spec: Mapping[str, int],
        instance_costs: Mapping[str, float] | None = None,
        SLOs: Mapping[Key, float] | None = None,
        num_steps_remaining: Mapping[Key, float] | None = None,
    ) -> dict[Key, dict[str, float]] | None:
        if not throughputs:
            return None
        keys = list(throughputs)
        types = sorted(next(iter(throughputs.values())))
        rates = _matrix(throughputs, keys, types)
        scale = np.array([float(scale_factors[k]) for k in keys])
        capacity = np.array([float(cluster_spec[w]) for w in types])
        costs = None
        if instance_costs is not None:
            costs = np.array([float(instance_costs[w]) for w in types])
            if not np.all(np.isfinite(costs) & (costs > 0)):
                raise InvalidInstanceError("instance_costs", "every cost must be positive")
        min_rate = None
        if SLOs:
            steps = num_steps_remaining or {}
            min_rate = np.array(
                [float(steps[k]) / float(SLOs[k]) if k in SLOs else np.nan for k in keys]
            )
        found = solve_sum(rates, scale, capacity, costs, min_rate, self.time_limit_s)
        self.last_result = found
        if found.x is None or violations(
            found.x, rates, scale, capacity, min_rate if found.slos_kept else None
        ):
            return self._failed(found, throughputs)
        out = {
            k: {w: float(found.x[i, t]) for t, w in enumerate(types)} for i, k in enumerate(keys)
        }
        self._previous = out
        return out


class ThroughputNormalizedByCostSumWithPerf(ThroughputNormalizedByCostSumWithPerfSLOs):
    """``ThroughputNormalizedByCostSumWithPerf``: no SLOs."""

    name = "ThroughputNormalizedByCostSum_Perf"

    def get_allocation(self, throughputs, scale_factors, cluster_spec, instance_costs):
        return super().get_allocation(throughputs, scale_factors, cluster_spec, instance_costs)


class ThroughputSumWithPerf(ThroughputNormalizedByCostSumWithPerfSLOs):
    """``ThroughputSumWithPerf``: every cost 1, no SLOs."""

    name = "ThroughputSumWithPerf"

    def get_allocation(self, throughputs, scale_factors, cluster_spec):
        return super().get_allocation(throughputs, scale_factors, cluster_spec)


def _matrix(
    throughputs: Mapping[Key, Mapping[str, Any]], keys: list[Key], types: list[str]
) -> np.ndarray:
    try:
        rates = np.array([[float(throughputs[k][w]) for w in types] for k in keys])
    except (KeyError, TypeError, ValueError) as err:
        raise InvalidInstanceError(
            "throughputs", f"a rate for every type of {types}: {err}"
        ) from err
    if not np.all(np.isfinite(rates) & (rates >= 0)):
        raise InvalidInstanceError("throughputs", "every rate must be finite and ≥ 0")
    return rates


__all__ = [
    "SumResult",
    "ThroughputNormalizedByCostSumWithPerf",
    "ThroughputNormalizedByCostSumWithPerfSLOs",
    "ThroughputSumWithPerf",
]
