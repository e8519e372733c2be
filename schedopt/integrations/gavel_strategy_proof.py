"""Gavel's strategy-proof max-min fairness (``max_min_fairness_strategy_proof.py``,
``MaxMinFairnessStrategyProofPolicyWithPerf``) as a drop-in: the Nash welfare allocation and
the discounts of ``schedopt.problems.timeshare.nash``, solved to a proven gap, with Gavel's
name, constructor and ``get_allocation`` signature and return values.

Gavel's throughput-blind ``MaxMinFairnessStrategyProofPolicy`` is not offered: its
constructor names a class its module does not import (``MaxMinFairnessPolicyWithPerf``), so it
raises ``NameError`` in Gavel, and it would not be strategy proof anyway (it delegates to the
max-min policy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.problems.timeshare import Policy, TimeshareSolution
from schedopt.problems.timeshare.codec import shares_of
from schedopt.problems.timeshare.data import build_data
from schedopt.problems.timeshare.nash import DEFAULT_TOL, NashProgram, strategy_proof
from schedopt.problems.timeshare.validate import job_throughputs, validate, weighted_throughputs

from .gavel_base import Key, TimesharePolicy

#: The independent evaluation of the Nash welfare may differ from the solver's by this much
#: (relative, on the geometric mean) before the round counts as a bug.
AGREE = 1e-9


@dataclass(frozen=True)
class StrategyProofResult:
    """What a strategy-proof round gives (``last_result``): ``objective`` is the geometric
    mean of the weighted throughputs a_j ρ_j of the Nash welfare allocation (Gavel's cvxpy
    objective), re-evaluated by the validator's code; ``bound`` its proven upper bound."""

    status: Status
    solution: TimeshareSolution | None
    objective: float | None = None
    bound: float | None = None
    #: job id → discount d_i; job id → ρ_i of the Nash welfare allocation (undiscounted).
    discounts: dict[str, float] = field(default_factory=dict)
    throughputs: dict[str, float] = field(default_factory=dict)
    explanation: str | None = None
    stats: dict[str, float] = field(default_factory=dict)


class MaxMinFairnessStrategyProofPerf(TimesharePolicy):
    """``MaxMinFairnessStrategyProofPolicyWithPerf``: ``get_allocation`` returns
    ``(allocation, discount_factors)`` (the factors in the order of the sorted job ids, as
    Gavel's), or with ``recurse_deeper=False`` each job's throughput under the Nash welfare
    allocation. ``tol``: the relative gap on the geometric mean at which each program counts
    as solved (``last_result.stats``)."""

    policy = Policy.MAX_MIN_FAIRNESS_PERF
    name = "MaxMinFairness_Perf"  # Gavel's (the scheduler reads it)

    def __init__(self, solver: str | None = None, *, tol: float = DEFAULT_TOL, **kwargs: Any):
        if not (0 < tol < 1):
            raise ValueError(f"tol must be in (0, 1), not {tol!r}")
        super().__init__(solver, **kwargs)
        self.tol = tol
        self._recurse = True
        self._last_discounts: dict[Key, float] = {}

    def get_allocation(
        self,
        unflattened_throughputs,
        scale_factors,
        unflattened_priority_weights,
        cluster_spec,
        recurse_deeper=True,
    ):
        self._recurse = bool(recurse_deeper)
        singles = {k: v for k, v in unflattened_throughputs.items() if _single(k)}
        out = self._solve(singles, scale_factors, unflattened_priority_weights, cluster_spec)
        if out is None:
            return None
        for k, row in unflattened_throughputs.items():
            if k not in singles:
                out[k] = dict.fromkeys(row, 0.0)
        result = self.last_result
        key_of = {v: k for k, v in self._ids.items()}
        if not self._recurse:
            rho = {key_of[i]: r for i, r in result.throughputs.items()}
            return {k: float(rho.get(k, 0.0)) for k in singles}
        if result.solution is not None and result.status is Status.OPTIMAL:
            self._last_discounts = {key_of[i]: d for i, d in result.discounts.items()}
        order = sorted(singles)
        factors = np.array([self._last_discounts.get(k, 0.0) for k in order])
        return out, factors

    def _run_round(self, docs, pairs, workers) -> StrategyProofResult:
        deadline = Deadline.after(self.time_limit_s)
        inst = self._instance(docs, {}, workers)
        self.last_instance = inst
        data = build_data(inst, deadline, pairs=False)
        ids = data.ids
        if not self._recurse:
            found = NashProgram(data).solve(deadline.remaining, self.tol)
            if found.x is None:
                return StrategyProofResult(found.status, None, explanation="out of time")
            welfare_x, x, discounts = found.x, found.x, None
            welfare, status, stats = found, found.status, {"nash_lps": float(found.lps)}
        else:
            mech = strategy_proof(data, deadline.remaining, self.tol)
            stats = {
                "nash_lps": float(mech.lps),
                "discount_log_error": mech.discount_log_error,
                "rate_log_error": mech.rate_log_error,
            }
            if mech.x is None or mech.discounts is None or mech.welfare.x is None:
                return StrategyProofResult(mech.status, None, explanation="out of time")
            welfare_x, x, discounts = mech.welfare.x, mech.x, mech.discounts
            welfare, status = mech.welfare, mech.status
        stats.update({"gap": welfare.gap, "tolerance": self.tol})
        nash = shares_of(data, data.singles, welfare_x)
        solution = shares_of(data, data.singles, x)
        broken = validate(inst, solution) + validate(inst, nash)
        if broken:
            return StrategyProofResult(Status.NO_SOLUTION, None, explanation=f"{broken[0]}")
        # the objective from the validator's code, apart from the solver's arithmetic
        rho = job_throughputs(inst, nash)
        weighted = list(weighted_throughputs(inst, rho).values())
        objective = math.exp(sum(math.log(u) for u in weighted) / len(weighted))
        if abs(objective / welfare.geo_mean - 1.0) > AGREE:
            why = f"validator's Nash welfare {objective!r} != the solver's {welfare.geo_mean!r}"
            return StrategyProofResult(Status.NO_SOLUTION, None, explanation=why)
        return StrategyProofResult(
            status,
            solution,
            objective=objective,
            bound=welfare.geo_bound,
            discounts={} if discounts is None else dict(zip(ids, discounts.tolist(), strict=False)),
            throughputs=rho,
            explanation=None if status is Status.OPTIMAL else "the gap did not close in time",
            stats=stats,
        )


def _single(key: Any) -> bool:
    """Gavel's strategy-proof policy has no packing variant: pair keys get no time."""
    is_pair = getattr(key, "is_pair", None)
    if callable(is_pair):
        return not is_pair()
    return not (isinstance(key, tuple) and len(key) == 2)
