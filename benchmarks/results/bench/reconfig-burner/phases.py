# ruff: noqa: E402
"""The bench CLI with CPU (process_time) and wall per phase logged to $RC_LOG (wrappers
around the same functions: no behaviour change). RC_LOG=F python phases.py bench ..."""

import functools
import json
import os
import sys
import time

import schedopt.problems.reconfig.data as da
import schedopt.problems.reconfig.decomp as dc
import schedopt.problems.reconfig.physical as ph
import schedopt.problems.reconfig.price_bound as pb
import schedopt.problems.reconfig.rate as ra
import schedopt.problems.reconfig.stage_bound as sb
from schedopt.cli import main

LOG = os.environ["RC_LOG"]
T0 = time.perf_counter()


def log(**kw):
    with open(LOG, "a") as f:
        f.write(json.dumps(kw) + "\n")


def wrap(mod, name, label=None, extra=None):
    fn = getattr(mod, name)

    @functools.wraps(fn)
    def w(*a, **k):
        c, t = time.process_time(), time.perf_counter()
        out = fn(*a, **k)
        rec = {
            "ev": label or name,
            "t": round(t - T0, 3),
            "cpu": round(time.process_time() - c, 3),
            "wall": round(time.perf_counter() - t, 3),
        }
        if extra:
            rec.update(extra(a, k, out))
        log(**rec)
        return out

    setattr(mod, name, w)


wrap(da, "build_data")
wrap(ra, "search", "rate.search")
wrap(sb, "build_stage_data")
wrap(pb, "column_prices", "Q8'")
wrap(pb, "dw_prices", "Q10", lambda a, k, o: {"ended": o[1]})
wrap(pb, "_bisect", "bisect", lambda a, k, o: {"lo": o})
wrap(pb, "lp_prices", "lp_prices")
wrap(
    pb,
    "priced_bound_us",
    "bound",
    lambda a, k, o: {
        "rounds": len(k["gathered"].prices) if k.get("gathered") else None,
        "lower": o[0],
    },
)
wrap(pb, "mean_bound_us", "Q8''", lambda a, k, o: {"out": o})
wrap(ph, "widen", "widen")
wrap(ph, "_designed", "W6")
wrap(dc, "solve_templates", "templates")
wrap(dc, "with_stage_bound", "with_stage_bound")
wrap(dc, "solve_physical", "solve_physical")
import schedopt.problems.reconfig.targets as tg

wrap(tg, "columned", "W7")
import schedopt.problems.reconfig.branch as br

wrap(br, "branched", "W8")

if __name__ == "__main__":
    sys.exit(main())
