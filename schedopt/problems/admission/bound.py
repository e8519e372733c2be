"""A bound on L1 for the whole instance that does not depend on CP-SAT finishing: the LP
relaxation of the deadline rows, strengthened (formulations/admission.md, "The LP bound B1").

Only SLO jobs and the slots before their last deadline enter: best-effort jobs and later slots
only take capacity, so leaving them out (at 0) keeps the same L1 optimum. C1 is implied by C7
with ``z ≤ 1``. The bound is weak duality evaluated from HiGHS's duals
(:mod:`schedopt.model.lp_bound`), so it holds whatever tolerance the LP was solved to.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from schedopt.core.stopping import Ticker
from schedopt.model.lp_bound import LpBound, Relaxation, solve_relaxation

from .cuts import least_weight
from .data import JobData, ModelData

#: From this many columns B1 is solved by the interior point method (model/lp_bound.py): at
#: 32k columns (1,024 GPUs × 3,200 jobs) 4.5 s against more than 8 s for the dual simplex;
#: at 256 GPUs × 800 jobs (8k) the simplex is faster (0.8 s against 2.2 s).
INTERIOR_COLUMNS = 25_000


@dataclass(frozen=True)
class L1Relaxation:
    relaxation: Relaxation
    #: Column of z_j per SLO job index (data.jobs index), for reading the LP's admissions.
    z_col: dict[int, int]
    #: Column of x_jto per (job index, slot, option), and of y_jk per (job index, tier).
    x_col: dict[tuple[int, int, int], int]
    y_col: dict[tuple[int, int], int]
    #: Row of C3 per (slot, type, level), for reading the LP's prices of capacity (B1L).
    cap_rows: dict[tuple[int, str, int], int]


class _Rows:
    """Rows collected one by one into the arrays of a :class:`Relaxation`."""

    def __init__(self) -> None:
        self.starts, self.cols, self.coefs = [0], [], []  # type: ignore[var-annotated]
        self.lo: list[float] = []
        self.hi: list[float] = []

    def add(self, cols: list[int], coefs: list[float], lo: float, hi: float) -> None:
        self.cols += cols
        self.coefs += coefs
        self.starts.append(len(self.cols))
        self.lo.append(lo)
        self.hi.append(hi)


def whole_slot_weights(data: ModelData, job: JobData) -> list[tuple[float, ...]]:
    """The weight vectors of the rows B1c of ``job``: per option, the GPUs it takes at each
    level of C3 of each type, its GPUs over every type, and 1 (slots)."""
    out = {tuple(float(o.n) for o in job.options), tuple(1.0 for _ in job.options)}
    for g in {o.gpu_type for o in job.options}:
        for s in data.levels[g]:
            out.add(tuple(float(data.usage(o, s)) if o.gpu_type == g else 0.0 for o in job.options))
    return sorted(out)


def relax_l1(data: ModelData, deadline=None, *, whole_slots: bool = True) -> L1Relaxation:
    """B1: ``max Σ v y`` over x, y, z in [0, 1] with C3 (every level), C4, C5, C6 (work
    coefficients capped at W: B1a), C7, and the slot-count rows B1b; with ``whole_slots``
    also the rows B1c (:mod:`.cuts`)."""
    n = 0
    cost: list[float] = []
    ub: list[float] = []
    lb: list[float] = []
    rows = _Rows()
    z_col: dict[int, int] = {}
    x_col: dict[tuple[int, int, int], int] = {}
    y_col: dict[tuple[int, int], int] = {}
    # (t, g, s) -> [(col, usage)]
    capacity: dict[tuple[int, str, int], tuple[list[int], list[float]]] = {}
    tick = Ticker(deadline, "building the LP bound")

    def new(c: float, lo: float = 0.0, hi: float = 1.0) -> int:
        nonlocal n
        cost.append(c)
        lb.append(lo)
        ub.append(hi)
        n += 1
        return n - 1

    for job in data.jobs:
        if not job.is_slo:
            continue
        tick()
        z = z_col[job.index] = new(0.0, 1.0 if job.admitted_before else 0.0)
        ys = [new(tier.value) for tier in job.tiers]
        y_col.update(((job.index, k), c) for k, c in enumerate(ys))
        rows.add([*ys, z], [1.0] * len(ys) + [-1.0], 0.0, 0.0)  # C4
        last = min(data.T, max(t.slots_before for t in job.tiers))
        x_by_slot: list[list[tuple[int, int]]] = []
        for t in range(job.arrival, last):
            xs = [(new(0.0), o) for o in range(len(job.options))]
            x_by_slot.append(xs)
            x_col.update(((job.index, t, o), c) for c, o in xs)
            rows.add([c for c, _ in xs] + [z], [1.0] * len(xs) + [-1.0], -math.inf, 0.0)  # C7
            for col, o in xs:
                opt = job.options[o]
                for s in data.levels[opt.gpu_type]:
                    use = data.usage(opt, s)
                    if use:
                        entry = capacity.setdefault((t, opt.gpu_type, s), ([], []))
                        entry[0].append(col)
                        entry[1].append(float(use))
        fastest = max((o.work for o in job.options), default=0)
        for k, tier in enumerate(job.tiers):
            end = min(tier.slots_before, data.T) - job.arrival
            done = [xo for slot in x_by_slot[: max(0, end)] for xo in slot]
            need = ys[: k + 1]
            # C6 with each slot's work capped at W (B1a): one slot that finishes the job counts
            # as the whole job, which every integer point allows and the LP otherwise exploits.
            work = [float(min(job.options[o].work, job.work)) for _, o in done]
            rows.add(
                [c for c, _ in done] + need, work + [-float(job.work)] * len(need), 0.0, math.inf
            )
            # B1b: at least ⌈W / ω_max⌉ slots running before the deadline (implied by
            # B1c's row of weight 1 per slot when B1c is on).
            slots = math.ceil(job.work / fastest) if fastest > 0 else data.T + 1
            if not whole_slots:
                rows.add(
                    [c for c, _ in done] + need,
                    [1.0] * len(done) + [-float(slots)] * len(need),
                    0.0,
                    math.inf,
                )
            else:
                _whole_slot_rows(data, job, rows, done, need, end)
    cap_rows: dict[tuple[int, str, int], int] = {}
    for (t, g, s), (cap_cols, cap_use) in capacity.items():  # C3
        cap_rows[t, g, s] = len(rows.lo)
        rows.add(cap_cols, cap_use, -math.inf, float(data.capacity(t, g, s)))
    relaxation = Relaxation(
        c=np.asarray(cost, dtype=np.float64),
        starts=np.asarray(rows.starts, dtype=np.int64),
        cols=np.asarray(rows.cols, dtype=np.int64),
        coefs=np.asarray(rows.coefs, dtype=np.float64),
        lo=np.asarray(rows.lo, dtype=np.float64),
        hi=np.asarray(rows.hi, dtype=np.float64),
        lb=np.asarray(lb, dtype=np.float64),
        ub=np.asarray(ub, dtype=np.float64),
    )
    return L1Relaxation(relaxation, z_col, x_col, y_col, cap_rows)


def whole_slot_needs(
    data: ModelData, job: JobData, slots: int
) -> list[tuple[tuple[float, ...], float]] | None:
    """B1c for a tier ``slots`` slots after ``job``'s arrival: each weight vector ``w`` with
    its ``need_w > 0`` (``least_weight``), or None when no whole-slot plan finishes in
    ``slots`` (whether one does depends on the work and the slots only, not on ``w``)."""
    per_slot = tuple(o.work for o in job.options)
    out = []
    for w in whole_slot_weights(data, job):
        least = least_weight(job.work, per_slot, w, max(0, slots))
        if least is None:
            return None
        if least > 0:
            out.append((w, least))
    return out


def _whole_slot_rows(
    data: ModelData,
    job: JobData,
    rows: _Rows,
    done: list[tuple[int, int]],
    need: list[int],
    slots: int,
) -> None:
    """B1c for one tier: ``Σ_{t<e} Σ_o w_o x_jto ≥ need_w · Σ_{k'≤k} y_jk'`` for every weight
    vector ``w``, or ``Σ_{k'≤k} y_jk' ≤ 0`` when no whole-slot plan finishes by ``e``."""
    needs = whole_slot_needs(data, job, slots)
    if needs is None:
        rows.add(need, [1.0] * len(need), -math.inf, 0.0)
        return
    for w, least in needs:
        rows.add(
            [c for c, _ in done] + need,
            [w[o] for _, o in done] + [-least] * len(need),
            0.0,
            math.inf,
        )


@dataclass(frozen=True)
class L1Bound:
    #: A proven upper bound on L1 (instance units), or None.
    bound: float | None
    #: The LP's admission z_j per job index (fractional), or empty: a guide for heuristics.
    admit: dict[int, float]
    solved: bool
    seconds: float
    #: The LP's x_jto above 1e-6 and y_jk per (job index, tier), or empty: lp_round.py's guide.
    run: dict[tuple[int, int, int], float] = field(default_factory=dict)
    tier: dict[tuple[int, int], float] = field(default_factory=dict)
    #: The LP's multiplier of each C3 row per (slot, type, level), or empty: B1L's start.
    prices: dict[tuple[int, str, int], float] = field(default_factory=dict)


def l1_bound(
    data: ModelData, time_limit_s: float, deadline=None, *, whole_slots: bool = True
) -> L1Bound:
    """The bound B1 (with B1c unless ``whole_slots`` is False) within ``time_limit_s`` (a
    weaker valid one if the LP is interrupted). The limit covers building the relaxation:
    the LP gets what is left of it then (on a starved machine the build alone can take the
    share; the LP was given the whole limit on top of it)."""
    started = time.perf_counter()
    rel = relax_l1(data, deadline, whole_slots=whole_slots)
    big = len(rel.relaxation.c) > INTERIOR_COLUMNS
    left = time_limit_s - (time.perf_counter() - started)
    lp: LpBound = solve_relaxation(rel.relaxation, left, interior=big)
    if lp.x is None:
        return L1Bound(lp.bound, {}, lp.solved, lp.seconds)
    x = lp.x
    admit = {j: float(x[c]) for j, c in rel.z_col.items()}
    run = {key: float(x[c]) for key, c in rel.x_col.items() if x[c] > 1e-6}
    tier = {key: float(x[c]) for key, c in rel.y_col.items()}
    duals = lp.duals
    prices = {} if duals is None else {k: float(duals[r]) for k, r in rel.cap_rows.items()}
    return L1Bound(lp.bound, admit, lp.solved, lp.seconds, run, tier, prices)


#: The floating-point slack of a bound before it is floored, relative to its size (the LP's
#: weak duality and B1L are sums of some 10^5 products: their rounding is far below it).
FLOOR_SLACK = 1e-6


def integral_floor(data: ModelData, bound: float | None) -> float | None:
    """``bound`` floored when every SLO tier value is an integer (L1 is then an integer:
    formulations/admission.md, "An integral L1"), after a slack of ``FLOOR_SLACK`` for the
    bound's own rounding; else ``bound`` as it is."""
    if bound is None or not math.isfinite(bound):
        return bound
    if not all(float(t.value).is_integer() for j in data.jobs if j.is_slo for t in j.tiers):
        return bound
    return float(math.floor(bound + FLOOR_SLACK * max(1.0, abs(bound))))


__all__ = ["FLOOR_SLACK", "L1Bound", "integral_floor", "l1_bound", "relax_l1"]
