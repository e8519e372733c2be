"""Time share's exact methods: the LP of model.py on HiGHS and CBC, one runner per back-end.

The linear policies go through the model layer's lexicographic driver as they are.
Finish-time fairness iterates that LP (ftf.py); space sharing with many pairs prices pair
columns in (colgen.py, HiGHS). CP-SAT is not offered: the decision is continuous, and a grid
would only approximate an optimum the LP solvers prove.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from schedopt.core.errors import InvalidInstanceError
from schedopt.core.options import SolveOptions
from schedopt.core.registry import MethodKind, MethodSpec, Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.model import ExactBackend, Formulated, Hooks, LexResult, solve_levels
from schedopt.model.emit_highs import HighsSession
from schedopt.model.export import first_level_exporter
from schedopt.model.method import emit, to_outcome

from .codec import decode, encode, shares_of, throughputs
from .colgen import solve as solve_by_columns
from .columns import Columns
from .data import TimeshareData, aggregate, build_data
from .ftf import Step, ratios, solve_ftf, start, weights_at
from .instance import Policy, TimeshareInstance
from .model import TimeshareModel, build_model
from .solution import Shares, TimeshareSolution
from .warm import Basis, capture
from .warm import apply as apply_basis

#: Up to this many pair columns the whole LP is built; beyond, HiGHS prices pairs in and CBC
#: refuses the round (its model goes over as PuLP objects).
FULL_PAIR_COLUMNS = 20_000


def all_columns(data: TimeshareData, pairs: Columns | None = None) -> Columns:
    """Every column: jobs alone, then pairs (``pairs``: the pair columns, if already made)."""
    if not data.has_pairs:
        return data.singles
    return Columns.concat([data.singles, data.pair_columns() if pairs is None else pairs])


def first_model(inst: TimeshareInstance, deadline: Deadline | None = None) -> TimeshareModel:
    """The LP of one round over every column; finish-time fairness: its first step, with the
    weights at the isolated split's ratio."""
    data = build_data(inst, deadline)
    if data.policy is Policy.FINISH_TIME_FAIRNESS:
        cols, x = start(data)
        r = float(np.max(ratios(data, throughputs(cols, x, data.num_jobs))))
        weights = weights_at(data, r)
    else:
        weights = data.weights()
    return build_model(data, weights, all_columns(data), deadline, levels=levels(inst))


def levels(inst: TimeshareInstance) -> int:
    return 2 if inst.efficiency else 1


def prepare(
    inst: TimeshareInstance, options: SolveOptions, deadline: Deadline
) -> Formulated | Outcome:
    if not inst.jobs:
        return Outcome(Status.OPTIMAL, TimeshareSolution.of_arrays(Shares.empty()), bound=0.0)
    tm = first_model(inst, deadline)
    hint = None if options.hint is None else encode(tm, options.hint)
    return Formulated(tm.model, Hooks(), lambda values, lex: decode(tm, values), hint=hint)


def runner(backend: ExactBackend):
    def run(inst: TimeshareInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
        t0 = time.perf_counter()
        data = aggregate(build_data(inst, deadline))
        if not data.num_jobs:
            return Outcome(Status.OPTIMAL, TimeshareSolution.of_arrays(Shares.empty()), bound=0.0)
        if data.policy is Policy.FINISH_TIME_FAIRNESS:
            return _finish_time_fairness(data, backend, options, deadline, t0)
        pairs = data.pair_columns(deadline)
        if len(pairs) > FULL_PAIR_COLUMNS:
            if backend is ExactBackend.HIGHS:
                return solve_by_columns(data, data.weights(), options, deadline, pairs)
            # Refused before building: CBC takes the whole LP through PuLP objects, which for
            # 1,024 jobs with every pair (850,000 columns) took 4-6 s beyond a 2 s limit.
            return Outcome(
                Status.NO_SOLUTION,
                explanation=f"{len(pairs):,} pair columns: {backend.value} takes at most "
                f"{FULL_PAIR_COLUMNS:,}; milp:highs prices pairs in (column generation)",
            )
        columns = all_columns(data, pairs)
        return _lp(data, data.weights(), columns, backend, options, deadline, t0, levels(inst))

    return run


class _CaptureBasis(Hooks):
    """Starts each level from last round's basis of that level and keeps this round's
    (warm.py): level 1's before the driver fixes it, level 2's after its run."""

    def __init__(self, tm: TimeshareModel, session: object, last: Basis | None):
        self.tm, self.session, self.last = tm, session, last
        self.first: Basis | None = None
        self.second: Basis | None = None
        self.warm_levels = 0

    @property
    def basis(self) -> Basis | None:
        if self.first is None:
            return None
        return replace(self.first, second=self.second)

    def after_level(self, index: int, values: np.ndarray) -> np.ndarray:
        highs = getattr(self.session, "highs", None)
        if highs is None:
            return values
        if index == 0:
            # level 1's optimal basis (the driver has just added its fixing row: capture
            # keeps the model's rows for level 1 and that row's status apart)
            self.first = capture(self.tm, highs)
            last_second = None if self.last is None else self.last.second
            if last_second is not None and apply_basis(self.tm, highs, last_second, fixed=True):
                self.warm_levels += 1
        elif index == 1:
            self.second = capture(self.tm, highs)
        return values


def _lp(
    data: TimeshareData,
    weights: np.ndarray,
    columns: Columns,
    backend: ExactBackend,
    options: SolveOptions,
    deadline: Deadline,
    t0: float,
    n_levels: int = 2,
) -> Outcome:
    tm = build_model(data, weights, columns, deadline, levels=n_levels)
    # a hint names jobs; after aggregation a row is a class (the LP needs no start: it is
    # solved to optimality, and the basis of last round is the start that helps)
    given = options.hint if data.row_of_job is None else None
    hint = None if given is None else encode(tm, given)
    session = emit(tm.model, backend, options, Hooks(), deadline)
    last = options.warm_start if isinstance(options.warm_start, Basis) else None
    hooks = _CaptureBasis(tm, session, last if backend is ExactBackend.HIGHS else None)
    started_warm = False
    if backend is ExactBackend.HIGHS and last is not None:
        started_warm = apply_basis(tm, session.highs, last)  # type: ignore[attr-defined]
    build_s = time.perf_counter() - t0
    try:
        lex = solve_levels(tm.model, session, options, deadline, hooks, hint)
    finally:
        session.close()
    formulated = Formulated(tm.model, hooks, lambda values, _: decode(tm, values))
    out = to_outcome(formulated, lex, build_s)
    stats = {
        **out.stats,
        "warm_start": "basis" if started_warm else "cold",
        "warm_levels": float(started_warm) + hooks.warm_levels,
    }
    if lex.values is not None:
        stats["level1_value"] = float(lex.values[tm.t[()]])
    return replace(out, stats=stats, warm_start=hooks.basis)


def _finish_time_fairness(
    data: TimeshareData,
    backend: ExactBackend,
    options: SolveOptions,
    deadline: Deadline,
    t0: float,
) -> Outcome:
    columns = all_columns(data)
    reused = _ReusedLp(data, columns, options, deadline) if backend is ExactBackend.HIGHS else None

    def lp(weights: np.ndarray) -> Step:
        if reused is not None:
            return reused.step(weights)
        tm = build_model(data, weights, columns, deadline, levels=1)
        session = emit(tm.model, backend, options, Hooks(), deadline)
        try:
            lex = solve_levels(tm.model, session, options, deadline, Hooks())
        finally:
            session.close()
        if lex.values is None:
            return Step(lex.status, None, None)
        return Step(lex.status, float(lex.values[tm.t[()]]), lex.values[tm.x.cols])

    try:
        found = solve_ftf(data, columns, lp, deadline.remaining)
    finally:
        if reused is not None:
            reused.close()
    status, x = found.status, found.x
    if status is Status.OPTIMAL and not data.instance.efficiency:
        pass
    elif status is Status.OPTIMAL and deadline.remaining() > 0:  # level 2 at the optimum
        tm = build_model(data, weights_at(data, found.ratio), columns, deadline)
        session = emit(tm.model, backend, options, Hooks(), deadline)
        try:
            lex: LexResult = solve_levels(tm.model, session, options, deadline, Hooks())
        finally:
            session.close()
        if lex.values is not None:
            x = lex.values[tm.x.cols]
        if lex.status is not Status.OPTIMAL:
            status = Status.FEASIBLE
    elif status is Status.OPTIMAL:
        status = Status.FEASIBLE  # level 2 not proven
    bound = None if found.lower is None else 1.0 / found.lower
    return Outcome(
        status,
        shares_of(data, columns, x),
        bound=bound,
        build_s=0.0,
        solve_s=time.perf_counter() - t0,
        stats={"dinkelbach_steps": float(found.steps), "finish_time_ratio": found.ratio},
    )


class _ReusedLp:
    """The max-min LP of every finish-time fairness step in one HiGHS model (issue 19): a
    step's weights a_j only scale C3's row j, written (1/a_j)·t − Σ T_jc x_c ≤ 0, so a step
    changes t's coefficient in each C3 row and HiGHS re-solves from the last step's basis
    (rebuilding the model per step cost more than HiGHS's solves on small rounds)."""

    def __init__(
        self, data: TimeshareData, columns: Columns, options: SolveOptions, deadline: Deadline
    ):
        self.tm = build_model(data, np.ones(data.num_jobs), columns, deadline, levels=1)
        self.options, self.deadline = options, deadline
        self.session = HighsSession(self.tm.model, verbose=options.verbose)
        self.session.set_level(self.tm.model.levels[0])
        # C1 (a row per job), C2 (a row per type), then C3 (a row per job)
        first = data.num_jobs + data.num_types
        self.rows = np.arange(first, first + data.num_jobs, dtype=np.int32)
        self.t_col = self.tm.t[()]

    def step(self, weights: np.ndarray) -> Step:
        if np.any(weights <= 0):
            # a target below some job's τ_j/E_j: t ≤ a_j ρ_j ≤ 0 for that job, and t ≥ 0, so
            # the LP's optimum is t = 0, reached by x = 0 (no solve; the row's sign would flip)
            return Step(Status.OPTIMAL, 0.0, np.zeros(len(self.tm.columns)))
        h = self.session.highs
        for row, coef in zip(self.rows.tolist(), (1.0 / weights).tolist(), strict=True):
            h.changeCoeff(row, self.t_col, coef)
        run = self.session.run(self.deadline.remaining(), self.options)
        if run.values is None:
            return Step(run.status, None, None)
        return Step(run.status, float(run.values[self.t_col]), run.values[self.tm.x.cols])

    def close(self) -> None:
        self.session.close()


METHODS = tuple(
    MethodSpec(
        b.value,
        MethodKind.EXACT,
        runner(b),
        f"{b.description}; LP of formulations/timeshare.md",
        supports_hint=True,
        reproducible=True,  # an LP, solved to the end in deterministic mode
    )
    for b in (ExactBackend.HIGHS, ExactBackend.CBC)
)


def _exportable(inst: TimeshareInstance) -> TimeshareModel:
    if inst.policy is Policy.FINISH_TIME_FAIRNESS:
        raise InvalidInstanceError(
            "policy",
            "finish_time_fairness is solved as a sequence of LPs (Dinkelbach's iteration, "
            "formulations/timeshare.md): no single model file has its optimum",
        )
    return first_model(inst)


#: ``schedopt export``: the first level of the LP (not for finish-time fairness).
export = first_level_exporter(
    lambda inst: _exportable(inst).model,
    describe="L1 of 2, maximise t, the policy's minimum weighted throughput",
    notes=("L2 (mean weighted throughput) is solved after L1 is fixed; it is not in this file",),
)
