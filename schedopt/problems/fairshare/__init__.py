"""Long-term fair share (Astraea, TPDS'22; Gavel, OSDI'20). See ``formulations/fairshare.md``."""

from functools import partial

from schedopt.core.registry import MethodKind, MethodSpec, ProblemSpec, by_name
from schedopt.core.result import ObjectiveTerm, Sense
from schedopt.tuning.store import load_tuned

from . import decomp, exact, heuristics, plot, render
from .data import build_data, finish_reserve_s
from .explain import UncountedUnit, uncounted_units
from .gavel import GavelAllocation, JobFractions, solve_gavel_lp
from .generate import SIZES, generate, generate_custom
from .heuristics import AstraeaParams, GavelRoundParams
from .instance import FairnessUnit, FairshareInstance, Job, Previous, Tenant
from .rounds import RoundRecord, apply_round, run_rounds
from .solution import Allocation, FairshareSolution
from .units import NotCounted
from .validate import evaluate, metrics, validate

SPEC = ProblemSpec(
    name="fairshare",
    description="one allocation round: maximise the worst tenant's (or job's) long-term "
    "GPU-time fairness, then effective throughput, then few restarts",
    instance_type=FairshareInstance,
    solution_type=FairshareSolution,
    terms=(
        ObjectiveTerm("minimum LTGF (tenant or job)", Sense.MAXIMIZE, "share"),
        ObjectiveTerm("effective throughput", Sense.MAXIMIZE, "jobs"),
        ObjectiveTerm("restart + fragmentation cost", Sense.MINIMIZE, "s"),
    ),
    validate=validate,
    evaluate=evaluate,
    metrics=metrics,
    generate=generate,
    sizes=tuple(SIZES),
    estimate_variables=lambda inst: build_data(inst, check_size=False).num_variables,
    finish_reserve_s=finish_reserve_s,
    tuned_params=partial(load_tuned, "fairshare"),
    export_model=exact.export,
    formulate=exact.prepare,
    plot=plot.to_svg,
    render=render.render,
    info=render.info,
    methods=by_name(
        *exact.METHODS,
        MethodSpec(
            "heuristic:astraea",
            MethodKind.HEURISTIC,
            heuristics.solve_astraea,
            "Astraea water-filling: lowest long-term share first",
            params=AstraeaParams,
        ),
        MethodSpec(
            "heuristic:gavel-round",
            MethodKind.HEURISTIC,
            heuristics.solve_gavel_round,
            "Gavel's max-min LP over time fractions, rounded to whole GPUs and repaired",
            params=GavelRoundParams,
        ),
        *decomp.METHODS,
    ),
    auto_exact="milp:highs",
    auto_route=decomp.auto_route,
    auto_heuristics=heuristics.HEURISTICS,
)

__all__ = [
    "SPEC",
    "Allocation",
    "AstraeaParams",
    "FairnessUnit",
    "FairshareInstance",
    "FairshareSolution",
    "GavelAllocation",
    "GavelRoundParams",
    "Job",
    "JobFractions",
    "NotCounted",
    "Previous",
    "RoundRecord",
    "Tenant",
    "UncountedUnit",
    "apply_round",
    "generate",
    "generate_custom",
    "run_rounds",
    "solve_gavel_lp",
    "uncounted_units",
]
