"""Gavel's policy interface, answered by schedopt's exact models (``timeshare``).

Drop-in for Gavel's simulator and physical scheduler (stanford-futuredata/gavel,
``scheduler/policies``): the classes here take and return the same dicts as Gavel's, carry
Gavel's policy names (Gavel's scheduler reads them: it builds pairs only when ``'Packing'`` is
in the name, and picks the ``get_allocation`` arguments by the name's start), take Gavel's
constructor (the solver first), and nothing of Gavel is imported. Job ids are whatever
hashable keys the caller uses (Gavel's ``JobIdPair``): a key is a *pair* of co-located jobs
when it has ``is_pair()`` true (Gavel) or is a 2-tuple, and its members are then
``singletons()`` (Gavel) or the tuple's items.

    policy = MaxMinFairnessPerf()
    allocation = policy.get_allocation(throughputs, scale_factors, priority_weights,
                                       cluster_spec)

Every returned allocation is the exact optimum of formulations/timeshare.md and passed its
independent validator; a round the solver cannot prove optimal in ``time_limit_s`` raises
:class:`RoundFailed`, or gives the last allocation with ``on_failure="previous"`` (never a
silently worse answer); bad input raises ``InvalidInstanceError`` naming the job and field.
Jobs that fit nowhere get no time.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from schedopt.problems.timeshare import Policy
from schedopt.problems.timeshare.data import build_data

from .gavel_allox import AlloX, AlloXPolicy
from .gavel_base import RoundFailed, TimesharePolicy, members
from .gavel_fifo import (
    FIFO,
    FIFOPacking,
    FIFOPerf,
    FIFOPolicy,
    FIFOPolicyWithPacking,
    FIFOPolicyWithPerf,
    Gandiva,
    GandivaPolicy,
    Isolated,
    IsolatedPolicy,
)
from .gavel_strategy_proof import MaxMinFairnessStrategyProofPerf
from .gavel_sum import (
    ThroughputNormalizedByCostSumWithPackingSLOs,
    ThroughputNormalizedByCostSumWithPerf,
    ThroughputNormalizedByCostSumWithPerfSLOs,
    ThroughputSumWithPerf,
)
from .gavel_waterfill import (
    MaxMinFairnessWaterFilling,
    MaxMinFairnessWaterFillingPacking,
    MaxMinFairnessWaterFillingPerf,
)

Key = Hashable


class MaxMinFairnessPerf(TimesharePolicy):
    """``MaxMinFairnessPolicyWithPerf`` (and packed when pair keys are given; Gavel's scheduler
    gives pairs only to :class:`MaxMinFairnessPacking`)."""

    policy = Policy.MAX_MIN_FAIRNESS_PERF
    name = "MaxMinFairness_Perf"

    def get_allocation(self, throughputs, scale_factors, priority_weights, cluster_spec):
        return self._solve(throughputs, scale_factors, priority_weights, cluster_spec)


class MaxMinFairnessPacking(MaxMinFairnessPerf):
    """``MaxMinFairnessPolicyWithPacking``: the name turns on Gavel's job pairs."""

    name = "MaxMinFairness_Packing"


class MaxMinFairness(TimesharePolicy):
    """``MaxMinFairnessPolicy``: throughput-blind (time only where the job can run)."""

    policy = Policy.MAX_MIN_FAIRNESS
    name = "MaxMinFairness"

    def get_allocation(self, throughputs, scale_factors, priority_weights, cluster_spec):
        return self._solve(throughputs, scale_factors, priority_weights, cluster_spec)


class MinTotalDuration(TimesharePolicy):
    """``MinTotalDurationPolicyWithPerf``: the exact minimum makespan (Gavel bisects to 5%)."""

    policy = Policy.MIN_MAKESPAN
    name = "MinTotalDuration_Perf"

    def get_allocation(self, throughputs, scale_factors, num_steps_remaining, cluster_spec):
        return self._solve(
            self._rates(throughputs),
            scale_factors,
            None,
            cluster_spec,
            remaining=num_steps_remaining,
        )


class MinTotalDurationPacking(MinTotalDuration):
    """``MinTotalDurationPolicyWithPacking``: the name turns on Gavel's job pairs."""

    name = "MinTotalDuration_Packing"


class _AtV100:
    """Gavel's throughput-blind makespan and finish-time fairness: every type taken at the
    job's V100 rate (``min_total_duration.py``, ``finish_time_fairness.py``)."""

    def _rates(self, throughputs):
        return as_v100(throughputs)


class MinTotalDurationBlind(_AtV100, MinTotalDuration):
    """``MinTotalDurationPolicy``."""

    name = "MinTotalDuration"


class FinishTimeFairness(TimesharePolicy):
    """``FinishTimeFairnessPolicyWithPerf``, with Gavel's state across rounds: each job's
    progress in seconds of its isolated throughput (``_cumulative_isolated_time``)."""

    policy = Policy.FINISH_TIME_FAIRNESS
    name = "FinishTimeFairness_Perf"

    def __init__(self, solver: str | None = None, **kwargs: Any):
        super().__init__(solver, **kwargs)
        self._isolated_time: dict[Key, float] = {}
        self._last_steps: dict[Key, float] = {}
        self._last_isolated: dict[Key, float] = {}

    def get_allocation(
        self,
        throughputs,
        scale_factors,
        priority_weights,
        times_since_start,
        num_steps_remaining,
        cluster_spec,
    ):
        for k, steps in num_steps_remaining.items():
            if k in self._last_steps and self._last_isolated.get(k):
                done = self._last_steps[k] - steps
                self._isolated_time[k] = (
                    self._isolated_time.get(k, 0.0) + done / (self._last_isolated[k])
                )
        out = self._solve(
            self._rates(throughputs),
            scale_factors,
            priority_weights,
            cluster_spec,
            remaining=num_steps_remaining,
            since_start=times_since_start,
            isolated_time={k: self._isolated_time.get(k, 0.0) for k in num_steps_remaining},
        )
        self._last_steps = dict(num_steps_remaining)
        # Gavel converts progress to isolated seconds with last round's isolated throughput
        self._last_isolated = {}
        if self.last_instance is not None:
            data = build_data(self.last_instance)
            key_of = {v: k for k, v in self._ids.items()}
            self._last_isolated = {
                key_of[jid]: float(r)
                for jid, r in zip(data.ids, data.isolated_throughput(), strict=True)
            }
        return out


class FinishTimeFairnessPacking(FinishTimeFairness):
    """``FinishTimeFairnessPolicyWithPacking``: the name turns on Gavel's job pairs."""

    name = "FinishTimeFairness_Packing"


class FinishTimeFairnessBlind(_AtV100, FinishTimeFairness):
    """``FinishTimeFairnessPolicy``."""

    name = "FinishTimeFairness"


def as_v100(throughputs: Mapping[Key, Mapping[str, Any]]) -> dict[Key, dict[str, Any]]:
    """Every type at the job's ``'v100'`` rate: Gavel's throughput-blind finish-time fairness
    and makespan (which hard-code ``'v100'``; a job without that type keeps its rates)."""
    return {
        k: (dict.fromkeys(r, r["v100"]) if members(k) is None and "v100" in r else dict(r))
        for k, r in throughputs.items()
    }


#: Gavel's class names, for a user who swaps the import only.
MaxMinFairnessPolicy = MaxMinFairness
MaxMinFairnessPolicyWithPerf = MaxMinFairnessPerf
MaxMinFairnessPolicyWithPacking = MaxMinFairnessPacking
MaxMinFairnessStrategyProofPolicyWithPerf = MaxMinFairnessStrategyProofPerf
MaxMinFairnessWaterFillingPolicy = MaxMinFairnessWaterFilling
MaxMinFairnessWaterFillingPolicyWithPerf = MaxMinFairnessWaterFillingPerf
MaxMinFairnessWaterFillingPolicyWithPacking = MaxMinFairnessWaterFillingPacking
MinTotalDurationPolicy = MinTotalDurationBlind
MinTotalDurationPolicyWithPerf = MinTotalDuration
MinTotalDurationPolicyWithPacking = MinTotalDurationPacking
FinishTimeFairnessPolicy = FinishTimeFairnessBlind
FinishTimeFairnessPolicyWithPerf = FinishTimeFairness
FinishTimeFairnessPolicyWithPacking = FinishTimeFairnessPacking

__all__ = [
    "FIFO",
    "AlloX",
    "AlloXPolicy",
    "FIFOPacking",
    "FIFOPerf",
    "FIFOPolicy",
    "FIFOPolicyWithPacking",
    "FIFOPolicyWithPerf",
    "FinishTimeFairness",
    "FinishTimeFairnessBlind",
    "FinishTimeFairnessPacking",
    "FinishTimeFairnessPolicy",
    "FinishTimeFairnessPolicyWithPacking",
    "FinishTimeFairnessPolicyWithPerf",
    "Gandiva",
    "GandivaPolicy",
    "Isolated",
    "IsolatedPolicy",
    "MaxMinFairness",
    "MaxMinFairnessPacking",
    "MaxMinFairnessPerf",
    "MaxMinFairnessPolicy",
    "MaxMinFairnessPolicyWithPacking",
    "MaxMinFairnessPolicyWithPerf",
    "MaxMinFairnessStrategyProofPerf",
    "MaxMinFairnessStrategyProofPolicyWithPerf",
    "MaxMinFairnessWaterFilling",
    "MaxMinFairnessWaterFillingPacking",
    "MaxMinFairnessWaterFillingPerf",
    "MaxMinFairnessWaterFillingPolicy",
    "MaxMinFairnessWaterFillingPolicyWithPacking",
    "MaxMinFairnessWaterFillingPolicyWithPerf",
    "MinTotalDuration",
    "MinTotalDurationBlind",
    "MinTotalDurationPacking",
    "MinTotalDurationPolicy",
    "MinTotalDurationPolicyWithPacking",
    "MinTotalDurationPolicyWithPerf",
    "RoundFailed",
    "ThroughputNormalizedByCostSumWithPackingSLOs",
    "ThroughputNormalizedByCostSumWithPerf",
    "ThroughputNormalizedByCostSumWithPerfSLOs",
    "ThroughputSumWithPerf",
    "members",
]
