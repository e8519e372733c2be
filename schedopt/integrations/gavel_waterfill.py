"""Gavel's water-filling max-min fairness (``max_min_fairness_water_filling.py``) as drop-ins:
the exact leximin allocation of ``schedopt.problems.timeshare.waterfill``, with Gavel's names,
constructor and ``get_allocation`` signature, jobs alone or with Gavel's pairs, and Gavel's
priority reweighting by entity (``priority_reweighting_policies``, ``entity_weights``,
``entity_to_job_mapping``: ``schedopt.problems.timeshare.waterfill_entities``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schedopt.core.errors import InvalidInstanceError
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.problems.timeshare import Policy, TimeshareSolution
from schedopt.problems.timeshare.codec import shares_of
from schedopt.problems.timeshare.data import build_data
from schedopt.problems.timeshare.exact import all_columns
from schedopt.problems.timeshare.validate import validate
from schedopt.problems.timeshare.waterfill import water_fill
from schedopt.problems.timeshare.waterfill_entities import water_fill_entities

from .gavel_base import TimesharePolicy
from .gavel_entities import check_rules, entities


@dataclass(frozen=True)
class WaterFillResult:
    """What a water-filling round gives (``last_result``)."""

    status: Status
    solution: TimeshareSolution | None
    explanation: str | None = None
    stats: dict[str, float] = field(default_factory=dict)


class MaxMinFairnessWaterFillingPerf(TimesharePolicy):
    """``MaxMinFairnessWaterFillingPolicyWithPerf``: lexicographic max-min of the weights of
    :class:`~schedopt.integrations.gavel.MaxMinFairnessPerf` (every job raised until it is a
    bottleneck, then the rest)."""

    policy = Policy.MAX_MIN_FAIRNESS_PERF
    name = "MaxMinFairnessWaterFilling_Perf"
    #: share GPUs in the pairs given (Gavel's packed variant only)
    packs = False

    def __init__(self, priority_reweighting_policies: Any = None, **kwargs: Any):
        #: Gavel's entity → ``'fairness'`` or ``'fifo'`` (None: no reweighting)
        self.priority_reweighting_policies = check_rules(priority_reweighting_policies)
        super().__init__(**kwargs)
        self._entity_args: tuple[Any, Any] = (None, None)

    def get_allocation(
        self,
        throughputs,
        scale_factors,
        priority_weights,
        cluster_spec,
        entity_weights=None,
        entity_to_job_mapping=None,
        verbose=False,
        return_effective_throughputs=False,
    ):
        if return_effective_throughputs:
            raise InvalidInstanceError(
                "return_effective_throughputs", "not supported: read last_result"
            )
        # Gavel ignores the entity arguments without reweighting rules; so do we
        self._entity_args = (entity_weights, entity_to_job_mapping)
        # pair keys, if any, get no time unless this is the packed variant
        return self._solve(throughputs, scale_factors, priority_weights, cluster_spec)

    def _run_round(self, docs, pairs, workers) -> WaterFillResult:
        deadline = Deadline.after(self.time_limit_s)
        inst = self._instance(docs, pairs if self.packs else {}, workers)
        self.last_instance = inst
        data = build_data(inst, deadline)
        columns = all_columns(data)
        rules = self.priority_reweighting_policies
        if rules is None:
            found = water_fill(data, deadline.remaining, columns)
        else:
            row = inst.job_index
            row_of = {k: row[i] for k, i in self._ids.items() if i in docs}
            groups = entities(rules, *self._entity_args, row_of)
            found = water_fill_entities(data, groups, deadline.remaining, columns)
        stats = {"water_filling_lps": float(found.lps)}
        if found.x is None:
            return WaterFillResult(found.status, None, "water filling ran out of time", stats)
        solution = shares_of(data, columns, found.x)
        broken = validate(inst, solution)
        if broken:
            return WaterFillResult(Status.NO_SOLUTION, None, f"validator: {broken[0]}", stats)
        return WaterFillResult(found.status, solution, None, stats)


class MaxMinFairnessWaterFillingPacking(MaxMinFairnessWaterFillingPerf):
    """``MaxMinFairnessWaterFillingPolicyWithPacking``: the leximin over jobs alone and the
    pairs Gavel gives (pair keys)."""

    name = "MaxMinFairnessWaterFilling_Packing"
    packs = True


class MaxMinFairnessWaterFilling(MaxMinFairnessWaterFillingPerf):
    """``MaxMinFairnessWaterFillingPolicy``: throughput-blind (time only where the job can
    run, as :class:`~schedopt.integrations.gavel.MaxMinFairness`)."""

    policy = Policy.MAX_MIN_FAIRNESS
    name = "MaxMinFairnessWaterFilling"
