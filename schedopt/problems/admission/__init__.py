"""Deadline admission (Chronus, SoCC'21; UniSched, TC'24). See ``formulations/admission.md``."""

from functools import partial

from schedopt.core.registry import MethodKind, MethodSpec, ProblemSpec, by_name
from schedopt.tuning.store import load_tuned

from . import decomp, exact, heuristics, lns, lpdecomp, plot, render
from .data import estimate_num_variables, finish_reserve_s
from .generate import SIZES, generate, generate_custom
from .heuristics import EdfParams, SlackParams
from .instance import AdmissionInstance, DeadlineTier, Job, JobKind
from .policy import POLICY
from .solution import AdmissionSolution, JobPlan, Rejection, RejectReason
from .validate import TERMS, evaluate, metrics, validate

SPEC = ProblemSpec(
    name="admission",
    description="admit SLO jobs only if every admitted deadline can be met; "
    "share the rest with best-effort jobs",
    instance_type=AdmissionInstance,
    solution_type=AdmissionSolution,
    terms=TERMS,
    validate=validate,
    evaluate=evaluate,
    metrics=metrics,
    generate=generate,
    sizes=tuple(SIZES),
    estimate_variables=estimate_num_variables,
    finish_reserve_s=finish_reserve_s,
    tuned_params=partial(load_tuned, "admission"),
    policy=POLICY,
    export_model=exact.export,
    formulate=exact.prepare,
    render=render.render,
    methods=by_name(
        *exact.METHODS,
        MethodSpec(
            "heuristic:edf",
            MethodKind.HEURISTIC,
            heuristics.solve_edf,
            "EDF with minimum satisfactory share (ElasticFlow)",
            params=EdfParams,
        ),
        MethodSpec(
            "heuristic:slack",
            MethodKind.HEURISTIC,
            heuristics.solve_slack,
            "slack-ordered greedy, latest slots first",
            params=SlackParams,
        ),
        MethodSpec(
            "heuristic:lns",
            MethodKind.HEURISTIC,
            lns.solve,
            "large-neighbourhood search on the CP-SAT model, from the best heuristic",
            supports_hint=True,
            params=lns.LnsParams,
        ),
        *decomp.METHODS,
        lpdecomp.METHOD,
    ),
    auto_exact="cpsat",
    auto_route=decomp.auto_route,
    plot=plot.to_svg,
    auto_heuristics=heuristics.HEURISTICS,
)

__all__ = [
    "SPEC",
    "AdmissionInstance",
    "AdmissionSolution",
    "DeadlineTier",
    "EdfParams",
    "Job",
    "JobKind",
    "JobPlan",
    "RejectReason",
    "Rejection",
    "SlackParams",
    "generate",
    "generate_custom",
]
