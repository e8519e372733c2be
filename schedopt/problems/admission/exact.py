"""Admission's exact methods: the model of model.py on every back-end, with its hooks."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, DeadlineReached
from schedopt.model import Formulated, Hooks, LexResult, exact_methods
from schedopt.model.export import first_level_exporter
from schedopt.model.method import build_seconds, refused

from .assemble import assemble, raw_from_solution
from .codec import decode, encode
from .data import JobData, ModelData, build_data
from .explain import explain_infeasible
from .heuristics import refill_best_effort
from .instance import AdmissionInstance
from .model import AdmissionModel, build_model
from .tier_bound import fallback_bound

#: Share of the time left that B0's LP may take (it takes milliseconds at 1,000 jobs).
B0_SHARE = 0.1


class AdmissionHooks(Hooks):
    # The full LP relaxation is what proves L3 once L2 is fixed (measured: small instance L3
    # proven in 0.3 s instead of not at all in 5 s).
    cpsat_linearization_level = 2

    def __init__(self, am: AdmissionModel, bound: float | None = None):
        self.am = am
        self.bound = bound  # B0 or B0k (tier_bound.py), or None

    def first_bound(self, method: str, bound: float | None) -> float | None:
        # The solver's bound, or B0 where B0 is tighter or the solver has none (CP-SAT stopped
        # before its root LP, on a busy machine: #16).
        if self.bound is None or (bound is not None and bound <= self.bound):
            return bound
        return self.bound

    def hint_first_level(self, method: str) -> bool:
        # The hint is a warm start as an *incumbent*, not as search guidance for L1: hinted,
        # single-worker CP-SAT kept the heuristic's value on every contended 256-GPU benchmark
        # instance, where the unhinted search reached within 1% of the bound (RESULTS.md). So
        # CP-SAT's L1 searches freely and the hint stands in wherever it is better.
        return method != "cpsat"

    def after_level(self, index: int, values: np.ndarray) -> np.ndarray:
        if index:
            return values
        # L2 starts from L1's solution with best-effort jobs re-planned greedily: a far better
        # start than the level-1 solution, whose best-effort part is arbitrary.
        raw = refill_best_effort(self.am.data, decode(self.am, values))
        return encode(self.am, raw)


def feasible_together(data: ModelData, jobs: Sequence[JobData], time_limit_s: float) -> bool | None:
    """Can all of ``jobs`` (as admitted SLO jobs) keep a guarantee together? None: unknown."""
    am = build_model(data, jobs)
    with am.model.rows("explain") as rows:
        for job in jobs:
            rows.add([am.z[job.index,]], [1.0], 1.0, 1.0)
    from schedopt.model.emit_cpsat import CpsatSession  # on first use

    session = CpsatSession(am.model)
    session.set_level(am.model.levels[0])
    run = session.run(time_limit_s, SolveOptions(time_limit_s=max(time_limit_s, 0.01)))
    if run.status is Status.INFEASIBLE:
        return False
    return True if run.status.has_solution else None


def prepare(
    inst: AdmissionInstance, options: SolveOptions, deadline: Deadline
) -> Formulated | Outcome:
    data = build_data(inst, deadline=deadline)
    early = refused(data.too_big_for(build_seconds(options, deadline)))
    if early is not None:
        return early
    b0, _ = fallback_bound(data, deadline, deadline.share(B0_SHARE))  # B0, or B0k when busy
    try:
        am = build_model(data, deadline=deadline)
    except DeadlineReached as stop:  # no model in time: B0 is still a bound
        return Outcome(Status.NO_SOLUTION, bound=b0, explanation=str(stop))
    given = options.hint
    hint = None if given is None else encode(am, raw_from_solution(data, given))

    def solution(values: np.ndarray, lex: LexResult):
        return assemble(data, decode(am, values), optimal_admission=lex.proven[0])

    return Formulated(
        am.model,
        AdmissionHooks(am, b0),
        solution,
        hint=hint,
        explain_infeasible=lambda: explain_infeasible(data, deadline, feasible_together),
    )


METHODS = exact_methods(prepare)


#: ``schedopt export``: the first level of the model every back-end solves.
export = first_level_exporter(
    lambda inst: build_model(build_data(inst)).model,
    describe="L1 of 3, maximise the guaranteed deadline value (sum of admitted tiers' "
    "values, resolved to 1/1000)",
    notes=(
        "L2 (best-effort progress) and L3 (GPU-count changes) are solved after L1 is "
        "fixed at its optimum; they are not in this file",
    ),
)
