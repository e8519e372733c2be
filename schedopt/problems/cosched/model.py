"""Co-scheduling, written once (formulations/cosched.md, C1–C14, L1–L3).

Variables: y[j,k,o,g] phase k of job j on option o with j in group g; x[j,g] job j in group g
(group g is led by job g); h[g,p] hosts of pool p in group g; T[g] group cycle; t[j] step time;
a[j,k] start of phase k of step 0; z[j] cross-pool sync; e[α,β,p,q] periodic order of a pair.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from schedopt.core.stopping import Deadline
from schedopt.model import Built, Expr, Level, Model, Sense, VarKind, Vars

from .chance import chance_rows
from .data import JobData, ModelData, Pair


@dataclass(frozen=True)
class CoschedModel(Built):
    y: Vars
    x: Vars
    h: Vars
    T: Vars
    t: Vars
    a: Vars
    z: Vars
    e: Vars
    jobs: tuple[JobData, ...]
    ok: Vars  # C13: job j's timetable holds in scenario s (empty without ``chance``)

    def groups_of(self, job: JobData) -> list[int]:
        """The groups job may join: those led by a job at or before it (C3)."""
        return [g.index for g in self.jobs if g.index <= job.index]


def build_model(
    data: ModelData, jobs: Sequence[JobData] | None = None, deadline: Deadline | None = None
) -> CoschedModel:
    """The model over ``jobs`` (default: all of them)."""
    jobs = tuple(data.jobs if jobs is None else jobs)
    m = Model("cosched", deadline)
    P = range(len(data.pools))
    leaders = [g.index for g in jobs]

    def groups(j: JobData) -> list[int]:
        return [g for g in leaders if g <= j.index]

    y = m.add_vars(
        "y",
        (
            (j.index, k, o, g)
            for j in jobs
            for g in groups(j)
            for k, opts in enumerate(j.phases)
            for o in range(len(opts))
        ),
    )
    x = m.add_vars("x", ((j.index, g) for j in jobs for g in groups(j)))
    h = m.add_vars(
        "h",
        ((g, p) for g in leaders for p in P),
        VarKind.INTEGER,
        ub=[data.hosts[p] for _ in leaders for p in P],
    )
    T = m.add_vars("T", ((g,) for g in leaders), VarKind.INTEGER, ub=data.max_slo)
    t = m.add_vars("t", ((j.index,) for j in jobs), VarKind.INTEGER, ub=[j.slo for j in jobs])
    a = m.add_vars(
        "a",
        ((j.index, k) for j in jobs for k in range(len(j.phases))),
        VarKind.INTEGER,
        ub=[(2 + j.sigma) * j.slo for j in jobs for _ in j.phases],
    )
    z = m.add_vars("z", ((j.index,) for j in jobs))
    pairs = data.pairs(jobs)
    e = m.add_vars("e", ((*p.a, *p.b, p.pool, q) for p in pairs for q in p.shifts))
    M = float(data.big_m)

    def dur(j: JobData, k: int) -> tuple[list[int], list[float]]:
        """d_jk: the chosen option's duration, over every group."""
        cols = [y[j.index, k, o, g] for g in groups(j) for o in range(len(j.phases[k]))]
        return cols, [float(opt.duration) for _ in groups(j) for opt in j.phases[k]]

    def on(j: JobData, k: int, g: int, p: int) -> list[int]:
        return [y[j.index, k, o, g] for o, opt in enumerate(j.phases[k]) if opt.pool == p]

    m.exactly_one("C1", ([x[j.index, g] for g in groups(j)] for j in jobs))
    with m.rows("C2") as c2:  # one option per phase, in the job's group
        for j in jobs:
            for g in groups(j):
                for k, opts in enumerate(j.phases):
                    cols = [y[j.index, k, o, g] for o in range(len(opts))]
                    c2.add([*cols, x[j.index, g]], [1.0] * len(cols) + [-1.0], 0.0, 0.0)
    # C3 groups led by their smallest member
    m.implications(
        "C3a", ((x[j.index, g], x[g, g]) for j in jobs for g in groups(j) if g != j.index)
    )
    with m.rows("C3b") as c3:
        for g in leaders:
            for p in P:
                c3.add([h[g, p], x[g, g]], [1.0, -float(data.hosts[p])], hi=0.0)
    with m.rows("C4") as c4:  # hosts of each pool
        for p in P:
            c4.add([h[g, p] for g in leaders], [1.0] * len(leaders), hi=float(data.hosts[p]))
    with m.rows("C5") as c5, m.rows("C6") as c6:
        for g in leaders:
            m.tick()
            members = [j for j in jobs if j.index >= g]
            for p in P:
                mem_cols: list[int] = []
                mem_coefs: list[float] = []
                for j in members:
                    for k, opts in enumerate(j.phases):
                        cols = on(j, k, g, p)
                        if not cols:
                            continue
                        gpus = [float(o.gpus) for o in opts if o.pool == p]
                        # C5 a phase's devices within the group's hosts of its pool
                        c5.add([*cols, h[g, p]], [*gpus, -float(data.per_host[p])], hi=0.0)
                        mem_cols += cols
                        mem_coefs += [float(o.resident_mib) for o in opts if o.pool == p]
                if any(mem_coefs):  # C6 residency in whole MiB
                    c6.add([*mem_cols, h[g, p]], [*mem_coefs, -float(data.memory_mib[p])], hi=0.0)
    with m.rows("C7") as c7:  # one cycle per group: |t_j − T_g| ≤ M(1 − x_jg)
        for j in jobs:
            for g in groups(j):
                c7.add([t[j.index,], T[g,], x[j.index, g]], [1.0, -1.0, M], hi=M)
                c7.add([t[j.index,], T[g,], x[j.index, g]], [-1.0, 1.0, M], hi=M)
    with m.rows("C8") as c8, m.rows("C9") as c9, m.rows("C12") as c12:
        for j in jobs:
            for k in range(len(j.phases)):
                cols, coefs = dur(j, k)
                # C12 a phase fits its cycle
                c12.add([*cols, t[j.index,]], [*coefs, -1.0], hi=0.0)
                if k < j.last:  # C8 precedence inside a step
                    c8.add(
                        [a[j.index, k + 1], a[j.index, k], *cols],
                        [1.0, -1.0, *(-c for c in coefs)],
                        lo=0.0,
                    )
            cols, coefs = dur(j, j.last)
            # C9 staleness: step i+1+σ starts after step i's weights arrive. (A one-phase job
            # has a_j0 on both sides: a row never names a column twice, since HiGHS's addRows
            # refuses such a row block and the shared emitter would lose it unseen.)
            starts = [a[j.index, 0], a[j.index, j.last]] if j.last else []
            c9.add(
                [*starts, t[j.index,], *cols, z[j.index,]],
                [
                    *([1.0, -1.0] if j.last else []),
                    1.0 + j.sigma,
                    *(-c for c in coefs),
                    -float(j.sync_ms),
                ],
                lo=0.0,
            )
            c9.add([a[j.index, 0], t[j.index,]], [1.0, -1.0], hi=-1.0)  # origin in cycle 0
    with m.rows("C10") as c10:  # the sync crosses pools when first and last differ
        for j in jobs:
            if j.last == 0:
                continue
            for p in P:
                first = [c for g in groups(j) for c in on(j, 0, g, p)]
                last = [c for g in groups(j) for c in on(j, j.last, g, p)]
                if first:
                    c10.add(
                        [z[j.index,], *first, *last],
                        [1.0, *([-1.0] * len(first)), *([1.0] * len(last))],
                        lo=0.0,
                    )
    _no_overlap(m, jobs, pairs, a, t, e, dur, on, groups, M)
    _implied_cuts(m, data, jobs, leaders, y, h, T)
    ok = m.add_vars("ok", ((j.index, s) for j in jobs for s in range(data.scenarios)))
    if data.scenarios:
        chance_rows(m, data, jobs, pairs, y, a, t, z, e, ok, groups)

    m.add_level(
        Level(
            "L1",
            Expr.of(h.cols, [data.cost[p] for _ in leaders for p in P]),
            Sense.MINIMIZE,
            0.005,
            cpsat_scale=100,
        )
    )
    m.add_level(
        Level(
            "L2",
            Expr.of([t[j.index,] for j in jobs], [j.weight / 1000 for j in jobs]),
            Sense.MINIMIZE,
            0.0005,
            cpsat_scale=1000,
        )
    )
    l3_cols = [z[j.index,] for j in jobs]
    l3_coefs = [float(j.sync_gb) for j in jobs]
    for j in jobs:
        for k, opts in enumerate(j.phases):
            for o, opt in enumerate(opts):
                if opt.move_gb:
                    for g in groups(j):
                        l3_cols.append(y[j.index, k, o, g])
                        l3_coefs.append(float(opt.move_gb))
    m.add_level(Level("L3", Expr.of(l3_cols, l3_coefs), Sense.MINIMIZE, 0.5))
    return CoschedModel(m, data, y, x, h, T, t, a, z, e, jobs, ok)


Dur = Callable[[JobData, int], tuple[list[int], list[float]]]
On = Callable[[JobData, int, int, int], list[int]]


def _no_overlap(
    m: Model,
    jobs: tuple[JobData, ...],
    pairs: list[Pair],
    a: Vars,
    t: Vars,
    e: Vars,
    dur: Dur,
    on: On,
    groups: Callable[[JobData], list[int]],
    M: float,
) -> None:
    """C11: phases sharing a group's pool never overlap in the periodic schedule; for the
    chosen shift q, β's occurrence q cycles on follows α (with β's switch) and α's next
    occurrence follows that one (with α's switch)."""
    by_index = {j.index: j for j in jobs}
    with m.rows("C11a") as act, m.rows("C11b") as after, m.rows("C11c") as before:
        for pair in pairs:
            m.tick()
            ja, ka = by_index[pair.a[0]], pair.a[1]
            jb, kb = by_index[pair.b[0]], pair.b[1]
            es = [e[(*pair.a, *pair.b, pair.pool, q)] for q in pair.shifts]
            for g in groups(ja):  # both on the pool in one group ⇒ some shift is chosen
                cols = on(ja, ka, g, pair.pool) + on(jb, kb, g, pair.pool)
                act.add([*es, *cols], [1.0] * len(es) + [-1.0] * len(cols), lo=-1.0)
            sw_ab = float(jb.switch) if ja is not jb else 0.0
            sw_ba = float(ja.switch) if ja is not jb else 0.0
            da_cols, da = dur(ja, ka)
            db_cols, db = dur(jb, kb)
            ta = t[ja.index,]
            for q, eq in zip(pair.shifts, es, strict=True):
                # a_β + q·t − a_α − d_α − M·e ≥ sw_αβ − M
                after.add(
                    [a[pair.b], ta, a[pair.a], *da_cols, eq],
                    [1.0, float(q), -1.0, *(-c for c in da), -M],
                    lo=sw_ab - M,
                )
                # a_α + (1 − q)·t − a_β − d_β − M·e ≥ sw_βα − M
                before.add(
                    [a[pair.a], ta, a[pair.b], *db_cols, eq],
                    [1.0, float(1 - q), -1.0, *(-c for c in db), -M],
                    lo=sw_ba - M,
                )


#: C14b's coefficients are floor(CUT_SCALE · n·d / S): integers for CP-SAT, and rounding down
#: keeps the cut valid.
CUT_SCALE = 1000


def _implied_cuts(
    m: Model,
    data: ModelData,
    jobs: tuple[JobData, ...],
    leaders: list[int],
    y: Vars,
    h: Vars,
    T: Vars,
) -> None:
    """C14, implied by C5, C7, C11 and C12 at integer points (they cut no plan) and added for
    the relaxations: (a) a group's pool serves its members' phases one at a time within one
    cycle, Σ d·y ≤ T_g; (b) so it holds at least Σ n·d / S_j devices (the aggregate bound,
    per group and pool): u_p·h_gp·CUT_SCALE ≥ Σ ⌊CUT_SCALE·n·d / S_j⌋·y."""
    P = range(len(data.pools))
    with m.rows("C14a") as load, m.rows("C14b") as work:
        for g in leaders:
            m.tick()
            members = [j for j in jobs if j.index >= g]
            for p in P:
                cols: list[int] = []
                durs: list[float] = []
                devs: list[float] = []
                for j in members:
                    for k, opts in enumerate(j.phases):
                        for o, opt in enumerate(opts):
                            if opt.pool == p:
                                cols.append(y[j.index, k, o, g])
                                durs.append(float(opt.duration))
                                devs.append(float(CUT_SCALE * opt.gpus * opt.duration // j.slo))
                if cols:
                    load.add([*cols, T[g,]], [*durs, -1.0], hi=0.0)
                    if any(devs):
                        work.add(
                            [*cols, h[g, p]],
                            [*devs, -float(CUT_SCALE * data.per_host[p])],
                            hi=0.0,
                        )
