# ruff: noqa
"""diag.py with timers (wall, CPU) around the guide's steps, the start and each repair step:
python trace.py TREE RECIPE [FACTOR]"""

import sys
import time

sys.path.insert(0, sys.argv[1])
import schedopt.problems.admission.guide as G
import schedopt.problems.admission.lpdecomp as D
import schedopt.problems.admission.repair as R

log = []
T0 = [None]


def wrap(mod, name, show):
    f = getattr(mod, name)

    def w(*a, **k):
        t, c = time.perf_counter(), time.process_time()
        out = f(*a, **k)
        log.append(
            (
                name,
                round(t - T0[0], 2),
                round(time.perf_counter() - t, 3),
                round(time.process_time() - c, 3),
                show(out, a, k),
            )
        )
        return out

    setattr(mod, name, w)


from schedopt.problems.admission.assemble import guaranteed_value as _gv


def _l1(o, a, k):
    return (
        f"solved={o.solved} bound={o.bound and round(o.bound, 1)} n={len(a[0].jobs)} lim={a[1]:.2f}"
    )


def _guide(o, a, k):
    return f"bound={o.bound and round(o.bound, 1)} {o.label} secs={a[1]:.2f}"


def _step(o, a, k):
    return f"lim={a[2]:.2f} {'gain' if o else '-'} n={len(a[0].jobs)}"


def _round(o, a, k):
    value = None if o is None else _gv(a[0], o)
    return f"{value} lp_admit={len(a[1].admit)} prior={len(k.get('prior') or {})}"


SHOW = [
    (G, "l1_bound", _l1),
    (G, "_by_parts", lambda o, a, k: f"solved={o.solved} lim={a[1]:.2f}"),
    (G, "lagrangian_bound", lambda o, a, k: f"{o.bound:.1f} ev={o.evaluations}"),
    (D, "guide", _guide),
    (D, "greedy_plans", lambda o, a, k: ""),
    (D, "start_plan", lambda o, a, k: ""),
    (R, "improve_group", _step),
    (D, "lp_round", _round),
    (D, "priced_plans", lambda o, a, k: f"{[_gv(a[0], r) for r in o]}"),
    (D, "backfill", lambda o, a, k: f"{_gv(a[0], a[1])} -> {_gv(a[0], o)}"),
]
for mod, name, show in SHOW:
    wrap(mod, name, show)
sys.argv = sys.argv[:1] + sys.argv[1:]

orig = time.perf_counter
T0[0] = time.perf_counter()
exec(open(__file__.replace("trace.py", "diag.py")).read())
for row in log:
    print(*row)
