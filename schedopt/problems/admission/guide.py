"""The LP guide and the bound of ``decomp:lp`` (``lpdecomp.py``).

The LP of B1 with the whole-slot rows B1c is solved once per part of a split of the jobs and
hosts (``decomp.split``; a part's LP is a relaxation of the part alone, so its value bounds
nothing about the whole, but its point guides the rounding and its capacity prices are
multipliers), and up to ``WHOLE_LP_COLUMNS`` columns then for the whole instance when what is
left of the LP phase is enough for it (``_staged``). The bound reported is the least of the
whole LP's (when solved) and B1L, the Lagrangian bound at each LP's capacity prices (the
parts' averaged), improved by subgradient steps while its time share lasts
(formulations/admission.md, "The Lagrangian bound B1L").

Every step of the guide stops at its own end (``seconds`` from its start): building a
relaxation checks it (whichever of it and the solve's deadline comes first), an LP gets what
is left of it after its build (a part's LP: what is left of the LP phase), B1L's evaluations
check it every 64 jobs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from schedopt.core.stopping import Deadline, DeadlineReached
from schedopt.model.lp_bound import lagrangian_bound

from .bound import L1Bound, l1_bound
from .data import ModelData
from .decomp import part_data, split
from .lagrange import Prices

#: Past this many LP columns (1,024 GPUs × 3,200 jobs: about 32,000) the LP is solved per
#: part: at 8,000 columns (256 GPUs × 800 jobs) HiGHS's simplex takes 0.5-0.8 s quiet, the
#: whole 1,024-GPU LP 4.3 s by interior point (benchmarks/RESULTS.md).
WHOLE_LP_COLUMNS = 12_000
#: Jobs per part of the LP split.
LP_PART_JOBS = 400
#: Jobs per part of the split solved before the whole LP (``_staged``): at 256 GPUs × 800
#: jobs its 4 parts and scout take 0.24-0.30 CPU s where the whole LP takes 0.43-0.85, and
#: B1L at their prices is 4,950 / 4,821 (s0 / s1) against 4,925 / 4,802 at the whole LP's.
STAGE_PART_JOBS = 200
#: The whole LP is started after the parts only with this many times their wall left of the
#: LP phase: it took 1.8-2.8 times their CPU seconds (256 × 800 s0 / s1); cut short it gives
#: nothing the parts did not (its interior point or simplex stopped: no point, weaker duals).
WHOLE_OVER_PARTS = 3.0
#: When the whole LP is not started, the parts of LP_PART_JOBS jobs (twice as large) follow
#: the first ones with this many times their wall left of the LP phase: they took 1.4-1.8
#: times the first parts' CPU, and B1L at their prices is 4,939 / 4,802 (256 × 800 s0 / s1)
#: against 4,950 / 4,821 at the first parts' (the whole LP's: 4,925 / 4,802); the whole LP
#: took 2.1 / 4.5 times the first parts' (benchmarks/RESULTS.md, "Admission at a third of a
#: core"). A rung cut short still gives the prices of the parts it solved.
COARSER_OVER_PARTS = 2.0
#: A part of the LP split is not started with less than this left of the LP phase.
PART_MIN_S = 0.02
#: Subgradient steps of B1L at most.
MAX_STEPS = 2
#: B1L's steps stop after this many in a row that do not lower it: at 1,024 GPUs × 3,200
#: jobs both steps from the LP parts' prices rose (19,248.7 → 19,396 and 19,320, 0.18 s
#: each), time the repair can use (benchmarks/RESULTS.md, "Admission at 1,024 × 3,200").
PATIENCE = 1


@dataclass(frozen=True)
class Guide:
    #: The LP's point (for lp_round) and, when the whole LP was solved, its bound.
    lp: L1Bound
    #: The bound reported: min(B1 with B1c, B1L), or None.
    bound: float | None
    label: str
    lagrangian: float | None
    #: B1L's evaluations, the first at the LP's prices (its plans: the start's priced plans).
    prices: Prices | None = None


def lp_columns(data: ModelData) -> int:
    return sum(
        max(0, min(data.T, max(t.slots_before for t in j.tiers)) - j.arrival) * len(j.options)
        for j in data.jobs
        if j.is_slo
    )


def _earlier(deadline: Deadline | None, stop_at: float) -> Deadline:
    """What the LP's relaxation is built under: the guide's end ``stop_at``, or ``deadline``
    when that comes first. (Built under the solve's deadline alone, a starved build ran past
    the guide's share and its LP then got the share again, #17.)"""
    if deadline is not None and deadline.remaining() < stop_at - time.perf_counter():
        return deadline
    return Deadline(stop_at)


def _by_parts(
    data: ModelData,
    seconds: float,
    deadline: Deadline | None,
    part_jobs: int = LP_PART_JOBS,
    scout: bool = True,
) -> L1Bound:
    """The parts' LPs joined: points mapped back to the whole instance, prices averaged over
    the parts that gave them. First a scout: one part of a split twice as fine (a quarter of
    a part's LP work: 0.05 against 0.14-0.21 CPU s at 1,024 GPUs × 3,200 jobs), whose point
    and prices stand only when no part answers. Then the parts in turn, each until the LP
    phase's end (``seconds``), not an equal share of it: on a busy machine the first ones
    answer and the last is cut, where equal shares cut every one (1,024 × 3,200 at load 5:
    each build took its 0.3-0.4 s share, no LP answered and the bound fell to B0, 20,580;
    B1L at the scout's prices is 19,375, at one part's 19,286, at all eight 19,224;
    RESULTS.md). Any multipliers ``λ ≥ 0`` give a bound B1L: so do these. ``scout`` False:
    no scout (a caller that has solved a finer split already)."""
    k = max(2, round(len(data.jobs) / part_jobs))
    started = time.perf_counter()
    joined = _Joined()
    scouted = _Joined()
    solved = True
    parts = split(data, k, False, 0)
    first = [(scouted, split(data, 2 * k, False, 0)[0])] if scout else []
    for into, part in first + [(joined, p) for p in parts]:
        left = seconds - (time.perf_counter() - started)
        if left <= PART_MIN_S:
            solved = False
            break
        sub = part_data(data, part)
        try:  # the build stops at the LP phase's end, not the solve's (module docstring)
            got = l1_bound(sub, left, _earlier(deadline, started + seconds))
        except DeadlineReached:
            solved = False
            break
        if into is joined:
            solved = solved and got.solved
        into.add(got, part[0])
    use = joined if joined.prices or joined.admit else scouted
    mean = {key: float(np.mean(v)) for key, v in use.prices.items()}
    seconds_used = time.perf_counter() - started
    return L1Bound(None, use.admit, solved, seconds_used, use.run, use.tier, mean)


def _staged(
    data: ModelData, seconds: float, deadline: Deadline | None, deterministic: bool = False
) -> tuple[list[L1Bound], bool]:
    """The LPs of an instance small enough for one (``WHOLE_LP_COLUMNS``), and whether the
    whole LP was started: the parts' first (``_by_parts`` with STAGE_PART_JOBS), then the
    whole LP in what is left of ``seconds`` when that is WHOLE_OVER_PARTS times what the
    parts took, else the parts of LP_PART_JOBS when it is COARSER_OVER_PARTS times. The whole
    LP first in the list when it was started (its bound, stopped or not, and its point when it
    has one), then the parts' (the first parts' before the coarser ones: their point is the
    rounding's, as without them). On a busy machine the whole LP alone did not finish in its
    time (256 GPUs × 800 jobs s1, 0.85 CPU s, beside one burner: no prices, the bound fell to
    B0w 5,251 and the start to the greedy plan, #17); the parts give B1L and priced plans at a
    third of it. At a third of a core the whole LP was not started after them (s0 in 2 of 3
    emulated runs, s1 in 3 of 3) and B1L stayed at the first parts' prices, 0.5% / 0.4% above
    the coarser parts' (COARSER_OVER_PARTS). ``deterministic`` (SolveOptions.deterministic):
    the whole LP always follows the parts, whatever they took on the clock (``seconds`` is
    then the runaway cap's share)."""
    started = time.perf_counter()
    parts = _by_parts(data, seconds, deadline, STAGE_PART_JOBS)
    took = time.perf_counter() - started
    left = seconds - took
    if not deterministic and left < WHOLE_OVER_PARTS * took:
        if left < COARSER_OVER_PARTS * took:
            return [parts], False
        try:  # the cheaper rung; its scout is one of the first parts, solved already
            coarser = _by_parts(data, left, deadline, LP_PART_JOBS, scout=False)
        except DeadlineReached:
            return [parts], False
        return [parts, coarser], False
    try:  # the build stops at the LP phase's end, not the solve's (module docstring)
        whole = l1_bound(data, left, _earlier(deadline, started + seconds))
    except DeadlineReached:
        return [parts], False
    return [whole, parts], True


class _Joined:
    """LP parts' points mapped back to the whole instance, their prices per row collected."""

    def __init__(self) -> None:
        self.admit: dict[int, float] = {}
        self.run: dict[tuple[int, int, int], float] = {}
        self.tier: dict[tuple[int, int], float] = {}
        self.prices: dict[tuple[int, str, int], list[float]] = {}

    def add(self, got: L1Bound, back: list[int]) -> None:
        self.admit.update((back[j], v) for j, v in got.admit.items())
        self.run.update(((back[j], t, o), v) for (j, t, o), v in got.run.items())
        self.tier.update(((back[j], t), v) for (j, t), v in got.tier.items())
        for key, v in got.prices.items():
            self.prices.setdefault(key, []).append(v)


def guide(
    data: ModelData, seconds: float, deadline: Deadline | None = None, deterministic: bool = False
) -> Guide:
    """The LP guide and the bound within ``seconds`` (module docstring); ``deterministic``:
    no step is skipped for what an earlier one took on the clock (``_staged``)."""
    stop_at = time.perf_counter() + seconds
    whole = lp_columns(data) <= WHOLE_LP_COLUMNS
    # the rest for B1L's first evaluation (0.3-0.8 s at 3,200 jobs, load 5-7) and the rounding
    lp_s = seconds * (0.7 if whole else 0.6)
    ran_whole = False
    try:
        if whole:
            lps, ran_whole = _staged(data, lp_s, deadline, deterministic)
        else:
            lps = [_by_parts(data, lp_s, deadline)]
    except DeadlineReached:  # the relaxation not built by the guide's end: no LP
        lps = [L1Bound(None, {}, False, seconds)]
    # the point for the rounding: the whole LP's when it has one, else the first parts'
    lp = next((one for one in lps if one.admit), lps[-1])
    bound = lps[0].bound if ran_whole else None
    label = "B1+B1c LP" + ("" if lps[0].solved else " (stopped)") if ran_whole else ""
    lagrangian = None
    prices = None
    for one in lps:  # B1L from each LP's prices (any λ ≥ 0 is a bound): the least
        if not one.prices or time.perf_counter() >= stop_at:
            continue
        prices = prices or Prices(data, Deadline(stop_at))
        lam = prices.multipliers(one.prices)
        try:
            lb = lagrangian_bound(
                prices.rhs,
                prices.oracle,
                lam,
                stop_at,
                max_steps=MAX_STEPS,
                step=0.5,
                patience=PATIENCE,
            )
        except DeadlineReached:  # its first evaluation did not finish in the share: no B1L
            continue
        if lagrangian is None or lb.bound < lagrangian:
            lagrangian = lb.bound
            if bound is None or lagrangian < bound:
                bound = lagrangian
                label = f"B1L ({lb.evaluations} evaluations)"
    return Guide(replace(lp, bound=bound), bound, label or "none", lagrangian, prices)


__all__ = ["Guide", "guide", "lp_columns"]
