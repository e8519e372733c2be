"""The warm start of the exact methods (``cpsat.py``, ``milp.py``, ``scenario.py``).

An exact method starts from the caller's hint or, without one, from the heuristics' answer,
and never returns anything worse than that start. The greedy and the local search live in
``eplb.py`` and ``local_search.py`` (``heuristics.py`` registers them); this module sits above
them and above ``data.py``, which the heuristics read, so that the instance data never depends
on the heuristics.
"""

from __future__ import annotations

import time

import numpy as np

from schedopt.core.registry import Outcome
from schedopt.core.result import lex_better
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline

from .data import MAX_MODEL_VARIABLES, ModelData, Plan, build_data
from .heuristics import EplbParams, LocalSearchParams, improve, run_eplb, validation_reserve_s
from .instance import MoePlacementInstance
from .solution import MoePlacementSolution
from .validate import TERMS, evaluate, validate


def hint_plan(data: ModelData, hint: object) -> Plan | None:
    """The hint (a MoePlacementSolution the validator accepts) as a plan, else None."""
    if not isinstance(hint, MoePlacementSolution) or validate(data.instance, hint):
        return None
    return data.plan_from_solution(hint)


def plan_values(data: ModelData, plan: Plan) -> dict[str, object]:
    """Everything a warm start needs from a plan: z_l, GPUs used, the group of each layer."""
    z = [float(data.layer_loads(plan, i).max()) for i in range(data.L)]
    used = np.zeros(data.G, dtype=bool)
    for x in plan.x:
        used |= x.any(axis=0)
    groups = [int(data.group[np.flatnonzero(x.any(axis=0))[0]]) for x in plan.x]
    return {"z": z, "used": used, "groups": groups}


def better_of(
    data: ModelData,
    solution: MoePlacementSolution | None,
    hint: Plan | None,
    hint_solution: MoePlacementSolution | None = None,
) -> tuple[MoePlacementSolution | None, bool]:
    """The solver's solution or the hint's, whichever is lexicographically better as the
    validator evaluates them (``True`` when the hint won): an exact method is never worse
    than its warm start. ``hint_solution``: the hint already converted, if the caller has it."""
    if hint is None:
        return solution, False
    hint_sol = hint_solution if hint_solution is not None else data.to_solution(hint)
    if solution is None:
        return hint_sol, True
    inst = data.instance
    if lex_better(evaluate(inst, hint_sol), evaluate(inst, solution), TERMS):
        return hint_sol, True
    return solution, False


def prologue(
    inst: MoePlacementInstance, options: object, deadline: Deadline, factor: float = 1.0
) -> tuple[ModelData | None, Plan | None, Outcome | None]:
    """Data and hint for an exact method, or the Outcome to return at once: the model is too
    large (the hint if there is one, else ModelTooLargeError), or it cannot be built in the
    time left (the hint, or NO_SOLUTION)."""
    data = build_data(inst, check_size=False, deadline=deadline)
    hint = hint_plan(data, getattr(options, "hint", None))
    if data.num_variables > MAX_MODEL_VARIABLES:
        if hint is None:
            build_data(inst)  # raises ModelTooLargeError with the message
        why = f"the exact model would have {data.num_variables:,} variables"
        return data, hint, _hint_outcome(data, hint, why, deadline)
    # deterministic mode (SolveOptions.deterministic): the decision rests on the limit, not
    # on what the clock says is left, and the local search below runs its iterations out
    deterministic = bool(getattr(options, "deterministic", False))
    reason = data.too_big_for(
        getattr(options, "time_limit_s", 0.0) if deterministic else deadline.remaining(), factor
    )
    if reason:
        if hint is not None:
            return data, hint, _hint_outcome(data, hint, reason, deadline)
        return data, None, Outcome(Status.NO_SOLUTION, bound=data.lower_bound(), explanation=reason)
    if hint is None:
        # No warm start given: the greedy's (EPLB), improved by the local search for a tenth
        # of the time left, so that an exact method is never worse than the greedy even when
        # called directly (MIP starts matter: the LP bound of this model is weak).
        hint = run_eplb(data, EplbParams())
        if hint is not None:
            share = deadline if deterministic else Deadline.after(deadline.share(0.1))
            hint = improve(data, hint, LocalSearchParams(), share)
    return data, hint, None


#: Seconds an improved warm start leaves for validation and the return (large instances).
HINT_RESERVE_S = 0.3


def _hint_outcome(data: ModelData, hint: Plan | None, why: str, deadline: Deadline) -> Outcome:
    """The warm start, improved by the local search in the time left (never worse)."""
    assert hint is not None
    t0 = time.perf_counter()
    solution = data.to_solution(hint)
    # What comes after the local search (converting the improved plan, evaluating both) was
    # measured at about four such conversions: measured here, so that the reserve follows the
    # machine's load (0.45 s of CPU each on the DeepSeek-V3 shape).
    convert_s = time.perf_counter() - t0
    end = deadline.earlier(HINT_RESERVE_S + 4 * convert_s + validation_reserve_s(hint))
    if not end.expired():  # else no time to improve: the warm start as it is
        better = improve(data, hint, LocalSearchParams(), end)
        best, _ = better_of(data, data.to_solution(better), hint, solution)
        solution = solution if best is None else best
    return Outcome(
        Status.FEASIBLE,
        solution=solution,
        bound=data.lower_bound(),
        solve_s=time.perf_counter() - t0,
        explanation=f"{why}; returning the warm start, improved by local search",
        stats={"hint_returned": "yes"},
    )
