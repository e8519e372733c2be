"""The rate relaxation and the fixed-time decomposition of the template model
(formulations/reconfig.md, "The rate bound and the fixed-time method", R1–R4; #17).

The monolithic model's weak part is the product pipelines × micro-batches (C6–C9). With the
pipe time ``π`` fixed, a pipeline of kind k holds at most ``c_k(π) = ⌊π/τ_k⌋ − p_k + 1``
micro-batches and the question "can the groups hold M micro-batches?" is linear: a packing
MILP (R3). Relaxed (n real, ``c_k`` without the floor) and over ``π`` it is one linear-fractional
program, solved as one LP by the Charnes–Cooper substitution (R2): a proven bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import highspy
import numpy as np

from schedopt.backends.highs_quiet import quiet_highs
from schedopt.core.stopping import Deadline

from .data import ModelData
from .plan import Raw, first_level_us, hand_out

INF = highspy.kHighsInf


@dataclass(frozen=True)
class Kind:
    k: int  # index into the model's kinds (templates, then kept kinds)
    tau: int
    p: int
    sync: int
    rec: int


def kinds(data: ModelData) -> list[Kind]:
    T = len(data.templates)
    out = []
    for k in range(data.kinds):
        if k < T:
            tp = data.templates[k]
            out.append(Kind(k, tp.tau, tp.p, tp.sync, data.recovery_us(k)))
        else:
            kk = data.kept[k - T]
            out.append(Kind(k, kk.tau, kk.p, kk.sync, 0))
    return out


class Packing:
    """The packing rows C1, C2 over a subset of kinds, as a HiGHS model: columns
    ``n_k`` (per kind of the subset), ``g_cπ`` (hosts of class c packed by π) and, for the
    relaxation, ``u`` (the Charnes–Cooper scale)."""

    def __init__(self, data: ModelData, subset: list[Kind], integer: bool, scaled: bool):
        self.data, self.subset = data, subset
        T = len(data.templates)
        h = self.h = quiet_highs()
        # no `threads`: HiGHS fixes its pool at a process's first run and fails any later run
        # asking for another size (emit_highs.py)
        self.gcols: list[tuple[int, int]] = [
            (c, pi) for c in range(len(data.classes)) for pi in range(len(data.packings[c]))
        ]
        nk, ng = len(subset), len(self.gcols)
        self.nk, self.ng = nk, ng
        self.u = nk + ng if scaled else None
        ncols = nk + ng + (1 if scaled else 0)
        caps = [float(data.caps[kd.k]) for kd in subset]
        hosts = [float(len(data.classes[c].hosts)) for c, _ in self.gcols]
        ub = caps + hosts + ([INF] if scaled else [])
        if scaled:  # bounds become rows x ≤ cap·u
            h.addVars(ncols, np.zeros(ncols), np.full(ncols, INF))
        else:
            h.addVars(ncols, np.zeros(ncols), np.array(ub))
        if integer:
            h.changeColsIntegrality(
                ncols, np.arange(ncols, dtype=np.int32), np.ones(ncols, dtype=np.uint8)
            )
        rhs_scale = (lambda v: (0.0, v)) if not scaled else (lambda v: (-v, 0.0))

        def row(idx: list[int], val: list[float], hi_const: float) -> None:
            coef_u, hi = rhs_scale(hi_const)
            if scaled and coef_u:
                idx, val = [*idx, self.u], [*val, coef_u]  # type: ignore[list-item]
            h.addRow(-INF, hi, len(idx), np.array(idx, dtype=np.int32), np.array(val))

        # C1: hosts per class, packed or owned by kept pipelines
        for c, cls in enumerate(data.classes):
            idx = [nk + j for j, (cc, _) in enumerate(self.gcols) if cc == c]
            val = [1.0] * len(idx)
            for i, kd in enumerate(subset):
                if kd.k >= T:
                    own = dict(data.kept[kd.k - T].host_classes).get(c, 0)
                    if own:
                        idx.append(i)
                        val.append(float(own))
            row(idx, val, float(len(cls.hosts)))
        # C2: TP groups of each type
        for gt in data.group_types:
            idx, val = [], []
            for i, kd in enumerate(subset):
                if kd.k < T and data.need(kd.k)[gt]:
                    idx.append(i)
                    val.append(float(data.need(kd.k)[gt]))
            for j, (c, pi) in enumerate(self.gcols):
                if data.packings[c][pi][gt]:
                    idx.append(nk + j)
                    val.append(-float(data.packings[c][pi][gt]))
            if idx:
                h.addRow(-INF, 0.0, len(idx), np.array(idx, dtype=np.int32), np.array(val))
        if scaled:  # n_k ≤ N_k, g ≤ H_c, scaled by u
            for i, cap in enumerate(ub[:-1]):
                row([i], [1.0], cap)


def pipe_bound_us(data: ModelData, subset: list[Kind], deadline: Deadline | None) -> float | None:
    """R2: the least π over the LP relaxation of plans using only ``subset``: min over n of
    (M + Σ n_k (p_k − 1)) / Σ n_k/τ_k, by Charnes–Cooper (x = u·n). ``math.inf`` when the LP
    is proven infeasible (no plan uses only ``subset``, R2), None when it was interrupted."""
    if not subset:
        return math.inf
    pk = Packing(data, subset, integer=False, scaled=True)
    h, nk = pk.h, pk.nk
    t0 = float(min(kd.tau for kd in subset))
    cost = np.zeros(nk + pk.ng + 1)
    cost[:nk] = [t0 * (kd.p - 1) for kd in subset]
    assert pk.u is not None
    cost[pk.u] = t0 * data.M
    h.changeColsCost(len(cost), np.arange(len(cost), dtype=np.int32), cost)
    rate = [t0 / kd.tau for kd in subset]  # Σ x_k t0/τ_k = 1
    h.addRow(1.0, 1.0, nk, np.arange(nk, dtype=np.int32), np.array(rate))
    if deadline is not None:
        h.setOptionValue("time_limit", max(deadline.remaining(), 0.0))
    h.run()
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kInfeasible:
        return math.inf  # not one pipeline fits, even fractionally (R2): no plan
    if status != highspy.HighsModelStatus.kOptimal:
        return None  # interrupted: no bound from this subset
    return float(h.getInfo().objective_function_value)


def fixed_time_plan(
    data: ModelData, subset: list[Kind], pi: int, deadline: Deadline | None
) -> tuple[Raw | None, bool]:
    """R3: with the pipe time fixed at ``pi``, can the groups hold M micro-batches (a packing
    MILP over integer pipelines and host packings, pipelines of kind k holding at most
    ``c_k(π)`` each)? (a plan, True) when they can; (None, True) when HiGHS proved they
    cannot; (None, False) when it was interrupted (out of time) first."""
    usable = [kd for kd in subset if pi // kd.tau - kd.p + 1 >= 1]
    if not usable:
        return None, True
    pk = Packing(data, usable, integer=True, scaled=False)
    h, nk = pk.h, pk.nk
    cap = [min(data.M, pi // kd.tau - kd.p + 1) for kd in usable]
    # maximise z = min(M, Σ c_k n_k), the micro-batches held up to M: a point holding M is
    # optimal at once (no search past it), and an optimum below M is the proof R3 needs
    z = nk + pk.ng
    h.addVar(0.0, float(data.M))
    idx = np.array([*range(nk), z], dtype=np.int32)
    h.addRow(0.0, INF, nk + 1, idx, np.array([*(float(c) for c in cap), -1.0]))
    h.changeColCost(z, -1.0)
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 0.5)  # z is a whole number at the optimum
    # a cut-off: only points holding M count, so a node that cannot reach M is pruned
    h.setOptionValue("objective_bound", -float(data.M) + 0.5)
    if deadline is not None:
        left = deadline.remaining()
        if left <= 0:
            return None, False
        h.setOptionValue("time_limit", left)
    h.run()
    status = h.getModelStatus()
    found = h.getInfo().primal_solution_status == 2
    x = np.rint(np.array(h.getSolution().col_value)[:z]).astype(np.int64) if found else None
    held = 0.0 if x is None else float(np.dot(cap, x[:nk]))
    if held < data.M:
        # no point past the cut-off (infeasible), or a dual bound below M: proven
        status_ = highspy.HighsModelStatus
        proven = status == status_.kInfeasible or (
            status in (status_.kOptimal, status_.kObjectiveBound)
            and h.getInfo().mip_dual_bound > -data.M + 0.5 - 1e-6
        )
        return None, proven
    assert x is not None
    raw = Raw([[] for _ in data.classes])
    for j, (c, pi_) in enumerate(pk.gcols):
        raw.packs[c].extend([pi_] * int(x[nk + j]))
    pipes, caps = [], []
    for i, kd in enumerate(usable):
        for _ in range(int(x[i])):
            pipes.append(kd.k)
            caps.append(cap[i])
    shares = hand_out(caps, data.M)
    assert shares is not None, "the packing holds M micro-batches"
    raw.pipelines = [(k, m) for k, m in zip(pipes, shares, strict=True) if m > 0]
    return raw, True


@dataclass
class _Threshold:
    """Plans whose largest all-reduce is ``sync`` and largest recovery ``rec``: their kinds,
    and ``lo``, the least pipe time not yet ruled out (R1: L1 ≥ lo + sync + rec)."""

    sync: int
    rec: int
    subset: list[Kind]
    lo: int
    lp_done: bool = False

    @property
    def bound(self) -> float:
        return self.lo + self.sync + self.rec


def search(
    data: ModelData, start: Raw | None, deadline: Deadline
) -> tuple[Raw | None, int | None, dict[str, float]]:
    """R4: best-first bisection over (all-reduce, recovery) thresholds and the pipe time,
    each step an LP (R2) or a fixed-time MILP (R3); anytime: (the best plan, a proven lower
    bound on L1 over the template space, counts) when the deadline passes or the two meet."""
    every = kinds(data)
    floor_all = pipe_bound_us(data, every, deadline)
    stats = {"lp": 1.0, "milp": 0.0}
    if floor_all is None:
        return start, None, stats
    if math.isinf(floor_all):  # R2 over every kind proven infeasible: no plan at all
        stats["infeasible"] = 1.0
        return None, None, stats
    ub_raw, ub = start, (None if start is None else first_level_us(data, start))
    lo0 = max(0, math.ceil(floor_all - 1e-6))
    cuts = [
        _Threshold(d, r, [kd for kd in every if kd.sync <= d and kd.rec <= r], lo0)
        for d in sorted({kd.sync for kd in every})
        for r in sorted({kd.rec for kd in every})
    ]
    cuts = [c for c in cuts if c.subset]
    while True:
        live = [c for c in cuts if c.bound < (math.inf if ub is None else ub)]
        bound = min([c.bound for c in live] + ([ub] if ub is not None else []), default=math.inf)
        if not live or deadline.expired():
            if ub is None and all(math.isinf(c.lo) for c in cuts):
                stats["infeasible"] = 1.0  # every plan's kinds are some pair's (R1): none
            return ub_raw, (None if math.isinf(bound) else int(bound)), stats
        cut = min(live, key=lambda c: c.bound)
        if not cut.lp_done:
            lp = pipe_bound_us(data, cut.subset, deadline)
            stats["lp"] += 1
            if lp is None and deadline.expired():  # interrupted: the loop returns
                continue
            cut.lp_done = True
            if lp is not None:  # (HiGHS failing otherwise proves nothing: lo stays)
                cut.lo = math.inf if math.isinf(lp) else max(cut.lo, math.ceil(lp - 1e-6))  # type: ignore[assignment]
            continue
        if ub is None:
            probe = max(cut.lo + 1, math.ceil(cut.lo * 1.05))
        else:
            probe = (cut.lo + (ub - cut.sync - cut.rec - 1)) // 2
        raw, proven = fixed_time_plan(data, cut.subset, probe, deadline)
        stats["milp"] += 1
        if raw is not None:
            value = first_level_us(data, raw)
            if ub is None or value < ub:  # value ≤ probe + sync + rec: the bisection moves
                ub_raw, ub = raw, value
        elif proven and all(probe // kd.tau - kd.p + 1 >= data.M for kd in cut.subset):
            # every pipeline could hold all M micro-batches at this pipe time, and longer ones
            # change nothing (c_k(π) is capped at M): not one pipeline fits, at any π (R3)
            cut.lo = math.inf  # type: ignore[assignment]
        elif proven:
            cut.lo = probe + 1
        else:
            return ub_raw, (None if math.isinf(bound) else int(bound)), stats
