"""Deadline admission, written once (formulations/admission.md, C1–C9, L1–L3).

Variables: x[j,t,o] job j runs option o in slot t; z[j] SLO job admitted; y[j,k] admitted at
tier k; p[j,t] best-effort iterations credited in slot t; c[j,t] GPU-count change into slot t.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from schedopt.core.stopping import Deadline
from schedopt.model import Built, Expr, Level, Model, Sense, VarKind, Vars

from .bound import whole_slot_needs
from .data import VALUE_SCALE, JobData, ModelData


@dataclass(frozen=True)
class AdmissionModel(Built):
    x: Vars
    z: Vars
    y: Vars
    p: Vars
    c: Vars


def build_model(
    data: ModelData,
    jobs: Sequence[JobData] | None = None,
    deadline: Deadline | None = None,
    *,
    l1_only: bool = False,
    whole_slots: bool = False,
) -> AdmissionModel:
    """The model over ``jobs`` (default: all of them). ``l1_only``: without what only the
    lower levels read (the count changes ``c`` and C9, L2 and L3): the repair's group model
    (C1–C7 and L1, formulations/admission.md, "Repair by groups of slots"). ``whole_slots``:
    with B1c's rows, which every plan satisfies (the formulation's claim, "Whole-slot rows
    B1c") and which tighten CP-SAT's LP."""
    jobs = tuple(data.jobs if jobs is None else jobs)
    m = Model("admission", deadline)
    T = data.T
    slo = [j for j in jobs if j.is_slo]
    best_effort = [j for j in jobs if not j.is_slo]
    # C2 nothing before arrival: x exists only from the arrival slot on.
    x = m.add_vars(
        "x",
        ((j.index, t, o) for j in jobs for t in data.run_slots(j) for o in range(len(j.options))),
    )
    z = m.add_vars("z", ((j.index,) for j in slo))
    y = m.add_vars("y", ((j.index, k) for j in slo for k in range(len(j.tiers))))
    caps = [
        min(j.work, max(o.work for o in j.options)) for j in best_effort for _ in data.run_slots(j)
    ]
    p = m.add_vars(
        "p",
        ((j.index, t) for j in best_effort for t in data.run_slots(j)),
        VarKind.INTEGER,
        ub=caps,
    )
    tops = [
        max(max(o.n for o in j.options), j.current_gpus)
        for j in ([] if l1_only else jobs)
        for _ in range(T)
    ]
    # c is |Δ GPUs| at the optimum, a whole number either way: continuous and unbounded
    # above in the MILP, as the legacy model had it (with c <= its top, CBC's presolve kept
    # all 24,000 C9 rows at 1,024 GPUs × 1,000 jobs and found no L1 solution in 5 s), integer
    # on CP-SAT's grid of 1 with the top CP-SAT needs.
    c = m.add_vars(
        "c",
        ((j.index, t) for j in ([] if l1_only else jobs) for t in range(T)),
        VarKind.CONTINUOUS,
        ub=np.inf,
        cpsat_scale=1,
        cpsat_ub=tops,
    )

    def run(j: JobData, t: int) -> list[int]:
        return [x[j.index, t, o] for o in range(len(j.options))]

    # C1 gang: one size per slot.
    m.at_most_one("C1", (run(j, t) for j in jobs for t in data.run_slots(j)))

    with m.rows("C4") as c4:  # one tier per admitted job
        for j in slo:
            ys = [y[j.index, k] for k in range(len(j.tiers))]
            c4.add([*ys, z[j.index,]], [1.0] * len(ys) + [-1.0], 0.0, 0.0)
    with m.rows("C5") as c5:  # earlier guarantees hold
        for j in slo:
            if j.admitted_before:
                c5.add([z[j.index,]], [1.0], 1.0, 1.0)
    with m.rows("C6") as c6:  # deadlines: the work done before tier k's deadline
        for j in slo:
            m.tick()
            for k, tier in enumerate(j.tiers):
                done = [
                    (x[j.index, t, o], float(opt.work))
                    for t in range(j.arrival, min(tier.slots_before, T))
                    for o, opt in enumerate(j.options)
                ]
                need = [(y[j.index, kk], -float(j.work)) for kk in range(k + 1)]
                cols, coefs = zip(*(done + need), strict=True)
                c6.add(cols, coefs, lo=0.0)
    with m.rows("C7") as c7:  # rejected jobs run nowhere
        for j in slo:
            for t in data.run_slots(j):
                xs = run(j, t)
                c7.add([*xs, z[j.index,]], [1.0] * len(xs) + [-1.0], hi=0.0)
    if whole_slots:
        _whole_slot_rows(m, data, slo, x, y)
    _best_effort_rows(m, data, best_effort, x, p)
    if not l1_only:
        _change_rows(m, data, jobs, x, c)
    _capacity_rows(m, data, jobs, x)

    l1_cols, l1_coefs = [], []
    for j in slo:
        for k, tier in enumerate(j.tiers):
            l1_cols.append(y[j.index, k])
            l1_coefs.append(tier.value_scaled / VALUE_SCALE)
    l2_cols = [p[j.index, t] for j in best_effort for t in data.run_slots(j)]
    l2_real = [j.be_coef_real[t] for j in best_effort for t in data.run_slots(j)]
    l2_int = [float(j.be_coef[t]) for j in best_effort for t in data.run_slots(j)]
    # L1 in the instance's units, resolved to 1/VALUE_SCALE: CP-SAT sees integers; a solved
    # L1 is kept within half a unit of that resolution. L3 is integer-valued.
    m.add_level(
        Level("L1", Expr.of(l1_cols, l1_coefs), Sense.MAXIMIZE, 0.5 / VALUE_SCALE, 0.0, VALUE_SCALE)
    )
    if l1_only:
        return AdmissionModel(m, data, x, z, y, p, c)
    # L2 in units of data.progress_unit: the MILP takes the real coefficients, CP-SAT the
    # rounded integers (formulation, "Integer scaling"). Rounded, two plans the validator finds
    # equal could differ by some units (970,560,180 against 970,560,090 on
    # tests/conformance/known/admission-lower-level.json) and fixing L2 at the larger cut the
    # other off, with its better L3.
    m.add_level(
        Level(
            "L2",
            Expr.of(l2_cols, l2_real),
            Sense.MAXIMIZE,
            0.5,
            1e-9,
            cpsat_expr=Expr.of(l2_cols, l2_int),
        )
    )
    m.add_level(Level("L3", Expr.of(c.cols, [1.0] * len(c)), Sense.MINIMIZE, 0.5))
    return AdmissionModel(m, data, x, z, y, p, c)


def _whole_slot_rows(m: Model, data: ModelData, slo: list[JobData], x: Vars, y: Vars) -> None:
    """B1c: per SLO job, tier ``k`` and weight vector ``w`` (``whole_slot_needs``, as in the
    LP bound), ``Σ_{t<e_jk} Σ_o w_o x_jto ≥ need_w · Σ_{k'≤k} y_jk'``, or ``Σ_{k'≤k} y_jk' ≤ 0``
    when no whole-slot plan finishes by ``e_jk`` (formulations/admission.md, "Whole-slot rows
    B1c")."""
    with m.rows("B1c") as rows:
        for j in slo:
            m.tick()
            for k, tier in enumerate(j.tiers):
                end = min(tier.slots_before, data.T)
                done = [(t, o) for t in range(j.arrival, end) for o in range(len(j.options))]
                need = [y[j.index, kk] for kk in range(k + 1)]
                needs = whole_slot_needs(data, j, end - j.arrival)
                if needs is None:
                    rows.add(need, [1.0] * len(need), hi=0.0)
                    continue
                for w, least in needs:
                    cols = [x[j.index, t, o] for t, o in done] + need
                    coefs = [w[o] for _, o in done] + [-least] * len(need)
                    rows.add(cols, coefs, lo=0.0)


def _best_effort_rows(m: Model, data: ModelData, jobs: list[JobData], x: Vars, p: Vars) -> None:
    """C8 best-effort progress, credited only while running and capped by the work left."""
    with m.rows("C8a") as c8a, m.rows("C8b") as c8b:
        for j in jobs:
            slots = data.run_slots(j)
            for t in slots:
                xs = [x[j.index, t, o] for o in range(len(j.options))]
                c8a.add([p[j.index, t], *xs], [1.0, *(-float(o.work) for o in j.options)], hi=0.0)
            if len(slots):
                c8b.add([p[j.index, t] for t in slots], [1.0] * len(slots), hi=float(j.work))


def _change_rows(m: Model, data: ModelData, jobs: Sequence[JobData], x: Vars, c: Vars) -> None:
    """C9 GPU-count changes between consecutive slots (and from now into slot 0):
    c ≥ now − prev and c ≥ prev − now."""
    with m.rows("C9a") as up, m.rows("C9b") as down:
        for j in jobs:
            m.tick()
            prev_cols: list[int] = []
            prev_n: list[float] = []
            before = float(j.current_gpus)
            for t in range(data.T):
                now = [
                    (x[j.index, t, o], float(opt.n))
                    for o, opt in enumerate(j.options)
                    if (j.index, t, o) in x
                ]
                cols = [c[j.index, t], *(v for v, _ in now), *prev_cols]
                up.add(cols, [1.0, *(-n for _, n in now), *prev_n], lo=-before)
                down.add(cols, [1.0, *(n for _, n in now), *(-n for n in prev_n)], lo=before)
                prev_cols, prev_n, before = [v for v, _ in now], [n for _, n in now], 0.0


def _capacity_rows(m: Model, data: ModelData, jobs: Sequence[JobData], x: Vars) -> None:
    """C3 capacity, packable: per slot, GPU type and size level."""
    by_level: dict[tuple[str, int], list[tuple[JobData, int, int]]] = {}
    for j in jobs:
        for o, opt in enumerate(j.options):
            for s in data.levels[opt.gpu_type]:
                use = ModelData.usage(opt, s)
                if use:
                    by_level.setdefault((opt.gpu_type, s), []).append((j, o, use))
    with m.rows("C3") as c3:
        for (g, s), entries in by_level.items():
            m.tick()
            for t in range(data.T):
                live = [(x[j.index, t, o], float(u)) for j, o, u in entries if t >= j.arrival]
                if live:
                    cols, coefs = zip(*live, strict=True)
                    c3.add(cols, coefs, hi=float(data.capacity(t, g, s)))
