"""Co-scheduling's exact methods: the model of model.py on every back-end, with its hooks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from schedopt.core.errors import ModelTooLargeError
from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.model import Formulated, Hooks, LexResult, Model, exact_methods
from schedopt.model.export import first_level_exporter
from schedopt.model.method import build_seconds

from .assemble import assemble, raw_from_solution
from .codec import decode, encode
from .data import MAX_NONZEROS, JobData, ModelData, aggregate_bound, build_data
from .efficiency import BASELINE_S, EXACT_SHARE, baseline_metrics
from .explain import explain_infeasible
from .instance import CoschedInstance
from .model import CoschedModel, build_model
from .validate import validate


class CoschedHooks(Hooks):
    def __init__(self, inst: CoschedInstance, cm: CoschedModel, aggregate: float | None):
        self.inst, self.cm, self.aggregate = inst, cm, aggregate

    def first_bound(self, method: str, bound: float | None) -> float | None:
        # Both are lower bounds on L1; a solver stopped early often has a weaker one than the
        # formulation's aggregate bound (benchmarks/RESULTS.md, 64 GPUs × 8 jobs).
        if bound is None or self.aggregate is None:
            return bound if bound is not None else self.aggregate
        return max(bound, self.aggregate)

    def reject(self, index: int, values: np.ndarray) -> str | None:
        # C11's big-M rows hold within a solver's integrality tolerance times M (formulation,
        # "How the periodic schedule is modelled"): the decoded schedule is re-checked, and a
        # point whose schedule breaks is never returned.
        broken = validate(self.inst, assemble(self.inst, decode(self.cm, values)))
        return None if not broken else f"its schedule breaks {broken[0].constraint_id}"


def feasible_together(data: ModelData, jobs: Sequence[JobData], time_limit_s: float) -> bool | None:
    """Can ``jobs`` share the cluster with every SLO met? None: unknown in the time."""
    cm = build_model(data, jobs)
    from schedopt.model.emit_cpsat import CpsatSession  # on first use

    session = CpsatSession(cm.model)
    session.set_level(cm.model.levels[0])
    run = session.run(time_limit_s, SolveOptions(time_limit_s=max(time_limit_s, 0.01)))
    if run.status is Status.INFEASIBLE:
        return False
    return True if run.status.has_solution else None


def prepare(
    inst: CoschedInstance, options: SolveOptions, deadline: Deadline
) -> Formulated | Outcome:
    data = build_data(inst)
    why = data.too_big_for(build_seconds(options, deadline))
    if why is not None:
        # The aggregate bound still proves something about L1 (formulation).
        return Outcome(Status.NO_SOLUTION, bound=aggregate_bound(data), explanation=why)
    cm = build_model(data, deadline=deadline)
    hint = None
    if options.hint is not None:
        raw = raw_from_solution(inst, options.hint)
        hint = None if raw is None else encode(cm, raw)

    def solution(values: np.ndarray, lex: LexResult):
        return assemble(inst, decode(cm, values))

    def metrics() -> dict[str, float]:
        return {}

    def finish(outcome: Outcome, method: str) -> Outcome:
        if outcome.solution is None:
            return outcome
        budget = min(BASELINE_S, EXACT_SHARE * options.time_limit_s)
        extra = baseline_metrics(inst, outcome.solution, budget)
        return replace(outcome, metrics={**outcome.metrics, **extra})

    return Formulated(
        cm.model,
        CoschedHooks(inst, cm, aggregate_bound(data)),
        solution,
        hint=hint,
        explain_infeasible=lambda: explain_infeasible(data, deadline, feasible_together),
        metrics=metrics,
        finish=finish,
        stats={"nonzeros_estimate": float(data.nonzeros)},
    )


METHODS = exact_methods(prepare)


def _export_model(inst: CoschedInstance) -> Model:
    """The model ``schedopt export`` writes, refused above the size no back-end is given (the
    refusal of ``prepare`` without a time limit): 1,000 jobs meant 10¹⁰ nonzeros."""
    data = build_data(inst)
    if data.nonzeros > MAX_NONZEROS:
        raise ModelTooLargeError(
            "jobs",
            f"the exact model would have about {data.nonzeros:,} nonzeros (limit "
            f"{MAX_NONZEROS:,}); use method='heuristic:packing'",
        )
    return build_model(data).model


#: ``schedopt export``: the first level of the model every back-end solves.
export = first_level_exporter(
    _export_model,
    describe="L1 of 3, minimise the hourly cost of the hosts the groups hold ($/h)",
    notes=(
        "L2 (weighted step times) and L3 (GB moved: cross-pool syncs, state moved off "
        "current pools) are solved after L1 is fixed at its optimum; they are not in this file",
    ),
)
