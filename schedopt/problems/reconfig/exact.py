"""Reconfiguration's exact methods: the model of model.py on every back-end.

Every level is integer-valued (µs, pipelines, GPUs), so the plain lexicographic loop applies;
the hooks only report L1's bound in seconds and say where the proof holds: over the template
plan space (formulations/reconfig.md).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.model import Formulated, Hooks, LexResult, exact_methods
from schedopt.model.export import first_level_exporter

from .codec import decode, encode
from .data import MAX_COLUMNS, MAX_SLOW_PER_HOST, ModelData, build_data, data_of
from .heuristics import (
    KeepShrinkParams,
    MegatronParams,
    OobleckParams,
    keep_shrink,
    megatron,
    oobleck,
)
from .instance import ReconfigInstance
from .model import ReconfigModel, build_model
from .plan import Raw, first_level_us, raw_of, realise
from .solution import ReconfigSolution
from .validate import physical_bound_us, validate

LIMITS = (
    "one TP degree and at most one slow TP group per new pipeline, each template with its "
    f"best layer partition, at most {MAX_SLOW_PER_HOST} slow GPUs of a host used, its fastest; "
    "formulations/reconfig.md"
)
#: ``stats["proven_over"]``: the plan space over which OPTIMAL, INFEASIBLE or the bound hold.
TEMPLATE_SPACE = "template plan space"
PHYSICAL_SPACE = "physical plan space"
PLAN_SPACE = f"optimal over the {TEMPLATE_SPACE} ({LIMITS})"
INFEASIBLE = (
    f"infeasible over the {TEMPLATE_SPACE} ({LIMITS}): no template's stages fit GPU memory "
    "(C4) on the surviving GPUs' TP groups (C2), or the groups cannot hold one pipeline"
)
NO_PHYSICAL_PLAN = (
    "no plan exists at all (over the physical plan space: no stage of one layer fits memory at "
    "an allowed TP degree, or no pipeline of at most max_stages stages holds the model state; "
    "formulations/reconfig.md, P1-P2)"
)


class ReconfigHooks(Hooks):
    def first_bound(self, method: str, bound: float | None) -> float | None:
        # L1 is solved in µs; the instance's objective is in seconds.
        return None if bound is None else bound / 1e6


def refuse(data: ModelData) -> Outcome | None:
    if not data.templates and not data.kept:
        return finish(data.instance, Outcome(Status.INFEASIBLE, explanation=INFEASIBLE, bound=None))
    if data.num_columns > MAX_COLUMNS:
        return Outcome(
            Status.NO_SOLUTION,
            explanation=f"the model would have {data.num_columns} columns (at most "
            f"{MAX_COLUMNS}); use a heuristic or raise max_stages less",
        )
    return None


def warm_start(data: ModelData, given: object, deadline: Deadline | None = None) -> Raw | None:
    """The caller's plan when it is a valid plan in the plan space, else the best of the
    heuristics' plans: the model's start, and (C12) the first level no optimum exceeds. Measured on
    instances/reconfig/example.json, milp:highs, 10 s: gap 22% without it, proven optimal in
    5.7 s with it."""
    # only a hint that is a plan of this instance: C12 cuts every plan worse than the start,
    # so the first level of a plan that breaks it (too few micro-batches, a failed GPU) once
    # cut every plan and made a false INFEASIBLE
    if isinstance(given, ReconfigSolution) and not validate(data.instance, given):
        raw = raw_of(data, given)
        if raw is not None:
            return raw
    best: tuple[int, Raw] | None = None
    for raw in (
        oobleck(data, OobleckParams(), deadline),
        megatron(data, MegatronParams()),
        keep_shrink(data, KeepShrinkParams()),
    ):
        if raw is None or not raw.pipelines or realise(data, raw) is None:
            continue
        value = first_level_us(data, raw)
        if best is None or value < best[0]:
            best = (value, raw)
    return None if best is None else best[1]


def finish(inst: ReconfigInstance, outcome: Outcome) -> Outcome:
    """Say over which plan space a status or bound holds (#16 item 7), and give the proven
    bound over the physical plan space beside it (#17 item 3)."""
    stats: dict[str, object] = {**outcome.stats, "plan_space": "templates"}
    explanation = outcome.explanation
    # with a solution, the validator's metrics carry the physical bound and gap (it costs a
    # pass over the cluster's links: 0.4 s on 16,384 GPUs, not spent twice)
    physical = physical_bound_us(inst) if outcome.solution is None else None
    if physical is not None:
        stats["physical_bound_s"] = physical / 1e6
    if outcome.status is Status.INFEASIBLE:
        if physical is None:  # P1-P2: no plan at all, whatever its shape
            stats["proven_over"] = PHYSICAL_SPACE
            explanation = NO_PHYSICAL_PLAN
        else:
            stats["proven_over"] = TEMPLATE_SPACE
            explanation = (
                f"{INFEASIBLE}; a plan outside it (TP differing between stages, several slow "
                f"GPUs in a group) may exist: over the {PHYSICAL_SPACE} no plan is faster than "
                f"{physical / 1e6:.6g} s"
            )
    elif outcome.status is Status.OPTIMAL:
        stats["proven_over"] = TEMPLATE_SPACE
        explanation = PLAN_SPACE
    elif outcome.bound is not None:  # a bound of the same space, not of every plan
        stats["proven_over"] = TEMPLATE_SPACE
        where = f"the bound holds over the {TEMPLATE_SPACE} ({LIMITS})"
        explanation = f"{explanation}; {where}" if explanation else where
    if outcome.status.has_solution:
        where = f"metrics physical_bound_s and physical_gap: over the {PHYSICAL_SPACE}"
        explanation = f"{explanation}; {where}" if explanation else where
    return dataclasses.replace(outcome, stats=stats, explanation=explanation)


def prepare(
    inst: ReconfigInstance,
    options: SolveOptions,
    deadline: Deadline,
    lb_us: int | None = None,
    data: ModelData | None = None,
) -> Formulated | Outcome:
    """``lb_us``: a proven lower bound of L1 (C13); ``data``: the instance's data, built."""
    data = data or data_of(inst, deadline)
    early = refuse(data)
    if early is not None:
        return early
    start = warm_start(data, options.hint, deadline)
    ub = None if start is None else first_level_us(data, start)
    rm: ReconfigModel = build_model(data, deadline, ub_us=ub, lb_us=lb_us)
    hint = None if start is None else encode(rm, start)

    def solution(values: np.ndarray, lex: LexResult) -> ReconfigSolution:
        sol = realise(data, decode(rm, values))
        assert sol is not None, "a model point the packings cannot realise"
        return sol

    return Formulated(
        rm.model,
        ReconfigHooks(),
        solution,
        hint=hint,
        explain_infeasible=lambda: INFEASIBLE,
        stats={"templates": float(len(data.templates)), "kept_kinds": float(len(data.kept))},
        finish=lambda outcome, method: finish(inst, outcome),
    )


METHODS = exact_methods(prepare)

#: ``schedopt export``: the first level of the model every back-end solves.
export = first_level_exporter(
    lambda inst: build_model(build_data(inst)).model,
    describe="L1 of 3, minimise the iteration time (+ amortised recovery), µs",
    notes=("L2 (pipelines rebuilt) and L3 (GPUs held) follow with L1 fixed",),
    unit_scale=1e6,  # the model's L1 is in whole µs; schedopt reports seconds
)
