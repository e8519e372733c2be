"""Gavel's throughput-sum policies (``scheduler/policies/max_sum_throughput.py``) as drop-ins:
the exact LP of ``schedopt.problems.timeshare.throughput_sum``, Gavel's names, constructors
and ``get_allocation`` signatures. Jobs alone only (Gavel's packed SLO variant is not here)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from schedopt.core.errors import InvalidInstanceError
from schedopt.core.status import Status
from schedopt.problems.timeshare import Policy
from schedopt.problems.timeshare.codec import shares_of
from schedopt.problems.timeshare.data import build_data
from schedopt.problems.timeshare.exact import all_columns
from schedopt.problems.timeshare.throughput_sum import (
    SumResult,
    solve_packed,
    solve_sum,
    violations,
)
from schedopt.problems.timeshare.validate import job_throughputs, validate

from .gavel_base import TimesharePolicy
from .gavel_waterfill import WaterFillResult as RoundResult

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


class ThroughputNormalizedByCostSumWithPackingSLOs(TimesharePolicy):
    """``ThroughputNormalizedByCostSumWithPackingSLOs``: the same LP over jobs alone and the
    pairs Gavel gives (pair keys), with C4 (a gang only on a type with room for it)."""

    policy = Policy.MAX_MIN_FAIRNESS_PERF  # the round's data only: pairs taken, no weights
    name = "ThroughputNormalizedByCostSum_PackingSLOs"

    def get_allocation(
        self,
        throughputs,
        scale_factors,
        cluster_spec,
        instance_costs=None,
        SLOs=None,
        num_steps_remaining=None,
    ):
        steps = num_steps_remaining or {}
        self._min_rate = {k: float(steps[k]) / float(t) for k, t in (SLOs or {}).items()}
        self._costs = instance_costs
        return self._solve(throughputs, scale_factors, None, cluster_spec)

    def _run_round(self, docs, pairs, workers) -> RoundResult:
        inst = self._instance(docs, pairs, workers)
        self.last_instance = inst
        data = build_data(inst)
        columns = all_columns(data)
        types = list(data.types)
        costs = np.ones(len(types))
        if self._costs is not None:
            costs = np.array([float(self._costs[w]) for w in types])
            if not np.all(np.isfinite(costs) & (costs > 0)):
                raise InvalidInstanceError("instance_costs", "every cost must be positive")
        by_id = {self._ids[k]: r for k, r in self._min_rate.items() if k in self._ids}
        min_rate = np.array([by_id.get(i, np.nan) for i in data.ids]) if by_id else None
        found = solve_packed(
            columns, data.num_jobs, data.capacity, costs, min_rate, self.time_limit_s
        )
        stats = {"slos_kept": float(found.slos_kept)}
        if found.x is None:
            return RoundResult(found.status, None, "the LP ran out of time", stats)
        solution = shares_of(data, columns, found.x)
        broken = [str(v) for v in validate(inst, solution)]
        if found.slos_kept and by_id:
            rho = job_throughputs(inst, solution)
            broken += [f"SLO of {i}" for i, r in by_id.items() if rho[i] < r * (1 - 1e-6)]
        if broken:
            return RoundResult(Status.NO_SOLUTION, None, f"validator: {broken[0]}", stats)
        return RoundResult(Status.OPTIMAL, solution, None, stats)


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
    "ThroughputNormalizedByCostSumWithPackingSLOs",
    "ThroughputNormalizedByCostSumWithPerf",
    "ThroughputNormalizedByCostSumWithPerfSLOs",
    "ThroughputSumWithPerf",
]
