"""The reconfiguration formulation, written once (formulations/reconfig.md, C1–C10, L1–L3)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from schedopt.core.stopping import Deadline
from schedopt.model import Built, Expr, Level, Model, Sense, VarKind, Vars

from .data import ModelData


@dataclass(frozen=True)
class ReconfigModel(Built):
    data: ModelData
    g: Vars  # (class, packing): hosts packed so
    n: Vars  # (kind,): pipelines
    bit: Vars  # (kind, j): bit j of n
    q: Vars  # (kind,): micro-batches of the fullest pipeline
    w: Vars  # (kind, j): bit · q
    y: Vars  # (kind,): used
    top: Vars  # ("pipe",), ("sync",), ("rec",): epigraphs, µs


def build_model(
    data: ModelData,
    deadline: Deadline | None = None,
    ub_us: int | None = None,
    lb_us: int | None = None,
) -> ReconfigModel:
    """``ub_us``: the first level of a known plan (C12): no optimum is worse, so a pipeline of
    kind k holds at most Q_k = ⌊(ub − a_k − r_k)/τ_k⌋ − p_k + 1 micro-batches, which replaces M
    as the big-M of C7 (the LP's bound rises with it). ``lb_us``: a proven lower bound of the
    first level (C13, from ``decomp:rate``'s R1–R4)."""
    m = Model("reconfig", deadline)
    M, T, kinds = data.M, len(data.templates), range(data.kinds)
    classes = range(len(data.classes))
    g = m.add_vars(
        "g",
        ((c, pi) for c in classes for pi in range(len(data.packings[c]))),
        VarKind.INTEGER,
        ub=[len(data.classes[c].hosts) for c in classes for _ in data.packings[c]],
    )
    taus = [data.templates[k].tau if k < T else data.kept[k - T].tau for k in kinds]
    ps = [data.templates[k].p if k < T else data.kept[k - T].p for k in kinds]
    syncs = [data.templates[k].sync if k < T else data.kept[k - T].sync for k in kinds]
    gpus = [data.templates[k].gpus if k < T else data.kept[k - T].gpus for k in kinds]
    rec = [data.recovery_us(k) if k < T else 0 for k in kinds]
    # C12: Q_k, the most micro-batches a pipeline of kind k holds in a plan no worse than ub
    most = [M] * data.kinds
    if ub_us is not None:
        for k in kinds:
            room = (ub_us - syncs[k] - rec[k]) // taus[k] - ps[k] + 1
            most[k] = int(min(M, max(room, 0)))
    caps = [data.caps[k] if most[k] else 0 for k in kinds]
    n = m.add_vars("n", ((k,) for k in kinds), VarKind.INTEGER, ub=caps)
    bit = m.add_vars("bit", ((k, j) for k in kinds for j in range(data.bits(k))))
    q = m.add_vars("q", ((k,) for k in kinds), VarKind.INTEGER, ub=most)
    w = m.add_vars("w", bit.keys, VarKind.INTEGER, ub=[most[k] for (k, _) in bit.keys])
    y = m.add_vars("y", ((k,) for k in kinds))
    top_pipe = max([(M + p - 1) * tau for p, tau in zip(ps, taus, strict=True)], default=0)
    if ub_us is not None:
        top_pipe = min(top_pipe, ub_us)
    top = m.add_vars(
        "top",
        [("pipe",), ("sync",), ("rec",)],
        VarKind.INTEGER,
        ub=[top_pipe, max(syncs, default=0), max(rec, default=0)],
    )

    # C1: hosts of a class — packed, or owned by kept pipelines
    with m.rows("C1") as rows:
        for c in classes:
            cols = [g[c, pi] for pi in range(len(data.packings[c]))]
            coefs = [1.0] * len(cols)
            for j, kk in enumerate(data.kept):
                own = dict(kk.host_classes).get(c, 0)
                if own:
                    cols.append(n[T + j,])
                    coefs.append(float(own))
            rows.add(cols, coefs, hi=len(data.classes[c].hosts))
    # C2: TP groups of each type (inside one host; failed GPUs in none)
    with m.rows("C2") as rows:
        for gt in data.group_types:
            cols, coefs = [], []
            for k in range(T):
                need = data.need(k)[gt]
                if need:
                    cols.append(n[k,])
                    coefs.append(float(need))
            for c in classes:
                for pi, pk in enumerate(data.packings[c]):
                    if pk[gt]:
                        cols.append(g[c, pi])
                        coefs.append(-float(pk[gt]))
            if cols:
                rows.add(cols, coefs, hi=0.0)
    # C6: binary expansion of n
    with m.rows("C6") as rows:
        for k in kinds:
            bits = range(data.bits(k))
            rows.add(
                [n[k,], *(bit[k, j] for j in bits)], [1.0, *(-(2.0**j) for j in bits)], 0.0, 0.0
            )
    # C7: w = bit · q (upper side), used links, the 1F1B time of the fullest pipeline
    with m.rows("C7") as rows:
        for (k, j), col in w.items():
            rows.add([col, q[k,]], [1.0, -1.0], hi=0.0)
            rows.add([col, bit[k, j]], [1.0, -float(most[k])], hi=0.0)
        for k in kinds:
            rows.add([n[k,], y[k,]], [1.0, -float(max(data.caps[k], 1))], hi=0.0)
            rows.add([n[k,], y[k,]], [1.0, -1.0], lo=0.0)
            rows.add([q[k,], y[k,]], [1.0, -float(most[k])], hi=0.0)
            rows.add([q[k,], y[k,]], [1.0, -1.0], lo=0.0)
    m.at_least_each(
        "C7.time",
        top["pipe",],
        (Expr.of([q[k,], y[k,]], [taus[k], (ps[k] - 1) * taus[k]]) for k in kinds),
    )
    # C11 (valid inequality, tightens the LP): a pipeline of kind k runs at most pipe/τ_k
    # micro-batches on G_k GPUs, and at most N GPUs survive, so pipe ≥ M·min_k(τ_k·G_k)/N.
    usable = len(data.instance.cluster.gpus()) - len(data.instance.failed_gpus)
    if len(kinds):
        floor = math.ceil(M * min(t * g_ for t, g_ in zip(taus, gpus, strict=True)) / usable)
        with m.rows("C11") as rows:
            rows.add([top["pipe",]], [1.0], lo=float(floor))
    # C8: the DP all-reduce of the largest shard
    m.at_least_each("C8", top["sync",], (Expr.of([y[k,]], [syncs[k]]) for k in kinds if syncs[k]))
    # C9: the pipelines hold the global batch
    with m.rows("C9") as rows:
        rows.add(list(w.cols), [2.0**j for (_, j) in w.keys], lo=float(M))
    # C10: amortised recovery of rebuilt pipelines
    m.at_least_each("C10", top["rec",], (Expr.of([y[k,]], [rec[k]]) for k in kinds if rec[k]))

    l1 = Expr.of([top["pipe",], top["sync",], top["rec",]], [1.0, 1.0, 1.0])
    if lb_us is not None:  # C13: a proven bound of L1 (valid: it cuts no plan)
        with m.rows("C13") as rows:
            rows.add([top["pipe",], top["sync",], top["rec",]], [1.0, 1.0, 1.0], lo=float(lb_us))
    # Every level is integer-valued: fixed within half a unit (a solver's 4320.99999999 for
    # 4321 must not cut 4321 off: measured, HiGHS then found L2 infeasible on toy-3x4-f2-s2).
    half = 0.5
    m.add_level(Level("L1", l1, Sense.MINIMIZE, tolerance=half))
    l2 = Expr.of([n[k,] for k in range(T)], [1.0] * T)
    m.add_level(Level("L2", l2, Sense.MINIMIZE, tolerance=half))
    l3 = Expr.of([n[k,] for k in kinds], [float(x) for x in gpus])
    m.add_level(Level("L3", l3, Sense.MINIMIZE, tolerance=half))
    return ReconfigModel(m, data, g, n, bit, q, w, y, top)
