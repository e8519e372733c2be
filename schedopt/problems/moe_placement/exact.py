"""MoE placement's exact methods: the model of model.py on every back-end, with its hooks."""

from __future__ import annotations

import dataclasses

import numpy as np

from schedopt.core.lexico import level_time_shares
from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.model import Formulated, Hooks, Level, LexResult, RowBlock, exact_methods
from schedopt.model.export import write_first_level
from schedopt.model.lexico import fix_block

from .codec import decode, encode, true_levels
from .data import ModelData, Plan, build_data
from .instance import MoePlacementInstance
from .model import MoeModel, Q, build_model
from .solution import MoePlacementSolution
from .validate import evaluate
from .warmstart import better_of, prologue

INFEASIBLE = (
    "no placement satisfies memory (C1), coverage (C2), the replica caps (C5, C6) and the "
    "group rule (C7) together"
)
NO_SOLUTION = (
    "the solver found no placement within the time limit (pass a hint, e.g. from "
    "heuristic:eplb, or use method='auto')"
)
#: Share of the remaining time each lexicographic level may use (L1 most, the last the rest).
LEVEL_TIME_SHARE = level_time_shares(4, first=0.6)


class MoeHooks(Hooks):
    # The legacy CP-SAT model's setting (the full LP relaxation bounds the min-max loads).
    cpsat_linearization_level = 2
    # "How the order is kept": level shares 0.6, 0.5, 0.5, all (LEVEL_TIME_SHARE).
    first_level_share = LEVEL_TIME_SHARE[0]

    def __init__(self, mm: MoeModel, analytic: float):
        self.mm, self.analytic = mm, analytic
        # x's columns run expert by expert ((l, e, g) in order): one segment per expert.
        keys = mm.x.keys
        firsts = [k for k, key in enumerate(keys) if k == 0 or key[:2] != keys[k - 1][:2]]
        self._x_cols, self._starts = mm.x.cols, np.asarray(firsts, dtype=np.int64)

    def reject(self, index: int, values: np.ndarray) -> str | None:
        # CBC answered "optimal" with every x at 0 on two fuzzed instances (its f ≤ x rows
        # broken too; HiGHS right on the same model): a point that breaks C2 is not trusted,
        # and the levels solved so far stand (unproven).
        if not len(self._starts):
            return None
        held = np.maximum.reduceat(values[self._x_cols], self._starts)
        return None if bool((held > 0.5).all()) else "the solver's point breaks C2"

    def fix_rows(
        self, index: int, level: Level, value: float, values: np.ndarray
    ) -> list[RowBlock] | None:
        # A continuous level (L1 or W, L2) is fixed at what the point achieves once its shares
        # are renormalised, if that is more than the solver's objective: HiGHS's objective
        # sat 9e-6 µs under the true optimum (its feasibility tolerances on C3/C8), and fixing
        # it there cut the optimal L4 off (2x2-attn-host0-current: L4 7 instead of 6).
        if index > 1:
            return None
        true = true_levels(self.mm, values)[index]
        return [fix_block(level, max(value, true))]

    def level_gap(self, index: int, method: str, gap: float) -> float:
        # CP-SAT's grid model is only accurate to δ (data.cpsat_tolerance_us): its level 1
        # stops once proven within δ (as the legacy model did; proving the grid optimum
        # itself ran out of 20 s on a 2-GPU, 4-expert instance of test_bruteforce).
        d = self.mm.data
        if index or method != "cpsat" or d.weights is not None or self.analytic <= 0:
            return gap
        delta = d.cpsat_tolerance_us
        return min(0.5, max(gap, delta / (self.analytic + delta)))

    def first_bound(self, method: str, bound: float | None) -> float | None:
        # Every method reports the analytic relaxation's bound (data.lower_bound) when the
        # solver's is weaker. CP-SAT's bound is one of its grid model: minus δ
        # (data.cpsat_tolerance_us) it bounds the continuous problem; δ covers L1 only, so in
        # weighted mode CP-SAT reports the analytic bound alone.
        if bound is None:
            return self.analytic
        if method == "cpsat":
            if self.mm.data.weights is not None:
                return self.analytic
            bound -= self.mm.data.cpsat_tolerance_us
        return max(self.analytic, bound)


def finish(
    data: ModelData, hint: Plan | None, options: SolveOptions, outcome: Outcome, method: str
) -> Outcome:
    """Never worse than the warm start (``better_of``, as the validator evaluates both); for
    CP-SAT, OPTIMAL only when its grid optimum is within ``mip_gap`` of the valid bound."""
    if outcome.status is Status.INFEASIBLE:
        return outcome
    stats = {"solver": method.removeprefix("milp:"), **outcome.stats}
    solved: MoePlacementSolution | None = outcome.solution
    solution, hint_won = better_of(data, solved, hint)
    bound = outcome.bound if outcome.bound is not None else data.lower_bound()
    if solution is None:
        return dataclasses.replace(outcome, bound=bound, stats=stats, explanation=NO_SOLUTION)
    if hint_won:
        stats["hint_returned"] = "yes"
    proven = solved is not None and outcome.status is Status.OPTIMAL
    status = Status.OPTIMAL if proven else Status.FEASIBLE
    explanation = None
    if method == "cpsat":
        stats["grid_optimal"] = "yes" if proven else "no"
        # OPTIMAL needs a proof for the real (continuous-share) problem: the grid optimum plus
        # the gap to the valid bound must be within mip_gap.
        value = evaluate(data.instance, solution)[0]
        slack = options.mip_gap * max(abs(value), 1e-9) + 1e-9 * max(1.0, value)
        if proven and value - bound > slack:
            status = Status.FEASIBLE
            explanation = (
                f"optimal for token shares in 1/{Q} (every level proven); the continuous "
                f"optimum may be up to {data.cpsat_tolerance_us:.4g} µs lower (bound reported)"
            )
    return dataclasses.replace(
        outcome,
        status=status,
        solution=solution,
        bound=bound,
        stats=stats,
        explanation=explanation,
    )


def prepare(
    inst: MoePlacementInstance, options: SolveOptions, deadline: Deadline
) -> Formulated | Outcome:
    data, hint, early = prologue(inst, options, deadline)
    if early is not None:
        return early
    assert data is not None
    mm = build_model(data, deadline)
    point = encode(mm, hint) if hint is not None else None

    def solution(values: np.ndarray, lex: LexResult) -> MoePlacementSolution:
        return data.to_solution(decode(mm, values))

    return Formulated(
        mm.model,
        MoeHooks(mm, data.lower_bound()),
        solution,
        hint=point,
        explain_infeasible=lambda: INFEASIBLE,
        finish=lambda outcome, method: finish(data, hint, options, outcome, method),
    )


METHODS = exact_methods(prepare)


def export(inst: MoePlacementInstance, path: str, fmt: str) -> None:
    """Write the level-1 model (minimise Σ_l max load, or the weighted sum) as MPS or LP."""
    model = build_model(build_data(inst)).model
    if model.levels[0].name == "W":
        describe = "W, minimise the weighted sum of the four levels (objective.weights)"
    else:
        describe = "L1 of 4, minimise the sum over layers of the layer's max GPU load (µs)"
    write_first_level(
        model,
        path,
        fmt,
        describe=describe,
        notes=("later levels are solved after the first is fixed; they are not in this file",),
    )
