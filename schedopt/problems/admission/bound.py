"""A bound on L1 for the whole instance that does not depend on CP-SAT finishing: the LP
relaxation of the deadline rows, strengthened (formulations/admission.md, "The LP bound B1").

Only SLO jobs and the slots before their last deadline enter: best-effort jobs and later slots
only take capacity, so leaving them out (at 0) keeps the same L1 optimum. C1 is implied by C7
with ``z ≤ 1``. The bound is weak duality evaluated from HiGHS's duals
(:mod:`schedopt.model.lp_bound`), so it holds whatever tolerance the LP was solved to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from schedopt.core.stopping import Ticker
from schedopt.model.lp_bound import LpBound, Relaxation, solve_relaxation

from .data import ModelData

#: From this many columns B1 is solved by the interior point method (model/lp_bound.py): at
#: 32k columns (1,024 GPUs × 3,200 jobs) 4.5 s against more than 8 s for the dual simplex;
#: at 256 GPUs × 800 jobs (8k) the simplex is faster (0.8 s against 2.2 s).
INTERIOR_COLUMNS = 25_000


@dataclass(frozen=True)
class L1Relaxation:
    relaxation: Relaxation
    #: Column of z_j per SLO job index (data.jobs index), for reading the LP's admissions.
    z_col: dict[int, int]


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


def relax_l1(data: ModelData, deadline=None) -> L1Relaxation:
    """B1: ``max Σ v y`` over x, y, z in [0, 1] with C3 (every level), C4, C5, C6 (work
    coefficients capped at W: B1a), C7, and the slot-count rows B1b."""
    n = 0
    cost: list[float] = []
    ub: list[float] = []
    lb: list[float] = []
    rows = _Rows()
    z_col: dict[int, int] = {}
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
        rows.add([*ys, z], [1.0] * len(ys) + [-1.0], 0.0, 0.0)  # C4
        last = min(data.T, max(t.slots_before for t in job.tiers))
        x_by_slot: list[list[tuple[int, int]]] = []
        for t in range(job.arrival, last):
            xs = [(new(0.0), o) for o in range(len(job.options))]
            x_by_slot.append(xs)
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
            # B1b: at least ⌈W / ω_max⌉ slots running before the deadline.
            slots = math.ceil(job.work / fastest) if fastest > 0 else data.T + 1
            rows.add(
                [c for c, _ in done] + need,
                [1.0] * len(done) + [-float(slots)] * len(need),
                0.0,
                math.inf,
            )
    for (_, g, s), (cap_cols, cap_use) in capacity.items():  # C3
        rows.add(cap_cols, cap_use, -math.inf, float(data.chunk_capacity[g, s]))
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
    return L1Relaxation(relaxation, z_col)


@dataclass(frozen=True)
class L1Bound:
    #: A proven upper bound on L1 (instance units), or None.
    bound: float | None
    #: The LP's admission z_j per job index (fractional), or empty: a guide for heuristics.
    admit: dict[int, float]
    solved: bool
    seconds: float


def l1_bound(data: ModelData, time_limit_s: float, deadline=None) -> L1Bound:
    """The bound B1 within ``time_limit_s`` (a weaker valid one if the LP is interrupted)."""
    rel = relax_l1(data, deadline)
    big = len(rel.relaxation.c) > INTERIOR_COLUMNS
    lp: LpBound = solve_relaxation(rel.relaxation, time_limit_s, interior=big)
    admit = {} if lp.x is None else {j: float(lp.x[c]) for j, c in rel.z_col.items()}
    return L1Bound(lp.bound, admit, lp.solved, lp.seconds)


__all__ = ["L1Bound", "l1_bound", "relax_l1"]
