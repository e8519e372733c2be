# ruff: noqa: E501
"""python small.py LIMIT [hosts gpus model mb failed slow]: decomp:physical on a small instance, W7's time"""

import sys

if "--help" in sys.argv:
    print(__doc__)
    sys.exit()

import functools
import sys
import time

import schedopt
import schedopt.problems.reconfig.price_bound as pb
import schedopt.problems.reconfig.targets as tg
from schedopt.problems.reconfig import generate_custom


def wrap(mod, name):
    fn = getattr(mod, name)

    @functools.wraps(fn)
    def w(*a, **k):
        c, t = time.process_time(), time.perf_counter()
        out = fn(*a, **k)
        print(
            name,
            "cpu",
            round(time.process_time() - c, 3),
            "wall",
            round(time.perf_counter() - t, 3),
            "lower" if name == "priced_bound_us" else "",
            out[0] if name == "priced_bound_us" else len(out),
        )
        return out

    setattr(mod, name, w)


wrap(tg, "columned")
wrap(pb, "priced_bound_us")
a = sys.argv[2:] or ["4", "4", "llama2-7b", "32", "1", "2"]
inst = generate_custom(int(a[0]), int(a[1]), a[2], int(a[3]), int(a[4]), int(a[5]), seed=0)
t = time.perf_counter()
r = schedopt.solve(inst, "decomp:physical", time_limit_s=float(sys.argv[1]))
print(
    r.status,
    r.objectives,
    r.best_bound,
    r.gap,
    round(time.perf_counter() - t, 2),
    {
        k: v
        for k, v in r.stats.items()
        if k in ("bound_rounds", "physical_bound_s", "widened", "branch_s")
    },
)
