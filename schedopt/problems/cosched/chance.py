"""C13, the chance constraint (formulations/cosched.md, "Uncertainty"): every job's timetable
holds in at least ⌈(1−ε)·S⌉ of S sampled duration scenarios.

The timetable (groups, hosts, options, the cycle and every start) is the one the model decides;
``ok[j,s]`` says that job ``j``'s rows hold with scenario ``s``'s durations: its precedence and
staleness (C8, C9), its phases within the cycle (C12) and its pairs' periodic no-overlap with
the same shift ``q`` (C11; ``q`` depends on the starts and the cycle only). A pair's rows are
stated once per job of the pair, each relaxed by that job's ``ok``. With the timetable held, the
step time is the cycle, within the SLO (the planning SLO bound stays).
"""

from __future__ import annotations

from collections.abc import Callable

from schedopt.model import Model, Vars

from .data import JobData, ModelData, Pair

Dur = Callable[[JobData, int, int], tuple[list[int], list[float]]]


def chance_rows(
    m: Model,
    data: ModelData,
    jobs: tuple[JobData, ...],
    pairs: list[Pair],
    y: Vars,
    a: Vars,
    t: Vars,
    z: Vars,
    e: Vars,
    ok: Vars,
    groups: Callable[[JobData], list[int]],
) -> None:
    M = float(data.big_m)
    S = range(data.scenarios)

    def dur(j: JobData, k: int, s: int) -> tuple[list[int], list[float]]:
        cols = [y[j.index, k, o, g] for g in groups(j) for o in range(len(j.phases[k]))]
        return cols, [float(opt.scenario[s]) for _ in groups(j) for opt in j.phases[k]]

    with m.rows("C13a") as need:  # in enough scenarios
        for j in jobs:
            need.add([ok[j.index, s] for s in S], [1.0] * len(S), lo=float(data.need))
    with m.rows("C13b") as rows:
        for j in jobs:
            m.tick()
            for s in S:
                okc = ok[j.index, s]
                for k in range(len(j.phases)):
                    cols, coefs = dur(j, k, s)
                    # C12 in scenario s: d^s ≤ t + M(1 − ok)
                    rows.add([*cols, t[j.index,], okc], [*coefs, -1.0, M], hi=M)
                    if k < j.last:  # C8 in scenario s
                        rows.add(
                            [a[j.index, k + 1], a[j.index, k], *cols, okc],
                            [1.0, -1.0, *(-c for c in coefs), -M],
                            lo=-M,
                        )
                cols, coefs = dur(j, j.last, s)
                starts = [a[j.index, 0], a[j.index, j.last]] if j.last else []
                rows.add(  # C9 in scenario s
                    [*starts, t[j.index,], *cols, z[j.index,], okc],
                    [
                        *([1.0, -1.0] if j.last else []),
                        1.0 + j.sigma,
                        *(-c for c in coefs),
                        -float(j.sync_ms),
                        -M,
                    ],
                    lo=-M,
                )
    by_index = {j.index: j for j in jobs}
    with m.rows("C13c") as rows:  # C11 in scenario s, once per job of the pair
        for pair in pairs:
            m.tick()
            ja, ka = by_index[pair.a[0]], pair.a[1]
            jb, kb = by_index[pair.b[0]], pair.b[1]
            sw_ab = float(jb.switch) if ja is not jb else 0.0
            sw_ba = float(ja.switch) if ja is not jb else 0.0
            owners = [ja] if ja is jb else [ja, jb]
            ta = t[ja.index,]
            for s in S:
                da_cols, da = dur(ja, ka, s)
                db_cols, db = dur(jb, kb, s)
                for q in pair.shifts:
                    eq = e[(*pair.a, *pair.b, pair.pool, q)]
                    for owner in owners:
                        okc = ok[owner.index, s]
                        rows.add(
                            [a[pair.b], ta, a[pair.a], *da_cols, eq, okc],
                            [1.0, float(q), -1.0, *(-c for c in da), -M, -M],
                            lo=sw_ab - 2 * M,
                        )
                        rows.add(
                            [a[pair.a], ta, a[pair.b], *db_cols, eq, okc],
                            [1.0, float(1 - q), -1.0, *(-c for c in db), -M, -M],
                            lo=sw_ba - 2 * M,
                        )
