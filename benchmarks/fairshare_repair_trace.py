"""fairshare_speed.py's row, and on stderr one JSON line per neighbourhood of the join's L2
repair (issue #17): phase (L2 or L3), jobs, seconds given and taken, the plan's L2 gained and
L3 change in the neighbourhood's jobs (0 when not kept), kept, and HiGHS's gap at its stop.

    python benchmarks/fairshare_repair_trace.py TAG METHOD LIMIT_S [GPUS TENANTS JOBS SEED]
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
speed = importlib.import_module("fairshare_speed")
repair = importlib.import_module("schedopt.problems.fairshare.l2_repair")
hood = importlib.import_module("schedopt.problems.fairshare.neighbourhood")

LAST: list[Any] = []
_highs_of = hood.highs_of


def _recorded_highs(*args, **kwargs):  # type: ignore[no-untyped-def]
    h = _highs_of(*args, **kwargs)
    LAST[:] = [h]
    return h


hood.highs_of = _recorded_highs
_improve = repair.improve_neighbourhood


def _traced(state, chosen, end, l2, out, *rest):  # type: ignore[no-untyped-def]
    before = state.levels(chosen)
    kept, given, w = out.improved, end - time.perf_counter(), time.perf_counter()
    LAST.clear()
    _improve(state, chosen, end, l2, out, *rest)
    after = state.levels(chosen)
    info = LAST[0].getInfo() if LAST else None
    row = {
        "phase": "L2" if l2 else "L3",
        "jobs": len(chosen),
        "given_s": round(given, 3),
        "took_s": round(time.perf_counter() - w, 3),
        "kept": out.improved > kept,
        "dL2": round(after[0] - before[0], 4),
        "dL3": round(after[1] - before[1], 1),
        "mip_gap": None if info is None else info.mip_gap,
        "mip_obj": None if info is None else info.objective_function_value,
        "mip_bound": None if info is None else info.mip_dual_bound,
    }
    print(json.dumps(row), file=sys.stderr, flush=True)


repair.improve_neighbourhood = _traced

if __name__ == "__main__":
    speed.main()
