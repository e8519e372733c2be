"""Fair share's exact methods: the model of model.py on every back-end, with its hooks."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.model import Formulated, Hooks, Level, LexResult, RowBlock, exact_methods
from schedopt.model.export import first_level_exporter
from schedopt.model.method import build_seconds, refused

from .codec import decode, encode, unit_gpus
from .data import SHARE_SCALE, ModelData, build_data
from .explain import explain_infeasible, trivial_outcome, with_fairness_note
from .heuristics import complete
from .instance import FairshareInstance
from .model import FairshareModel, build_model
from .placement import assemble, raw_from_solution
from .validate import evaluate


class FairshareHooks(Hooks):
    # The full LP relaxation proves L2 and L3 (measured on the 1,024-GPU benchmark with the
    # legacy model: all levels OPTIMAL in 2.3 s instead of L2 unproven after 10 s).
    cpsat_linearization_level = 2

    def __init__(self, fm: FairshareModel):
        self.fm = fm

    def fix_rows(
        self, index: int, level: Level, value: float, values: np.ndarray
    ) -> list[RowBlock] | None:
        if index:
            return None
        return [fix_min_share(self.fm, values)]

    def after_level(self, index: int, values: np.ndarray) -> np.ndarray:
        if index:
            return values
        # L2 starts from L1's solution completed: the GPUs it leaves idle water-filled onto idle
        # jobs. That never lowers a tenant's GPUs nor adds a preemption, so it keeps the L1 fix
        # and starts L2 far higher than L1's raw incumbent ("How the order is kept").
        return encode(self.fm, complete(self.fm.data, decode(self.fm, values)))

    def first_bound(self, method: str, bound: float | None) -> float | None:
        if bound is None or method != "cpsat":
            return bound
        # CP-SAT's t is on a grid of 1/SHARE_SCALE with rounded accounts: the real optimum is
        # below (t_bound + 1)/SHARE_SCALE, and no allocation beats every demand met.
        grid = round(bound * SHARE_SCALE)
        return min((grid + 1) / SHARE_SCALE, self.fm.data.share_upper_bound())


def fix_min_share(fm: FairshareModel, values: np.ndarray) -> RowBlock:
    """L1 fixed exactly, without rounding: with t̂ the real minimum share of the point, every
    counted unit keeps the whole GPUs m_v that hold it at t̂ (g_v ≥ m_v). The same rows on
    every back-end, whatever grid its t was on."""
    data = fm.data
    share = data.min_share(unit_gpus(data, decode(fm, values)))
    starts, cols, coefs, lo = [0], [], [], []
    for v in data.included:
        need = data.min_gpus(v, share)
        if need:
            cols += [col for col, _ in fm.unit_gpus[v.index]]
            coefs += [float(n) for _, n in fm.unit_gpus[v.index]]
            starts.append(len(cols))
            lo.append(float(need))
    return RowBlock(
        "fix_L1",
        np.asarray(starts, dtype=np.int64),
        np.asarray(cols, dtype=np.int64),
        np.asarray(coefs, dtype=np.float64),
        np.asarray(lo, dtype=np.float64),
        np.full(len(lo), np.inf),
    )


def prepare(
    inst: FairshareInstance, options: SolveOptions, deadline: Deadline
) -> Formulated | Outcome:
    data = build_data(inst, deadline=deadline)
    trivial = trivial_outcome(data)  # nothing to decide: answered without a model
    if trivial is not None:
        return trivial
    early = refused(data.too_big_for(build_seconds(options, deadline)))
    if early is not None:
        return early
    fm = build_model(data, deadline)
    given = options.hint
    hint = None if given is None else encode(fm, raw_from_solution(data, given))

    def solution(values: np.ndarray, lex: LexResult):
        return assemble(data, decode(fm, values))

    return Formulated(
        fm.model,
        FairshareHooks(fm),
        solution,
        hint=hint,
        explain_infeasible=lambda: explain_infeasible(data),
        finish=lambda outcome, method: with_fairness_note(
            data, proven_for_real_shares(data, options, outcome, method)
        ),
    )


def proven_for_real_shares(
    data: ModelData, options: SolveOptions, outcome: Outcome, method: str
) -> Outcome:
    """CP-SAT proves its optimum on a grid of shares in 1/SHARE_SCALE (accounts rounded onto
    it), so its OPTIMAL holds for the real shares only when the real bound ``first_bound``
    reports is within ``mip_gap`` of the value; otherwise FEASIBLE, saying so, as MoE's CP-SAT
    does (statuses are proofs). The MILPs take the real coefficients."""
    if method != "cpsat" or outcome.status is not Status.OPTIMAL or outcome.solution is None:
        return outcome
    if outcome.bound is None:
        return outcome
    value = evaluate(data.instance, outcome.solution)[0]
    slack = options.mip_gap * max(abs(value), 1e-9) + 1e-9 * max(1.0, abs(value))
    stats = {**outcome.stats, "grid_optimal": "yes"}
    if outcome.bound - value <= slack:
        return replace(outcome, stats=stats)
    why = (
        f"every level optimal for shares in 1/{SHARE_SCALE:,} (CP-SAT's grid); the real "
        f"minimum share may be up to {outcome.bound - value:.3g} higher (bound reported)"
    )
    said = outcome.explanation
    return replace(
        outcome,
        status=Status.FEASIBLE,
        stats=stats,
        explanation=why if said is None else f"{said}; {why}",
    )


METHODS = exact_methods(prepare)


#: ``schedopt export``: the first level of the model every back-end solves.
export = first_level_exporter(
    lambda inst: build_model(build_data(inst)).model,
    describe="L1 of 3, maximise t, the minimum long-term GPU fair share (LTGF) of a tenant",
    notes=(
        "L2 (effective throughput) and L3 (restart + fragmentation cost) are solved after "
        "L1 is fixed; they are not in this file",
    ),
)
