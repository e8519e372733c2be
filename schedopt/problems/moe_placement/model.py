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

from .data import LEX_REL_TOL, SHARE_RESOLUTION, ModelData
from .symmetry import symmetry_classes, symmetry_weights

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
    scenario one in scenario.py): u and w, and the rows C1–C7, C9 and C10. Rows are built in
    bulk from the keys' order (:func:`layer_cols`), not key by key: 4.4 s of the 64-GPU
    OLMoE model's build went to looking keys up one at a time."""
    on_gpu = _by_gpu(data, x)
    u = m.add_vars("u", [(g,) for g in range(data.G) if len(on_gpu[g])])
    groups = range(data.n_groups) if data.hierarchical else range(0)
    w = m.add_vars("w", [(i, k) for i in range(data.L) for k in groups])
    _share_rows(m, data, x, f)
    _memory_rows(m, data, x, on_gpu)
    if data.hierarchical:
        _group_rows(m, data, x, w)
    _symmetry_rows(m, data, x)
    with m.rows("C9") as c9:  # GPU used
        for g in range(data.G):
            n = len(on_gpu[g])
            if n:
                c9.add([*(x.start + on_gpu[g]).tolist(), u[g,]], [1.0] * n + [-float(n)], hi=0.0)
    return u, w


def _key_gpu(data: ModelData) -> np.ndarray:
    """The GPU of every key of a :func:`placement_columns` block, in key order."""
    return np.concatenate([np.nonzero(e)[1] for e in data.eligible]).astype(np.int64)


def _by_gpu(data: ModelData, x: Vars) -> list[np.ndarray]:
    """Per GPU, the positions (in key order) of x's keys on it."""
    gpu = _key_gpu(data)
    order = np.argsort(gpu, kind="stable")
    bounds = np.searchsorted(gpu[order], np.arange(data.G + 1))
    return [order[bounds[g] : bounds[g + 1]] for g in range(data.G)]


def _segments(counts: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def _share_rows(m: Model, data: ModelData, x: Vars, f: Vars) -> None:
    """C2 at least one replica, C3 shares sum to one, C4 shares only to replicas, C5 cap:
    one row per expert over its eligible GPUs (consecutive keys)."""
    counts = np.concatenate([e.sum(axis=1) for e in data.eligible]).astype(np.int64)
    starts = _segments(counts)
    n = len(x)
    ones = np.ones(n)
    capped = counts > data.replica_cap
    if capped.any():
        first = starts[:-1][capped]
        cols = np.concatenate(
            [np.arange(a, a + c) for a, c in zip(first, counts[capped], strict=True)]
        )
        m.add_rows(
            "C5", _segments(counts[capped]), x.start + cols, np.ones(len(cols)), -math.inf,
            float(data.replica_cap),
        )  # fmt: skip
    if n:
        m.add_rows("C3", starts, f.cols, ones, 1.0, 1.0, cpsat_scale=Q)
        m.add_rows("C2", starts, x.cols, ones, 1.0, math.inf)
        # f − x ≤ 0; in CP-SAT q − Q·x ≤ 0 (the row times Q)
        pairs = np.column_stack([f.cols, x.cols]).ravel()
        m.add_rows(
            "C4", np.arange(0, 2 * n + 1, 2), pairs, np.tile([1.0, -1.0], n), -math.inf, 0.0,
            cpsat_scale=Q,
        )  # fmt: skip


def _memory_rows(m: Model, data: ModelData, x: Vars, on_gpu: list[np.ndarray]) -> None:
    """C1 memory per GPU and C6 extra memory for replicas. CP-SAT variant: memory in integer
    µGiB, items rounded up and capacities down, so an integer-feasible placement fits in GiB
    (real sizes are not integers at any fixed scale)."""
    mem = np.concatenate(
        [np.repeat(data.mem[i], data.eligible[i].sum(axis=1)) for i in range(data.L)]
    ).astype(float)
    mem_cp = np.ceil(mem * MEM_SCALE - 1e-6)
    used = [g for g in range(data.G) if len(on_gpu[g])]
    order = np.concatenate([on_gpu[g] for g in used]) if used else np.zeros(0, dtype=np.int64)
    starts = _segments(np.array([len(on_gpu[g]) for g in used], dtype=np.int64))
    caps = data.cap[used].astype(float)
    single = sum(float(s.sum()) for s in data.mem)
    single_cp = sum(math.ceil(float(s) * MEM_SCALE - 1e-6) for ms in data.mem for s in ms)
    for backends, size, unit in ((MILP_ONLY, mem, 1.0), (CPSAT_ONLY, mem_cp, MEM_SCALE)):
        if used:
            hi = caps if unit == 1.0 else np.floor(caps * MEM_SCALE + 1e-6)
            m.add_rows("C1", starts, x.start + order, size[order], -math.inf, hi, backends=backends)
        if np.isfinite(data.extra_memory_gib):
            extra = data.extra_memory_gib
            budget = (
                single + extra if unit == 1.0 else single_cp + math.floor(extra * MEM_SCALE + 1e-6)
            )
            m.add_rows("C6", [0, len(x)], x.cols, size, -math.inf, budget, backends=backends)


def _group_rows(m: Model, data: ModelData, x: Vars, w: Vars) -> None:
    """C7 a layer's replicas inside one group: Σ_k w = 1; Σ_e x_leg ≤ n·w[l, k(g)]."""
    m.exactly_one("C7a", ([w[i, k] for k in range(data.n_groups)] for i in range(data.L)))
    with m.rows("C7b") as c7:
        for i in range(data.L):
            cols = layer_cols(data, x, i)
            for g in range(data.G):
                row = cols[:, g][cols[:, g] >= 0].tolist()
                if row:
                    k = int(data.group[g])
                    c7.add([*row, w[i, k]], [1.0] * len(row) + [-float(len(row))], hi=0.0)


def _symmetry_rows(m: Model, data: ModelData, x: Vars) -> None:
    """C10 interchangeable GPUs ordered by a weighted count of their replicas."""
    r = [np.round(ri * SYMMETRY_SCALE) / SYMMETRY_SCALE for ri in symmetry_weights(data)]
    classes = symmetry_classes(data)
    if not classes:
        return
    cols = [layer_cols(data, x, i) for i in range(data.L)]
    with m.rows("C10", cpsat_scale=SYMMETRY_SCALE) as c10:
        for cls in classes:
            for a, b in itertools.pairwise(cls):
                row_cols, row_coefs = [], []
                for i in range(data.L):
                    on = cols[i][:, a] >= 0  # the same eligibility on b (same class)
                    row_cols.append(np.column_stack([cols[i][on, a], cols[i][on, b]]).ravel())
                    row_coefs.append(np.column_stack([r[i][on], -r[i][on]]).ravel())
                c10.add(
                    np.concatenate(row_cols).tolist(),
                    np.concatenate(row_coefs).astype(float).tolist(),
                    lo=0.0,
                )


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


def layer_cols(data: ModelData, block: Vars, i: int) -> np.ndarray:
    """(E_l, G) the columns of layer ``i`` in a block of :func:`placement_columns` (x or f),
    -1 where the expert cannot go: its keys run layer by layer, expert by expert, over the
    eligible GPUs in order, so they fill the eligibility mask row by row."""
    offset = sum(int(e.sum()) for e in data.eligible[:i])
    out = np.full(data.eligible[i].shape, -1, dtype=np.int64)
    out[data.eligible[i]] = block.start + offset + np.arange(int(data.eligible[i].sum()))
    return out


def layer_load_rows(rows: Rows, data: ModelData, f: Vars, i: int, a: np.ndarray, top: int) -> None:
    """C8 for layer ``i``: Σ_e a[e,g]·f[i,e,g] ≤ x[top] on every GPU g with load (``a`` in µs
    per unit share; the scenario model writes one such set per scenario)."""
    cols = layer_cols(data, f, i)
    on = (cols >= 0) & (a > 0)
    for g in np.flatnonzero(on.any(axis=0)):
        es = np.flatnonzero(on[:, g])
        rows.add([*cols[es, g].tolist(), top], [*a[es, g].tolist(), -1.0], hi=0.0)


def _comm_rows(
    m: Model, data: ModelData, f: Vars, v: Vars, comm_cp: tuple[np.ndarray, ...]
) -> bool:
    """v ≥ Σ p κ f, the epigraph of L2. CP-SAT variant: ``data.int_comm``'s rounding. False
    when no share costs transfer time (L2 is then the constant 0)."""
    any_comm = False
    real = tuple(comm_us(data, i) for i in range(data.L))
    for backends, coef, s in ((MILP_ONLY, real, 1.0), (CPSAT_ONLY, comm_cp, Q / data.comm_unit_us)):
        # f's columns in key order are the eligible entries of each layer, row by row
        c = np.concatenate([coef[i][data.eligible[i]] for i in range(data.L)])
        keep = c > 0
        if keep.any():
            any_comm = True
            with m.rows("L2", backends=backends, cpsat_scale=s) as rows:
                cols = f.cols[keep].tolist()
                rows.add([*cols, v["L2",]], [*c[keep].astype(float).tolist(), -1.0], hi=0.0)
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
