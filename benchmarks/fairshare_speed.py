"""One fair-share solve at the papers' scale (issue #17), one JSON line: the time breakdown of
the decomposition (data, split, bound, join, B3L) and of solve()'s finish (validation and
evaluation), for before/after comparisons run one process per row.

    python benchmarks/fairshare_speed.py TAG METHOD LIMIT_S [GPUS TENANTS JOBS SEED]
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time

import schedopt
from schedopt.problems.fairshare import generate_custom

solve_module = importlib.import_module("schedopt.core.solve")
_finish = solve_module._finish
FINISH: list[float] = []


def _timed_finish(*args, **kwargs):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    out = _finish(*args, **kwargs)
    FINISH.append(time.perf_counter() - started)
    return out


solve_module._finish = _timed_finish


def main() -> None:
    tag, method, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
    gpus, tenants, jobs, seed = (int(a) for a in (sys.argv[4:8] or [16384, 200, 20000, 0]))
    inst = generate_custom(gpus=gpus, tenants=tenants, jobs=jobs, seed=seed)
    load = os.getloadavg()[0]
    started = time.perf_counter()
    r = schedopt.solve(inst, method, time_limit_s=limit)
    wall = time.perf_counter() - started
    st, o = r.stats, r.objectives
    b2 = st.get("L2_bound")
    row = {
        "tag": tag,
        "method": method,
        "limit": limit,
        "load": round(load, 2),
        "wall": round(wall, 2),
        "status": r.status.value,
        "L1": o[0] if o else None,
        "bound": r.best_bound,
        "L2": o[1] if o else None,
        "B2": b2,
        "L2gap": round(100 * (b2 - o[1]) / o[1], 2) if o and b2 else None,
        "L3": o[2] if o else None,
        "B3L": st.get("L3_bound"),
        "L3gap": round(100 * (o[2] - st["L3_bound"]) / o[2], 2)
        if o and o[2] and st.get("L3_bound") is not None
        else None,
        **{
            k: st.get(k)
            for k in (
                "data_s",
                "split_s",
                "bound_s",
                "join_s",
                "restore_s",
                "restored_jobs",
                "L3_bound_s",
                "parts_slowest_s",
                "parts_solved",
                "l2_repair_neighbourhoods",
                "l2_repair_improved",
                "l2_repair_gained",
                "l2_repair_l3_saved",
                "l2_repair_s",
                "l3_return_saved",
                "l3_return_s",
                "l3_swap_saved",
                "l3_swap_s",
                "l3_exchange_saved",
                "l3_exchange_s",
            )
        },
        "finish_s": round(FINISH[0], 3) if FINISH else None,
    }
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
