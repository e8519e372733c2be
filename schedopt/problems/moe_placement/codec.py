"""A Plan ↔ a point of the moe model (model.py's columns)."""

from __future__ import annotations

import numpy as np

from schedopt.model import Vars

from .data import ModelData, Plan
from .model import MoeModel, Q, comm_us, load_us
from .warmstart import plan_values


def grid_shares(plan: Plan, on: dict[tuple[int, int], list[int]]) -> dict[tuple, float]:
    """The plan's shares on CP-SAT's 1/Q grid by largest remainder (each expert's sum kept at
    one), so one hint is a point of every back-end's model."""
    out: dict[tuple, float] = {}
    for (i, e), gs in on.items():
        raw = np.array([plan.f[i][e, g] for g in gs], dtype=float)
        raw = raw / raw.sum() * Q if raw.sum() > 0 else np.full(len(gs), Q / len(gs))
        base = np.floor(raw).astype(int)
        for k in np.argsort(-(raw - base))[: Q - int(base.sum())]:
            base[k] += 1
        for g, q in zip(gs, base, strict=True):
            out[i, e, g] = q / Q
    return out


def encode(mm: MoeModel, plan: Plan) -> np.ndarray:
    """A complete point from a plan: x, f (on the share grid), and z, v, u, w, obj derived as
    C8, L2, C9, C7 and W define them, at the max of the MILP and CP-SAT rows."""
    d, model = mm.data, mm.model
    values = np.zeros(model.num_cols)
    shares = encode_placement(d, (mm.x, mm.f, mm.u, mm.w), plan, values, on_grid=True)
    on: dict[tuple[int, int], list[int]] = {}
    for i, e, g in shares:
        on.setdefault((i, e), []).append(g)
    for i in range(d.L):
        fl = np.zeros((len(d.mem[i]), d.G))
        for e in range(len(d.mem[i])):
            for g in on.get((i, e), []):
                fl[e, g] = shares[i, e, g]
        loads = np.maximum((load_us(d, i) * fl).sum(axis=0), (mm.load_cp[i] * fl).sum(axis=0))
        values[mm.z[i,]] = float(loads.max())
        values[mm.v["L2",]] += max(
            float((comm_us(d, i) * fl).sum()), float((mm.comm_cp[i] * fl).sum())
        )
    if mm.obj is not None:
        lv = [lvl.expr.value(values) for lvl in model.levels[1:]]
        l1 = float(sum(values[c] for c in mm.z.cols))
        assert d.weights is not None and mm.weights_cp is not None
        values[mm.obj["W",]] = max(
            sum(w * v for w, v in zip(ws, [l1, *lv], strict=True))
            for ws in (d.weights, mm.weights_cp)
        )
    return values


def encode_placement(
    data: ModelData,
    xfuw: tuple[Vars, Vars, Vars, Vars],
    plan: Plan,
    values: np.ndarray,
    *,
    on_grid: bool,
) -> dict[tuple, float]:
    """Write the plan's x, f, u and w (model.placement_columns/placement_rows) into ``values``;
    the shares written, per (l, e, g) holding a replica. ``on_grid``: shares on CP-SAT's grid
    (:func:`grid_shares`), else the plan's own (a MILP-only model)."""
    x, f, u, w = xfuw
    on: dict[tuple[int, int], list[int]] = {}
    for (i, e, g), col in x.items():
        if plan.x[i][e, g]:
            values[col] = 1.0
            on.setdefault((i, e), []).append(g)
    if on_grid:
        shares = grid_shares(plan, on)
    else:
        shares = {(i, e, g): float(plan.f[i][e, g]) for (i, e), gs in on.items() for g in gs}
    for key, col in f.items():
        values[col] = shares.get(key, 0.0)
    pv = plan_values(data, plan)
    used = pv["used"]
    for (g,), col in u.items():
        values[col] = float(used[g])  # type: ignore[index]
    for (i, k), col in w.items():
        values[col] = float(pv["groups"][i] == k)  # type: ignore[index]
    return shares


def true_levels(mm: MoeModel, values: np.ndarray) -> tuple[float, float, float, float]:
    """The objective vector of a point as the solution made of it has it (shares clipped and
    renormalised, as ``data.to_solution`` does), free of the solver's row tolerances."""
    plan = decode(mm, values)
    for x, f in zip(plan.x, plan.f, strict=True):
        f[:] = np.where(x, np.clip(f, 0.0, 1.0), 0.0)
        total = f.sum(axis=1, keepdims=True)
        f[:] = np.where(total > 0, f / np.where(total > 0, total, 1.0), f)
    return mm.data.objectives(plan)


def decode(mm: MoeModel, values: np.ndarray) -> Plan:
    return decode_placement(mm.data, mm.x, mm.f, values)


def decode_placement(data: ModelData, x: Vars, f: Vars, values: np.ndarray) -> Plan:
    plan = data.empty_plan()
    for (i, e, g), col in x.items():
        if values[col] > 0.5:
            plan.x[i][e, g] = True
            plan.f[i][e, g] = max(0.0, float(values[f[i, e, g]]))
    return plan
