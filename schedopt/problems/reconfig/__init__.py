"""Hybrid-parallel reconfiguration after GPU failures and slowdowns (ResiHP, Oobleck, ReCycle,
Varuna, Megatron-LM). See ``formulations/reconfig.md``."""

from functools import partial

from schedopt.core.registry import MethodKind, MethodSpec, ProblemSpec, by_name
from schedopt.tuning.store import load_tuned

from . import decomp, exact, heuristics, plot, render
from .data import build_data
from .generate import MODELS, SIZES, generate, generate_custom, model_config
from .heuristics import KeepShrinkParams, MegatronParams, OobleckParams
from .instance import ModelConfig, Pipeline, ReconfigInstance, SlowGpu, Stage
from .policy import POLICY
from .solution import ReconfigSolution
from .validate import TERMS, evaluate, finish_reserve_s, metrics, validate

SPEC = ProblemSpec(
    name="reconfig",
    description="re-plan a hybrid-parallel training job (pipelines × stages × TP) after "
    "fail-stop and fail-slow GPUs: iteration time, then state moved, then GPUs held",
    instance_type=ReconfigInstance,
    solution_type=ReconfigSolution,
    terms=TERMS,
    validate=validate,
    evaluate=evaluate,
    metrics=metrics,
    finish_reserve_s=finish_reserve_s,
    generate=generate,
    sizes=tuple(SIZES),
    estimate_variables=lambda inst: build_data(inst).num_columns,
    tuned_params=partial(load_tuned, "reconfig"),
    policy=POLICY,
    export_model=exact.export,
    formulate=exact.prepare,
    methods=by_name(
        *exact.METHODS,
        MethodSpec(
            decomp.NAME,
            MethodKind.EXACT,
            decomp.solve,
            "fixed-time decomposition of the template model: bisection on the pipe time, "
            "packing MILPs and a rate LP bound (large clusters)",
            supports_hint=True,
        ),
        MethodSpec(
            decomp.PHYSICAL,
            MethodKind.EXACT,
            decomp.solve_physical,
            "decomp:rate's template plan widened to the physical plan space (TP differing "
            "between stages, slow GPUs as they are), with the stage-position bound over it",
            supports_hint=True,
            # deterministic mode: decomp:rate's plan, then budgets of work (budgets.py)
        ),
        MethodSpec(
            "heuristic:megatron",
            MethodKind.HEURISTIC,
            heuristics.solve_megatron,
            "Megatron rule: TP = a host, PP = fewest stages that fit, DP = what is left",
            params=MegatronParams,
        ),
        MethodSpec(
            "heuristic:oobleck",
            MethodKind.HEURISTIC,
            heuristics.solve_oobleck,
            "Oobleck-style templates instantiated over the surviving groups, batch redistributed",
            params=OobleckParams,
        ),
        MethodSpec(
            "heuristic:keep_shrink",
            MethodKind.HEURISTIC,
            heuristics.solve_keep_shrink,
            "keep the current pipelines that lost no GPU, drop the rest",
            params=KeepShrinkParams,
        ),
    ),
    auto_exact="milp:highs",
    auto_route=decomp.route,
    plot=plot.to_svg,
    render=render.render,
    info=render.info,
    auto_heuristics=heuristics.HEURISTICS,
)

__all__ = [
    "MODELS",
    "SPEC",
    "KeepShrinkParams",
    "MegatronParams",
    "ModelConfig",
    "OobleckParams",
    "Pipeline",
    "ReconfigInstance",
    "ReconfigSolution",
    "SlowGpu",
    "Stage",
    "generate",
    "generate_custom",
    "model_config",
]
