"""B3U's search on the plan ``decomp`` joins (issue #17): the inputs B3L is given in one
``auto`` solve captured, then, on those same inputs and one process, B3U at B3L's ``(λ, μ)``
(what ``decomp`` reported before ``unit_search``), ``unit_search`` (what it reports now), and,
out of any time limit, B3L's joint search run to its stall (about the LP over B3L's rows) and
B3U's cutting planes over ``(λ, μ)``; one JSON line.

    python benchmarks/fairshare_b3u_search.py [GPUS TENANTS JOBS SEED]
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time

import numpy as np

import schedopt
from schedopt.core.stopping import Deadline
from schedopt.model.lp_bound import cutting_plane_ascent
from schedopt.problems.fairshare import generate_custom
from schedopt.problems.fairshare.l3_bound import at_point
from schedopt.problems.fairshare.l3_units import unit_bound, unit_search

join_levels = importlib.import_module("schedopt.problems.fairshare.join_levels")
SEEN: dict[str, object] = {}
_l3_dual = join_levels.l3_dual


def _captured(data, need, floor, prices, budget, a):  # type: ignore[no-untyped-def]
    out = _l3_dual(data, need, floor, prices, budget, a)
    SEEN.update(a=a, need=need, floor=floor, dual=out)
    return out


join_levels.l3_dual = _captured


def _timed(f, *args):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    value = f(*args)
    return float(value), round(time.perf_counter() - started, 3)


def main() -> None:
    gpus, tenants, jobs, seed = (int(a) for a in (sys.argv[1:5] or [16384, 200, 20000, 0]))
    inst = generate_custom(gpus=gpus, tenants=tenants, jobs=jobs, seed=seed)
    load = os.getloadavg()[0]
    r = schedopt.solve(inst, "auto", time_limit_s=10)
    a, need, floor, dual = SEEN["a"], SEEN["need"], SEEN["floor"], SEEN["dual"]
    start, start_s = _timed(unit_bound, a, need, floor, dual.lam, dual.mu)
    found, found_s = _timed(unit_search, a, need, floor, dual.lam, dual.mu, Deadline.after(60))
    types, counted = len(a.capacity), need > 0

    def joint(y: np.ndarray) -> tuple[float, np.ndarray]:
        rho = np.where(counted, y[1 + types :], 0.0)
        return at_point(a, need, floor, float(y[0]), y[1 : 1 + types], rho)

    y0 = np.concatenate([[dual.lam], dual.mu, dual.rho])
    lp, _ = cutting_plane_ascent(
        joint, y0, time.perf_counter() + 60, max_steps=1000, stall_steps=100, stall_tol=1e-7
    )

    l3 = r.objectives[2] if r.objectives else None

    def gap(b: float) -> float | None:
        return round(100 * (l3 - b) / l3, 3) if l3 else None

    print(
        json.dumps(
            {
                "gpus": gpus,
                "load": round(load, 2),
                "L3": l3,
                "counted_units": int(counted.sum()),
                "B3L": round(dual.value, 1),
                "B3U_at_B3L": round(start, 1),
                "B3U_at_B3L_s": start_s,
                "unit_search": round(found, 1),
                "unit_search_s": found_s,
                "joint_stall": round(lp, 1),
                "gap_before": gap(max(dual.value, start)),
                "gap_after": gap(max(dual.value, found)),
                "reported": r.stats.get("L3_bound"),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
