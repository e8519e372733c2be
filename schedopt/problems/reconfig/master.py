"""The master problem over pipeline columns (formulations/reconfig.md, Q8′ and W7; #17).

Columns ``y_j ≥ 0`` are pipelines (a type of TP group per position), each holding ``h_j``
micro-batches and needing ``need_jγ`` groups of type ``γ``. The groups come either from a
fixed supply ``n_γ`` (a cut of the surviving GPUs, W7) or from the hosts' packings
(``g_cπ ≤ H_c`` hosts of class ``c`` packed by ``π``, Q4's rows; the bound's prices, Q8′).
``maximise Σ h_j y_j`` (capped at ``cap``), as an LP (its type rows' duals are the prices) or
a MILP (integer ``y`` and ``g``: whole pipelines on whole hosts).
"""

from __future__ import annotations

from collections import Counter

import highspy
import numpy as np

from schedopt.backends.highs_quiet import quiet_highs
from schedopt.core.stopping import Deadline

INF = highspy.kHighsInf

Packings = list[tuple[int, list[Counter]]]  # (hosts of the class, its packings' group counts)


def solve_master(
    values: np.ndarray,
    need: np.ndarray,
    types: list,
    supply: np.ndarray | Packings,
    integer: bool,
    cap: float | None,
    deadline: Deadline | None,
    start: np.ndarray | None = None,
    levels: np.ndarray | None = None,
    max_nodes: int | None = None,
) -> tuple[float, np.ndarray | None, np.ndarray | None]:
    """(value, x, prices μ ≥ 0 per type, from the LP's duals; None for a MILP): ``x`` the
    columns' ``y``, then the packings' ``g`` in ``supply``'s order. ``need`` is (columns ×
    types); ``supply`` a vector per type or the hosts' packings. ``levels`` (a MILP with a
    ``cap``; levels × columns): the micro-batches each column holds at each level of the
    all-reduce, one level chosen (binary ``u``, appended to ``x``) in place of ``values``'
    row. ``start``: hosts per packing (``g``) of a known plan, a MILP's partial start (its
    positive entries fixed, HiGHS completes the rest or drops it; a start changes what is
    found first, never validity). ``max_nodes``: a MILP's budget of branch-and-bound nodes
    (deterministic mode: work, not time; its serial search is then reproducible), its
    incumbent if it has one when the budget runs out."""
    h = quiet_highs()
    ny, nt = need.shape
    packs = [] if isinstance(supply, np.ndarray) else [(n, pk) for n, ps in supply for pk in ps]
    ng = len(packs)
    z = ny + ng  # min(cap, Σ h y) when capped
    h.addVars(z + 1, np.zeros(z + 1), np.array([INF] * ny + [float(n) for n, _ in packs] + [INF]))
    if cap is not None:
        h.changeColBounds(z, 0.0, float(cap))
        h.changeColCost(z, -1.0)
        at_z = np.arange(ny + 1, dtype=np.int32)
        at_z[-1] = z
        if levels is None:
            h.addRow(0.0, INF, ny + 1, at_z, np.append(values, -1.0))  # z ≤ Σ h_j y_j
        else:  # z ≤ Σ_j v_kj y_j + cap (1 − u_k) for every level k, one level chosen
            k_n = len(levels)
            h.addVars(k_n, np.zeros(k_n), np.ones(k_n))
            at_u = np.arange(z + 1, z + 1 + k_n, dtype=np.int32)
            h.changeColsIntegrality(k_n, at_u, np.ones(k_n, dtype=np.uint8))
            h.addRow(1.0, 1.0, k_n, at_u, np.ones(k_n))
            for k in range(k_n):
                idx_k = np.append(at_z, z + 1 + k).astype(np.int32)
                val_k = np.concatenate([levels[k], [-1.0, -float(cap)]])
                h.addRow(-float(cap), INF, ny + 2, idx_k, val_k)
        if integer:
            h.setOptionValue("objective_bound", -float(cap) + 0.5)  # only points holding cap
    else:
        h.changeColsCost(ny, np.arange(ny, dtype=np.int32), -np.asarray(values, float))
    if integer:
        h.changeColsIntegrality(z, np.arange(z, dtype=np.int32), np.ones(z, dtype=np.uint8))
    first = h.getNumRow()
    for t in range(nt):
        idx: list[int] = [int(i) for i in np.flatnonzero(need[:, t])]
        val = [float(need[i, t]) for i in idx]
        for i, (_, pk) in enumerate(packs):
            if pk.get(types[t], 0):
                idx.append(ny + i)
                val.append(-float(pk[types[t]]))
        hi = float(supply[t]) if isinstance(supply, np.ndarray) else 0.0
        h.addRow(-INF, hi, len(idx), np.array(idx, dtype=np.int32), np.array(val))
    at = ny
    for n, ps in [] if isinstance(supply, np.ndarray) else supply:  # hosts of each class
        idx_c = np.arange(at, at + len(ps), dtype=np.int32)
        h.addRow(-INF, float(n), len(ps), idx_c, np.ones(len(ps)))
        at += len(ps)
    if integer and start is not None and ng:
        at_g = np.flatnonzero(np.asarray(start[:ng]) > 0.5)
        h.setSolution(len(at_g), (ny + at_g).astype(np.int32), np.rint(start[at_g]).astype(float))
    if deadline is not None:
        left = deadline.remaining()
        if left <= 0:
            return 0.0, None, None
        h.setOptionValue("time_limit", left)
    if integer and max_nodes is not None:
        h.setOptionValue("mip_max_nodes", max_nodes)
    h.run()
    if h.getInfo().primal_solution_status != 2:
        return 0.0, None, None
    sol = h.getSolution()
    col = np.array(sol.col_value)
    y = col[:z] if levels is None else np.append(col[:z], col[z + 1 :])  # columns, hosts, u
    mu = None if integer else np.maximum(-np.array(sol.row_dual)[first : first + nt], 0.0)
    return -h.getInfo().objective_function_value, y, mu
