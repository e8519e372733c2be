"""MoE expert placement and replication on the GPU topology (serverless MoE deployment;
DeepSeek-style expert load balancing). See ``formulations/moe_placement.md``."""

from functools import partial

from schedopt.core.registry import MethodKind, MethodSpec, ProblemSpec, by_name
from schedopt.tuning.store import load_tuned

from . import decompose, exact, heuristics, plot, posterior, render, scenario
from .data import build_data, finish_reserve_s
from .generate import SHAPES, SIZES, ModelShape, from_counts, generate, generate_custom
from .heuristics import EplbParams, LocalSearchParams
from .instance import Expert, Layer, LayerWithin, MoePlacementInstance, Objective, Weights
from .scenario import ScenarioParams
from .solution import ExpertPlan, LayerPlan, MoePlacementSolution, Replica
from .validate import TERMS, evaluate, metrics, validate

SPEC = ProblemSpec(
    name="moe_placement",
    description="place and replicate the experts of an MoE model on GPUs: balance each "
    "layer's GPU load, then all-to-all traffic, GPUs used and experts moved",
    instance_type=MoePlacementInstance,
    solution_type=MoePlacementSolution,
    terms=TERMS,
    validate=validate,
    evaluate=evaluate,
    metrics=metrics,
    generate=generate,
    sizes=tuple(SIZES),
    estimate_variables=lambda inst: build_data(inst, check_size=False).num_variables,
    finish_reserve_s=finish_reserve_s,
    tuned_params=partial(load_tuned, "moe_placement"),
    export_model=exact.export,
    formulate=exact.prepare,
    plot=plot.to_svg,
    info=render.info,
    methods=by_name(
        *exact.METHODS,
        MethodSpec(
            "milp:scenario",  # HiGHS on the model layer (scenario.build_scenario_model)
            MethodKind.HEURISTIC,
            scenario.solve,
            "scenario MILP (HiGHS): expected or CVaR layer time over posterior popularity "
            "scenarios (params: scenarios, risk, alpha)",
            supports_hint=True,
        ),
        MethodSpec(
            "decomp:layer",  # a decomposition proves no optimum: registered as a heuristic
            MethodKind.HEURISTIC,
            decompose.solve_decomposed,
            "decomposition by layer: replica budgets from the bound, each layer in bins, "
            "joined onto the GPUs; then each layer's model (HiGHS) with its memory fixed; "
            "gap against the whole instance's bound (auto past 20,000 variables)",
            supports_hint=True,
            # auto runs it first (it makes its own EPLB plan; the heuristics before it only
            # took its time)
            decomposition=True,
        ),
        MethodSpec(
            "heuristic:eplb",
            MethodKind.HEURISTIC,
            heuristics.solve_eplb,
            "DeepSeek EPLB: greedy replication, then (hierarchical) balanced LPT packing",
            params=EplbParams,
        ),
        MethodSpec(
            "heuristic:local-search",
            MethodKind.HEURISTIC,
            heuristics.solve_local_search,
            "EPLB improved by share shifts, moves, swaps and added replicas",
            params=LocalSearchParams,
        ),
    ),
    auto_exact="milp:highs",
    auto_route=decompose.auto_route,
    auto_heuristics=heuristics.HEURISTICS,
)

__all__ = [
    "SHAPES",
    "SPEC",
    "EplbParams",
    "Expert",
    "ExpertPlan",
    "Layer",
    "LayerPlan",
    "LayerWithin",
    "LocalSearchParams",
    "ModelShape",
    "MoePlacementInstance",
    "MoePlacementSolution",
    "Objective",
    "Replica",
    "ScenarioParams",
    "Weights",
    "from_counts",
    "generate",
    "generate_custom",
    "posterior",
]
