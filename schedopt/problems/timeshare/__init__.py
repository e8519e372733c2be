"""Time shares on heterogeneous GPUs: Gavel's policies (OSDI'20) as exact LPs.
See ``formulations/timeshare.md``."""

from functools import partial

from schedopt.core.registry import MethodKind, MethodSpec, ProblemSpec, by_name
from schedopt.core.result import ObjectiveTerm, Sense
from schedopt.tuning.store import load_tuned

from . import exact, heuristics, plot, render
from .generate import SIZES, generate, generate_custom
from .heuristics import IsolatedParams
from .instance import Colocation, Job, Pair, Policy, TimeshareInstance, implied_pairs
from .solution import Share, TimeshareSolution
from .validate import evaluate, metrics, validate

SPEC = ProblemSpec(
    name="timeshare",
    description="one round of a Gavel policy: the fraction of time each job (or pair of jobs) "
    "runs on each GPU type; max-min fairness, finish-time fairness or makespan, exactly",
    instance_type=TimeshareInstance,
    solution_type=TimeshareSolution,
    terms=(
        ObjectiveTerm(
            "policy value (min weighted throughput, 1/makespan, 1/max FTF)", Sense.MAXIMIZE, ""
        ),
        ObjectiveTerm("mean weighted throughput", Sense.MAXIMIZE, ""),
    ),
    validate=validate,
    evaluate=evaluate,
    metrics=metrics,
    generate=generate,
    sizes=tuple(SIZES),
    estimate_variables=lambda inst: (
        len(inst.jobs) * len(inst.workers)
        + (len(inst.pairs) + implied_pairs(inst)) * len(inst.workers)
    ),
    tuned_params=partial(load_tuned, "timeshare"),
    export_model=exact.export,
    formulate=exact.prepare,
    render=render.render,
    info=render.info,
    plot=plot.to_svg,
    methods=by_name(
        *exact.METHODS,
        MethodSpec(
            "heuristic:isolated",
            MethodKind.HEURISTIC,
            heuristics.solve_isolated,
            "Gavel's isolated split: every type shared equally, scaled by the job's GPUs "
            "(tunable: leaning towards each job's fastest types)",
            params=IsolatedParams,
        ),
    ),
    auto_exact="milp:highs",
    auto_heuristics=heuristics.HEURISTICS,
)

__all__ = [
    "SPEC",
    "Colocation",
    "IsolatedParams",
    "Job",
    "Pair",
    "Policy",
    "Share",
    "TimeshareInstance",
    "TimeshareSolution",
    "generate",
    "generate_custom",
]
