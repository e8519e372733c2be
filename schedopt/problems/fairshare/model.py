"""Long-term fair share, written once (formulations/fairshare.md, C1–C7, L1–L3).

The minimum share is over the fairness units V⁺ (F1–F3: tenants, or jobs in per-job mode);
hard guarantees (C5) are per tenant in either mode.

Variables: x[j,o] job j runs option o; k[j] keepable job j keeps its previous allocation;
t the minimum LTGF (share units); c[h,s] chunks of s GPUs left on host h after the kept jobs
(single-host mode).

Two things are written twice on purpose: the
accounts in C7 (blocks restricted with ``backends=``) and the coefficients of L2 and L3
(``Level.cpsat_expr``). CP-SAT does not see the real data scaled
but the data *rounded* to integers ("Integer scaling" in formulations/fairshare.md): the
accounts to ``time_unit`` GPU-seconds, e_jo to 1/EFF_SCALE, costs to 1/COST_SCALE s. That is
a different discretisation, not a scale factor, so no ``cpsat_scale`` could turn one into the
other; the MILP keeps the real coefficients. Everything else is the same rows for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from schedopt.core.stopping import Deadline
from schedopt.model import CPSAT_ONLY, MILP_ONLY, Built, Expr, Level, Model, Sense, VarKind, Vars

from .data import COST_SCALE, EFF_SCALE, SHARE_SCALE, ModelData

#: Largest |coefficient × bound| allowed in one CP-SAT term (CP-SAT refuses models that may
#: overflow); it caps t's domain, which binds only when a counted unit deserves less than
#: half a ``time_unit`` (its D̃_v is then rounded up to 1).
INT_BUDGET = 2**60
#: L2 is fixed at its value minus this fraction (solver tolerances; the legacy MILP's rule).
L2_REL_TOL = 1e-6
#: Noise below which two L1 values are the same minimum share.
L1_TOL = 1e-9


@dataclass(frozen=True)
class FairshareModel(Built):
    x: Vars
    k: Vars
    t: Vars
    c: Vars
    #: Tenant index → (x column, GPUs n_o): g_u = Σ n·x (C5).
    gpus: dict[int, list[tuple[int, int]]]
    #: Unit index → (x column, GPUs n_o): g_v = Σ n·x (C7, the L1 fix).
    unit_gpus: dict[int, list[tuple[int, int]]]


def t_upper(data: ModelData) -> float:
    """t ≤ the share with every demand met, plus one CP-SAT grid step (CP-SAT's rounded
    accounts may put its t that far above the real share), capped by ``INT_BUDGET``."""
    included = data.included
    if not included:
        return 0.0
    top = data.share_upper_bound() + 1.0 / SHARE_SCALE
    cap = INT_BUDGET // max(v.deserved_units for v in included) / SHARE_SCALE
    return max(0.0, min(top, cap))


def build_model(data: ModelData, deadline: Deadline | None = None) -> FairshareModel:
    m = Model("fairshare", deadline)
    jobs = data.jobs
    x = m.add_vars("x", ((j.index, o) for j in jobs for o in range(len(j.options))))
    k = m.add_vars("k", ((j.index,) for j in jobs if j.keepable))
    t = m.add_vars("t", [()], VarKind.CONTINUOUS, 0.0, t_upper(data), cpsat_scale=SHARE_SCALE)
    chunk_rows = [] if data.multi_host else _c3_terms(data, x, k)
    c_keys = [(h, s) for g, s, _ in chunk_rows for h in _hosts(data, g) if h in data.keep_hosts]
    c = m.add_vars("c", c_keys, VarKind.INTEGER, ub=[data.free[h] // s for h, s in c_keys] or 0.0)
    gpus: dict[int, list[tuple[int, int]]] = {u.index: [] for u in data.tenants}
    unit_gpus: dict[int, list[tuple[int, int]]] = {v.index: [] for v in data.units}
    for job in jobs:
        for o, opt in enumerate(job.options):
            gpus[job.tenant].append((x[job.index, o], opt.n))
            unit_gpus[job.unit].append((x[job.index, o], opt.n))

    # C1 gang, one type: one option per job.
    m.at_most_one(
        "C1",
        ([x[j.index, o] for o in range(len(j.options))] for j in jobs if len(j.options) > 1),
    )
    with m.rows("C2") as c2:  # capacity per type
        by_type: dict[str, list[tuple[int, int]]] = {}
        for job in jobs:
            for o, opt in enumerate(job.options):
                by_type.setdefault(opt.gpu_type, []).append((x[job.index, o], opt.n))
        for g, terms in by_type.items():
            c2.add([v for v, _ in terms], [float(n) for _, n in terms], hi=data.type_capacity[g])
    if chunk_rows:
        _c3_rows(m, data, chunk_rows, k, c)
    # C4 kept allocations: keeping means running on the previous option (k ⇒ x_prev), ...
    m.implications("C4a", ((k[j.index,], x[j.index, j.prev_option]) for j in jobs if j.keepable))
    with m.rows("C4b") as c4b:  # ... and what is kept on a host fits there
        for h, entries in data.keep_hosts.items():
            if sum(n for _, n in entries) > data.free[h]:
                c4b.add(
                    [k[j,] for j, _ in entries], [float(n) for _, n in entries], hi=data.free[h]
                )
    with m.rows("C5") as c5:  # hard guarantees
        for u in data.tenants:
            if u.guarantee:
                c5.add(*_cols_coefs(gpus[u.index]), lo=u.guarantee)
    running = sum(1 for j in jobs if j.was_running)
    cap = data.instance.max_preemptions
    if cap is not None and running > cap:  # C6 preemption cap
        with m.rows("C6") as c6:
            c6.add(k.cols.tolist(), [1.0] * len(k), lo=running - cap)
    _c7_rows(m, data, t, unit_gpus)
    _levels(m, data, x, k, t)
    return FairshareModel(m, data, x, k, t, c, gpus, unit_gpus)


def _cols_coefs(terms: Sequence[tuple[int, float]]) -> tuple[list[int], list[float]]:
    return [v for v, _ in terms], [float(a) for _, a in terms]


def _hosts(data: ModelData, g: str) -> list[str]:
    return [h for h, hg in data.host_type.items() if hg == g]


def _c3_terms(data: ModelData, x: Vars, k: Vars) -> list[tuple[str, int, list[tuple[int, int]]]]:
    """Per type and size level s: Σ n (x − [o = o^P] k) over options with n ≥ s."""
    out = []
    for g, levels in data.levels.items():
        for s in levels:
            terms = []
            for job in data.jobs:
                for o, opt in enumerate(job.options):
                    if opt.gpu_type == g and opt.n >= s:
                        terms.append((x[job.index, o], opt.n))
                        if o == job.prev_option:
                            terms.append((k[job.index,], -opt.n))
            if terms:
                out.append((g, s, terms))
    return out


def _c3_rows(
    m: Model, data: ModelData, terms: list[tuple[str, int, list[tuple[int, int]]]], k: Vars, c: Vars
) -> None:
    """C3 capacity per host, placeable: chunks left on hosts with kept jobs are variables."""
    with m.rows("C3") as c3, m.rows("C3c") as c3c:
        for g, s, row in terms:
            m.tick()
            const = 0
            cols, coefs = _cols_coefs(row)
            for h in _hosts(data, g):
                if h in data.keep_hosts:
                    kept = data.keep_hosts[h]
                    c3c.add(
                        [c[h, s], *(k[j,] for j, _ in kept)],
                        [float(s), *(float(n) for _, n in kept)],
                        hi=data.free[h],
                    )
                    cols.append(c[h, s])
                    coefs.append(-float(s))
                else:
                    const += s * (data.free[h] // s)
            c3.add(cols, coefs, hi=const)


def _c7_rows(m: Model, data: ModelData, t: Vars, gpus: dict[int, list[tuple[int, int]]]) -> None:
    """C7 minimum share, t ≤ (U_v + L·g_v) / D'_v for v ∈ V⁺, in two discretisations."""
    t0 = t[()]
    with m.rows("C7", backends=MILP_ONLY) as real:  # divided through by D'_v
        for v in data.included:
            d = v.deserved_after_s
            cols, coefs = _cols_coefs(gpus[v.index])
            real.add([t0, *cols], [1.0, *(-data.round_s * n / d for n in coefs)], hi=v.used_s / d)
    # CP-SAT: D̃_v·t − L̃·g_v ≤ Ũ_v with the accounts rounded to time units (data.py); scaled
    # by SHARE_SCALE this is the integer row t'·D̃_v ≤ SHARE_SCALE·(Ũ_v + L̃·g_v), t' = S·t.
    with m.rows("C7", backends=CPSAT_ONLY, cpsat_scale=SHARE_SCALE) as rounded:
        for v in data.included:
            cols, coefs = _cols_coefs(gpus[v.index])
            rounded.add(
                [t0, *cols],
                [float(v.deserved_units), *(-float(data.round_units) * n for n in coefs)],
                hi=float(v.used_units),
            )


def _levels(m: Model, data: ModelData, x: Vars, k: Vars, t: Vars) -> None:
    """L1 max t; L2 max Σ e·x; L3 min Σ_{J^P} c_j − Σ c_j k_j + φ Σ ν_o x.

    L2 and L3 have real coefficients in the MILP and the rounded ones of data.py in CP-SAT
    (``Level.cpsat_expr``): the same terms, another discretisation."""
    eff_terms = [
        (x[j.index, o], opt.eff, opt.eff_scaled)
        for j in data.jobs
        for o, opt in enumerate(j.options)
        if opt.eff_scaled or opt.eff
    ]
    cost_terms = [
        (k[j.index,], -j.restart_cost, -j.restart_scaled)
        for j in data.jobs
        if j.keepable and (j.restart_cost or j.restart_scaled)
    ]
    cost_terms += [
        (x[j.index, o], data.frag_cost * opt.extra_hosts, data.frag_scaled * opt.extra_hosts)
        for j in data.jobs
        for o, opt in enumerate(j.options)
        if opt.extra_hosts and (data.frag_cost or data.frag_scaled)
    ]
    restart_scaled = sum(j.restart_scaled for j in data.jobs if j.was_running)
    m.add_level(Level("L1", Expr.of([t[()]], [1.0]), Sense.MAXIMIZE, L1_TOL, 0.0, SHARE_SCALE))
    real, rounded = _exprs(eff_terms, EFF_SCALE)
    m.add_level(Level("L2", real, Sense.MAXIMIZE, 0.0, L2_REL_TOL, EFF_SCALE, rounded))
    real, rounded = _exprs(cost_terms, COST_SCALE, data.restart_constant, restart_scaled)
    m.add_level(Level("L3", real, Sense.MINIMIZE, 0.0, 0.0, COST_SCALE, rounded))


def _exprs(
    terms: list[tuple[int, float, int]], scale: int, constant: float = 0.0, scaled: int = 0
) -> tuple[Expr, Expr]:
    """The level with real coefficients (MILP) and with data.py's integers / scale (CP-SAT)."""
    cols = [v for v, _, _ in terms]
    return (
        Expr.of(cols, [a for _, a, _ in terms], constant),
        Expr.of(cols, [b / scale for _, _, b in terms], scaled / scale),
    )
