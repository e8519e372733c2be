"""Execution-group co-scheduling for RL post-training (Weave/RollMux, RollArt, RollPacker).
See ``formulations/cosched.md``."""

from functools import partial

from schedopt.core.registry import MethodKind, MethodSpec, ProblemSpec, by_name
from schedopt.tuning.store import load_tuned

from . import decomp, exact, heuristics, plot, render
from .data import estimate_columns
from .efficiency import with_efficiency
from .generate import SIZES, generate, generate_custom
from .heuristics import BaselineParams, PackingParams
from .instance import CoschedInstance, Job, Phase, PhaseOption, Pool
from .policy import POLICY
from .solution import CoschedSolution, Group, JobPlan, PhasePlan
from .validate import TERMS, evaluate, finish_reserve_s, metrics, validate

SPEC = ProblemSpec(
    name="cosched",
    description="co-execution groups for RL post-training: hosts per group, members, phase "
    "pools and an explicit periodic schedule meeting every SLO at least cost",
    instance_type=CoschedInstance,
    solution_type=CoschedSolution,
    terms=TERMS,
    validate=validate,
    evaluate=evaluate,
    metrics=metrics,
    generate=generate,
    sizes=tuple(SIZES),
    estimate_variables=estimate_columns,
    finish_reserve_s=finish_reserve_s,
    tuned_params=partial(load_tuned, "cosched"),
    policy=POLICY,
    export_model=exact.export,
    formulate=exact.prepare,
    render=render.render,
    info=render.info,
    plot=plot.to_svg,
    methods=by_name(
        *exact.METHODS,
        MethodSpec(
            "colgen",
            # no proof of optimality (its bound is over a relaxed group space), so it is held
            # to the heuristics' promises; auto still runs it as its exact stage (auto_route)
            MethodKind.HEURISTIC,
            with_efficiency(decomp.solve_colgen),
            "groups as columns: restricted master over scheduled groups, Farley bound over "
            "the relaxed group space (formulation)",
            supports_hint=True,
            # auto runs it first, with the whole limit (it makes its own packing plan and
            # starts from it; the heuristics before it only took its time: 11.1% against
            # colgen's 6.3% at 656 GPUs x 40 jobs, 10 s, #17)
            decomposition=True,
        ),
        MethodSpec(
            "heuristic:packing",
            MethodKind.HEURISTIC,
            with_efficiency(heuristics.solve_packing),
            "complementary first-fit packing into shared groups, then local search",
            params=PackingParams,
        ),
        MethodSpec(
            "heuristic:disaggregated",
            MethodKind.HEURISTIC,
            with_efficiency(heuristics.solve_disaggregated),
            "RollMux baseline: each job its own group, cheapest plan meeting its SLO",
            params=BaselineParams,
        ),
        MethodSpec(
            "heuristic:colocated",
            MethodKind.HEURISTIC,
            with_efficiency(heuristics.solve_colocated),
            "RollMux baseline: each job its own group, phases time-sharing one pool",
            params=BaselineParams,
        ),
    ),
    auto_exact="cpsat",
    auto_route=decomp.route,
    auto_heuristics=heuristics.HEURISTICS,
)

__all__ = [
    "SPEC",
    "BaselineParams",
    "CoschedInstance",
    "CoschedSolution",
    "Group",
    "Job",
    "JobPlan",
    "PackingParams",
    "Phase",
    "PhaseOption",
    "PhasePlan",
    "Pool",
    "generate",
    "generate_custom",
]
