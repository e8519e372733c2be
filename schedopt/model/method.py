"""The exact methods of a problem, from its formulation: ``cpsat``, ``milp:highs``, ``milp:cbc``.

A problem supplies one ``prepare(instance, options, deadline)`` that builds its data and its
:class:`~schedopt.model.core.Model` (or answers early with an Outcome: too big, trivial) and
says how to read a point back (:class:`Formulated`). Emitting, the levels, and the Outcome are
the same for every problem and live here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

import numpy as np

from schedopt.backends.first_import import CPSAT, HIGHS, PULP, import_solver
from schedopt.backends.milp_run import MilpSolver
from schedopt.core.gates import first_import_deadline
from schedopt.core.options import SolveOptions
from schedopt.core.registry import MethodKind, MethodSpec, Outcome, Runner
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, DeadlineReached

from .core import Model
from .lexico import Hooks, LexResult, solve_levels
from .session import Session


class ExactBackend(str, Enum):
    CPSAT = "cpsat"
    HIGHS = "milp:highs"
    CBC = "milp:cbc"

    @property
    def description(self) -> str:
        return {
            "cpsat": "CP-SAT, lexicographic by sequential solves",
            "milp:highs": "MILP solved by HiGHS (highspy, one model across levels)",
            "milp:cbc": "MILP solved by CBC (PuLP/MPS, watched child process)",
        }[self.value]


@dataclass
class Formulated:
    """A problem's model for one instance, and how to turn the driver's answer into an Outcome."""

    model: Model
    hooks: Hooks
    #: ``solution(values, lex) -> solution object`` from a point of the model.
    solution: Callable[[np.ndarray, LexResult], Any]
    #: The caller's hint as a point of the model, or None.
    hint: np.ndarray | None = None
    explain_infeasible: Callable[[], str | None] = lambda: None
    #: ``metrics() -> dict``: measurements the method adds (after a solution is found).
    metrics: Callable[[], Mapping[str, float]] = dict
    stats: dict[str, float | str] = field(default_factory=dict)
    #: ``finish(outcome, method) -> outcome``: the problem's last word on the Outcome (compare
    #: with its own warm start, qualify a status the back-end's model cannot prove).
    finish: Callable[[Outcome, str], Outcome] = lambda outcome, method: outcome


Prepare = Callable[[Any, SolveOptions, Deadline], "Formulated | Outcome"]


def build_seconds(options: SolveOptions, deadline: Deadline) -> float:
    """The time a model may take to build: what is left, or in deterministic mode the limit
    itself (the run must not depend on the wall clock)."""
    return options.time_limit_s if options.deterministic else deadline.remaining()


#: What handing a built model to the solver costs, as a share of building it: CP-SAT given
#: 0.01 s after a 10.3 s build (admission, 1,024 GPUs × 1,000 jobs, load 12) returned after
#: 1.13 s, copying and loading the model (#16).
HANDOVER_SHARE_OF_BUILD = 0.15


def too_late_to_hand_over(deadline: Deadline, build_s: float) -> str | None:
    """Why a model built in ``build_s`` cannot be handed to its solver in the time left (None:
    it can)."""
    left, needed = deadline.remaining(), HANDOVER_SHARE_OF_BUILD * build_s
    if left >= needed:
        return None
    return (
        f"the model took {build_s:.1f} s to build and too little time was left to hand it to "
        f"the solver ({left:.2f} s left, about {needed:.2f} s needed)"
    )


def refused(reason: str | None) -> Outcome | None:
    """The early answer of a model too big to build in time (``reason``), or None."""
    return None if reason is None else Outcome(Status.NO_SOLUTION, explanation=reason)


def emit(
    model: Model,
    backend: ExactBackend,
    options: SolveOptions,
    hooks: Hooks,
    deadline: Deadline | None = None,
) -> Session:
    """The ``backend``'s session of ``model``. Each solver is imported by the first model
    emitted to it, not with the problem (start-up of a heuristic-only run or of the CLI;
    tests/test_startup.py); given a ``deadline``, that first import is refused
    (:class:`DeadlineReached`) when it would not end in the time left
    (:mod:`schedopt.backends.first_import`); in deterministic mode it is not gated (the run
    must not depend on the wall clock). A method with no answer without the solver lets the
    refusal reach :func:`~schedopt.core.auto.run_method` (an honest ``NO_SOLUTION``)."""
    deadline = first_import_deadline(deadline, options.deterministic)
    if backend is ExactBackend.CPSAT:
        import_solver(CPSAT, deadline)
        from .emit_cpsat import CpsatSession

        return CpsatSession(model, hooks.cpsat_linearization_level)
    import_solver(HIGHS, deadline)  # PuLP imports it too
    if backend is ExactBackend.HIGHS:
        from .emit_highs import HighsSession

        return HighsSession(model, verbose=options.verbose)
    import_solver(PULP, deadline)
    from .emit_pulp import PulpSession

    return PulpSession(model, MilpSolver.CBC)


def exact_runner(prepare: Prepare, backend: ExactBackend) -> Runner:
    def run(instance: Any, options: SolveOptions, deadline: Deadline) -> Outcome:
        t0 = time.perf_counter()
        prepared = prepare(instance, options, deadline)
        if isinstance(prepared, Outcome):
            return prepared
        try:
            session = emit(prepared.model, backend, options, prepared.hooks, deadline)
        except DeadlineReached as stop:  # not emitted in time: a bound known without it stands
            bound = prepared.hooks.first_bound(backend.value, None)
            return Outcome(Status.NO_SOLUTION, bound=bound, explanation=str(stop))
        build_s = time.perf_counter() - t0
        late = None if options.deterministic else too_late_to_hand_over(deadline, build_s)
        if late is not None:
            session.close()
            bound = prepared.hooks.first_bound(backend.value, None)
            return Outcome(Status.NO_SOLUTION, bound=bound, build_s=build_s, explanation=late)
        try:
            lex = solve_levels(
                prepared.model, session, options, deadline, prepared.hooks, prepared.hint
            )
        finally:
            session.close()
        return prepared.finish(to_outcome(prepared, lex, build_s), backend.value)

    return run


def to_outcome(prepared: Formulated, lex: LexResult, build_s: float) -> Outcome:
    stats = {**prepared.stats, **lex.stats}
    base = Outcome(lex.status, bound=lex.bound, build_s=build_s, solve_s=lex.solve_s, stats=stats)
    if lex.status is Status.INFEASIBLE:
        return replace(base, explanation=prepared.explain_infeasible())
    if lex.values is None:
        first = prepared.model.levels[0].name
        why = f"the solver found no solution of {first} within its time share"
        return replace(base, status=Status.NO_SOLUTION, explanation=why)
    solution = prepared.solution(lex.values, lex)
    out = replace(base, solution=solution, metrics=prepared.metrics())
    if lex.status is Status.FEASIBLE:
        out = replace(out, explanation=unproven_levels(prepared.model, lex))
    return out


def unproven_levels(model: Model, lex: LexResult) -> str:
    """Why a solution with every level solved in turn is FEASIBLE, not OPTIMAL: the levels
    left unproven, and what happened to each (stopped at its time share, not reached)."""
    names = [level.name for level in model.levels]
    proven = [n for n, p in zip(names, lex.proven, strict=True) if p]
    said = []
    for name, ok in zip(names, lex.proven, strict=True):
        if ok:
            continue
        status = lex.stats.get(f"{name}_status")
        if status is None:
            said.append(f"{name} not reached (no time left)")
        elif status == Status.FEASIBLE.value:
            said.append(f"{name} stopped at its time share before a proof")
        elif status == Status.NO_SOLUTION.value:
            said.append(f"{name} found nothing better in its time share (the point before stands)")
        else:
            said.append(f"{name} {status}")
    first = (
        f"{names[0]} proven optimal (its gap is 0), but " if lex.proven and lex.proven[0] else ""
    )
    rest = f"; proven: {', '.join(proven)}" if proven and not lex.proven[0] else ""
    return f"not OPTIMAL: {first}{'; '.join(said)}{rest}"


def exact_methods(prepare: Prepare) -> tuple[MethodSpec, ...]:
    """The three exact methods of a problem, one per back-end of :class:`ExactBackend`."""
    return tuple(
        MethodSpec(
            b.value,
            MethodKind.EXACT,
            exact_runner(prepare, b),
            b.description,
            supports_hint=True,
            # every back-end honours deterministic mode: CP-SAT's deterministic time, HiGHS's
            # and CBC's node budgets (SolveOptions.deterministic)
            reproducible=True,
        )
        for b in ExactBackend
    )
