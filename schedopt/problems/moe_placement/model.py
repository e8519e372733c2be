"""MoE expert placement, written once (formulations/moe_placement.md, C1–C10, L1–L4 or W).

Variables: x[l,e,g] replica of (l, e) on GPU g; f[l,e,g] its token share; z[l] layer l's max
GPU load (µs); v the all-to-all transfer time (µs, L2); u[g] GPU g used; w[l,k] layer l in C7
group k; in weighted mode ``obj`` the weighted sum (W).

CP-SAT solves another discretisation of the same problem ("Integer scaling" in the formulation),
declared here and nowhere else:
- a domain: f is continuous with ``cpsat_scale = SHARE_RESOLUTION`` (CP-SAT's q = Q·f), z, v
  and obj continuous on the grid of their rounded units (``cpsat_scale = Q / unit``);
- data: the rows whose coefficients CP-SAT rounds (loads, transfer times, memory, the weights)
  come twice, a MILP block with the real data and a CP-SAT block with the rounded data. The
  quantities they bound (z, v, obj) are epigraph variables, so a point satisfying both blocks
  (a hint, checked against every block) exists: the max of the two values.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from schedopt.core.stopping import Deadline
from schedopt.model import CPSAT_ONLY, MILP_ONLY, Built, Expr, Level, Model, Sense, VarKind, Vars
from schedopt.model.core import Rows

from .data import LEX_REL_TOL, SHARE_RESOLUTION, ModelData, symmetry_classes, symmetry_weights

Q = SHARE_RESOLUTION
#: CP-SAT memory in integer units of 1/MEM_SCALE GiB (items rounded up, capacities down).
MEM_SCALE = 1_000_000
#: C10's weights r are resolved to 1/SYMMETRY_SCALE on every back-end (any positive weights
#: give a valid ordering; rounded ones are integers for CP-SAT without a variant block).
SYMMETRY_SCALE = 1000
#: Weighted mode: the smallest weighted unit is resolved to 1/WEIGHT_GRID for CP-SAT.
WEIGHT_GRID = 1000
#: Upper bounds of the epigraph variables are widened by this (rounded data stay inside).
UB_MARGIN = 1.01


@dataclass(frozen=True)
class MoeModel(Built):
    x: Vars
    f: Vars
    z: Vars
    v: Vars
    u: Vars
    w: Vars
    obj: Vars | None
    #: CP-SAT's rounded load and transfer coefficients, per layer (E_l, G), in µs.
    load_cp: tuple[np.ndarray, ...]
    comm_cp: tuple[np.ndarray, ...]
    #: Weighted mode, CP-SAT: the rounded weight of each level (µs of W per unit of the level).
    weights_cp: tuple[float, float, float, float] | None


def load_us(data: ModelData, i: int) -> np.ndarray:
    """(E_l, G) a_leg: µs on GPU g at the expert's full share."""
    return data.work(i)[:, None] / data.speed[None, :]


def comm_us(data: ModelData, i: int) -> np.ndarray:
    """(E_l, G) p_le κ_g: transfer µs of the expert's full share sent to g."""
    return data.pop[i][:, None] * data.comm[None, :]


def build_model(data: ModelData, deadline: Deadline | None = None) -> MoeModel:
    m = Model("moe_placement", deadline)
    L = data.L
    x, f = placement_columns(m, data)
    load_cp = tuple(data.int_load(i) * data.load_unit_us for i in range(L))
    comm_cp = tuple(data.int_comm(i) * data.comm_unit_us for i in range(L))
    z_top = [
        UB_MARGIN * float(np.maximum(load_us(data, i), load_cp[i]).sum(axis=0).max()) + 1.0
        for i in range(L)
    ]
    z = m.add_vars(
        "z",
        ((i,) for i in range(L)),
        VarKind.CONTINUOUS,
        0.0,
        z_top,
        cpsat_scale=Q / data.load_unit_us,
    )
    v_top = (
        UB_MARGIN
        * sum(float(np.maximum(comm_us(data, i), comm_cp[i]).max(axis=1).sum()) for i in range(L))
        + 1.0
    )
    v = m.add_vars(
        "v", [("L2",)], VarKind.CONTINUOUS, 0.0, v_top, cpsat_scale=Q / data.comm_unit_us
    )
    u, w = placement_rows(m, data, x, f)
    _load_rows(m, data, f, z, load_cp)
    has_comm = _comm_rows(m, data, f, v, comm_cp)

    l1 = Expr.of(z.cols, np.ones(L))
    l2 = Expr.of(v.cols, [1.0]) if has_comm else Expr.of([], [])
    l3 = Expr.of(u.cols, np.ones(len(u)))
    cur = data.current
    moved = [col for (i, e, g), col in x.items() if cur is not None and not cur[i][e, g]]
    l4 = Expr.of(moved, np.ones(len(moved)))
    obj, weights_cp = None, None
    if data.weights is None:
        first = Level("L1", l1, Sense.MINIMIZE, 0.0, LEX_REL_TOL, Q / data.load_unit_us)
    else:
        obj, weights_cp, scale = _weighted(m, data, (l1, l2, l3, l4), (z_top, v_top))
        first = Level("W", Expr.of(obj.cols, [1.0]), Sense.MINIMIZE, 0.0, LEX_REL_TOL, scale)
    m.add_level(first)
    m.add_level(Level("L2", l2, Sense.MINIMIZE, 0.0, LEX_REL_TOL, Q / data.comm_unit_us))
    m.add_level(Level("L3", l3, Sense.MINIMIZE, 0.5))
    m.add_level(Level("L4", l4, Sense.MINIMIZE, 0.5))
    return MoeModel(m, data, x, f, z, v, u, w, obj, load_cp, comm_cp, weights_cp)


def placement_columns(m: Model, data: ModelData) -> tuple[Vars, Vars]:
    """x and f, one column per (layer, expert, eligible GPU)."""
    keys = [
        (i, e, int(g))
        for i in range(data.L)
        for e in range(len(data.mem[i]))
        for g in np.flatnonzero(data.eligible[i][e])
    ]
    x = m.add_vars("x", keys)
    f = m.add_vars("f", keys, VarKind.CONTINUOUS, 0.0, 1.0, cpsat_scale=Q)
    return x, f


def placement_rows(m: Model, data: ModelData, x: Vars, f: Vars) -> tuple[Vars, Vars]:
    """The placement every model of the problem shares (the point-estimate one here, the
    scenario one in scenario.py): u and w, and the rows C1–C7, C9 and C10."""
    by_gpu: list[list[int]] = [[] for _ in range(data.G)]
    for (_, _, g), col in x.items():
        by_gpu[g].append(col)
    u = m.add_vars("u", [(g,) for g in range(data.G) if by_gpu[g]])
    groups = range(data.n_groups) if data.hierarchical else range(0)
    w = m.add_vars("w", [(i, k) for i in range(data.L) for k in groups])
    _share_rows(m, data, x, f)
    _memory_rows(m, data, x)
    if data.hierarchical:
        _group_rows(m, data, x, w)
    _symmetry_rows(m, data, x)
    with m.rows("C9") as c9:  # GPU used
        for g in range(data.G):
            if by_gpu[g]:
                n = len(by_gpu[g])
                c9.add([*by_gpu[g], u[g,]], [1.0] * n + [-float(n)], hi=0.0)
    return u, w


def _share_rows(m: Model, data: ModelData, x: Vars, f: Vars) -> None:
    """C2 at least one replica, C3 shares sum to one, C4 shares only to replicas, C5 cap."""
    with m.rows("C2") as c2, m.rows("C3", cpsat_scale=Q) as c3, m.rows("C5") as c5:
        for i in range(data.L):
            m.tick()
            for e in range(len(data.mem[i])):
                gs = np.flatnonzero(data.eligible[i][e])
                xs = [x[i, e, int(g)] for g in gs]
                c2.add(xs, [1.0] * len(xs), lo=1.0)
                c3.add([f[i, e, int(g)] for g in gs], [1.0] * len(xs), 1.0, 1.0)
                if data.replica_cap < len(gs):
                    c5.add(xs, [1.0] * len(xs), hi=float(data.replica_cap))
    # f − x ≤ 0; in CP-SAT q − Q·x ≤ 0 (the row times Q)
    with m.rows("C4", cpsat_scale=Q) as c4:
        for key, col in f.items():
            c4.add((col, x[key]), (1.0, -1.0), hi=0.0)


def _memory_rows(m: Model, data: ModelData, x: Vars) -> None:
    """C1 memory per GPU and C6 extra memory for replicas. CP-SAT variant: memory in integer
    µGiB, items rounded up and capacities down, so an integer-feasible placement fits in GiB
    (real sizes are not integers at any fixed scale)."""
    mem = {k: float(data.mem[k[0]][k[1]]) for k in x.keys}
    mem_cp = {k: float(math.ceil(s * MEM_SCALE - 1e-6)) for k, s in mem.items()}
    on_gpu: list[list[tuple[int, int, int]]] = [[] for _ in range(data.G)]
    for k in x.keys:
        on_gpu[int(k[2])].append(k)
    single = sum(float(s.sum()) for s in data.mem)
    single_cp = sum(math.ceil(float(s) * MEM_SCALE - 1e-6) for ms in data.mem for s in ms)
    for backends, size, unit in ((MILP_ONLY, mem, 1.0), (CPSAT_ONLY, mem_cp, MEM_SCALE)):
        with m.rows("C1", backends=backends) as c1:
            for g, ks in enumerate(on_gpu):
                if ks:
                    cap = float(data.cap[g])
                    hi = cap if unit == 1.0 else math.floor(cap * MEM_SCALE + 1e-6)
                    c1.add([x[k] for k in ks], [size[k] for k in ks], hi=hi)
        if np.isfinite(data.extra_memory_gib):
            extra = data.extra_memory_gib
            with m.rows("C6", backends=backends) as c6:
                budget = (
                    single + extra
                    if unit == 1.0
                    else single_cp + math.floor(extra * MEM_SCALE + 1e-6)
                )
                c6.add([x[k] for k in x.keys], [size[k] for k in x.keys], hi=budget)


def _group_rows(m: Model, data: ModelData, x: Vars, w: Vars) -> None:
    """C7 a layer's replicas inside one group: Σ_k w = 1; Σ_e x_leg ≤ n·w[l, k(g)]."""
    m.exactly_one("C7a", ([w[i, k] for k in range(data.n_groups)] for i in range(data.L)))
    with m.rows("C7b") as c7:
        for i in range(data.L):
            for g in range(data.G):
                row = [x[i, e, g] for e in range(len(data.mem[i])) if (i, e, g) in x]
                if row:
                    k = int(data.group[g])
                    c7.add([*row, w[i, k]], [1.0] * len(row) + [-float(len(row))], hi=0.0)


def _symmetry_rows(m: Model, data: ModelData, x: Vars) -> None:
    """C10 interchangeable GPUs ordered by a weighted count of their replicas."""
    r = [np.round(ri * SYMMETRY_SCALE) / SYMMETRY_SCALE for ri in symmetry_weights(data)]
    with m.rows("C10", cpsat_scale=SYMMETRY_SCALE) as c10:
        for cls in symmetry_classes(data):
            for a, b in itertools.pairwise(cls):
                cols: list[int] = []
                coefs: list[float] = []
                for i in range(data.L):
                    for e in range(len(data.mem[i])):
                        if (i, e, a) in x:
                            cols += [x[i, e, a], x[i, e, b]]
                            coefs += [float(r[i][e]), -float(r[i][e])]
                c10.add(cols, coefs, lo=0.0)


def _load_rows(
    m: Model, data: ModelData, f: Vars, z: Vars, load_cp: tuple[np.ndarray, ...]
) -> None:
    """C8 every GPU's load of layer l below z_l. CP-SAT variant: loads rounded to multiples of
    ``load_unit_us`` (``data.int_load``), z on that grid over Q."""
    scale = Q / data.load_unit_us
    for backends, coef, s in ((MILP_ONLY, None, 1.0), (CPSAT_ONLY, load_cp, scale)):
        with m.rows("C8", backends=backends, cpsat_scale=s) as c8:
            for i in range(data.L):
                m.tick()
                a = load_us(data, i) if coef is None else coef[i]
                layer_load_rows(c8, data, f, i, a, z[i,])


def layer_load_rows(rows: Rows, data: ModelData, f: Vars, i: int, a: np.ndarray, top: int) -> None:
    """C8 for layer ``i``: Σ_e a[e,g]·f[i,e,g] ≤ x[top] on every GPU g with load (``a`` in µs
    per unit share; the scenario model writes one such set per scenario)."""
    for g in range(data.G):
        row = [
            (f[i, e, g], float(a[e, g]))
            for e in range(len(data.mem[i]))
            if (i, e, g) in f and a[e, g] > 0
        ]
        if row:
            cols, coefs = zip(*row, strict=True)
            rows.add([*cols, top], [*coefs, -1.0], hi=0.0)


def _comm_rows(
    m: Model, data: ModelData, f: Vars, v: Vars, comm_cp: tuple[np.ndarray, ...]
) -> bool:
    """v ≥ Σ p κ f, the epigraph of L2. CP-SAT variant: ``data.int_comm``'s rounding. False
    when no share costs transfer time (L2 is then the constant 0)."""
    any_comm = False
    for backends, coef, s in ((MILP_ONLY, None, 1.0), (CPSAT_ONLY, comm_cp, Q / data.comm_unit_us)):
        cols, coefs = [], []
        for (i, e, g), col in f.items():
            c = comm_us(data, i)[e, g] if coef is None else coef[i][e, g]
            if c > 0:
                cols.append(col)
                coefs.append(float(c))
        if cols:
            any_comm = True
            with m.rows("L2", backends=backends, cpsat_scale=s) as rows:
                rows.add([*cols, v["L2",]], [*coefs, -1.0], hi=0.0)
    return any_comm


def _weighted(
    m: Model,
    data: ModelData,
    levels: tuple[Expr, Expr, Expr, Expr],
    tops: tuple[list[float], float],
) -> tuple[Vars, tuple[float, float, float, float], float]:
    """W: obj ≥ ω·(L1, L2, L3, L4). CP-SAT variant: every weight rounded to a multiple of a
    common unit (1/WEIGHT_GRID of the smallest weighted grid unit), as one integer objective
    needs; ``obj`` lives on that unit's grid."""
    assert data.weights is not None
    grid = (data.load_unit_us / Q, data.comm_unit_us / Q, 1.0, 1.0)
    scaled = [wt * g for wt, g in zip(data.weights, grid, strict=True)]
    base = min(s for s in scaled if s > 0) / WEIGHT_GRID
    weights_cp = tuple(round(s / base) * base / g for s, g in zip(scaled, grid, strict=True))
    n_moved = len(levels[3].cols)
    top = sum(
        max(a, b) * t
        for a, b, t in zip(
            data.weights, weights_cp, (sum(tops[0]), tops[1], data.G, n_moved), strict=True
        )
    )
    obj = m.add_vars(
        "obj", [("W",)], VarKind.CONTINUOUS, 0.0, UB_MARGIN * top + 1.0, cpsat_scale=1.0 / base
    )
    for backends, ws in ((MILP_ONLY, data.weights), (CPSAT_ONLY, weights_cp)):
        total = Expr.of([], [])
        for wt, ex in zip(ws, levels, strict=True):
            if wt:
                total = total + wt * ex
        with m.rows("W", backends=backends, cpsat_scale=1.0 / base) as rows:
            rows.add([*total.cols.tolist(), obj["W",]], [*total.coefs.tolist(), -1.0], hi=0.0)
    return obj, weights_cp, 1.0 / base  # type: ignore[return-value]
