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

#: Per phase of the decomposition: [calls, wall s, CPU s] (time.process_time: CPU well under
#: wall is the process waiting for a core, not work), and each part's LP stages.
PHASES: dict[str, list[float]] = {}
STAGES: list[str] = []
#: What B2 (the whole round's, ``bounds``) and B2L (``l2_prices``) returned, and B2's data.
SEEN: dict[str, object] = {}


def _phased(module: object, name: str, label: str) -> None:
    """``module.name`` timed under ``label`` (a global the decomposition looks up per call)."""
    inner = getattr(module, name)

    def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
        w, c = time.perf_counter(), time.process_time()
        try:
            out = inner(*args, **kwargs)
            if label == "bound":
                SEEN["B2_whole"], SEEN["data"] = out.l2, args[0]
            elif label == "B2L":
                SEEN["B2L"] = out[0]
            return out
        finally:
            row = PHASES.setdefault(label, [0, 0.0, 0.0])
            row[0] += 1
            row[1] += time.perf_counter() - w
            row[2] += time.process_time() - c

    setattr(module, name, timed)


decomp = importlib.import_module("schedopt.problems.fairshare.decomp")
# (the joined plan's B2L, repairs and B3L look their steps up in join_levels.py)
join_levels = importlib.import_module("schedopt.problems.fairshare.join_levels")
for _name, _label in (
    ("bounds", "bound"),
    ("solve_part", "part"),
    ("lp_guide", "part_lp"),
    ("run_gavel_round", "part_round"),
    ("join", "join"),
    ("water_fill", "join_fill"),
    ("restore_running", "join_restore"),
    ("l2_prices", "B2L"),
    ("repair_l2", "L2_repair"),
    ("l3_dual", "B3L"),
    ("unit_bound", "B3U"),
    ("unit_search", "B3U"),
    ("return_running", "L3_return"),
    ("swap_returns", "L3_swap"),
    ("exchange", "L3_exchange"),
    ("repair_l3", "L3_repair"),
):
    for _module in (decomp, join_levels):
        if hasattr(_module, _name):
            _phased(_module, _name, _label)

# B2L's Lagrangian evaluations (its golden sections stop at a wall-clock share)
_l2_bound = importlib.import_module("schedopt.problems.fairshare.l2_bound")
_phased(_l2_bound, "lagrangian", "B2L_eval")

_staged = importlib.import_module("schedopt.model.lp_bound").StagedLp
_maximise = _staged.maximise


def _timed_stage(self, c, time_limit_s, *, primal=False):  # type: ignore[no-untyped-def]
    # each part's LP stage: wall/CPU/limit in ms, "x" where it stopped unsolved
    w, cpu = time.perf_counter(), time.process_time()
    x = _maximise(self, c, time_limit_s, primal=primal)
    STAGES.append(
        f"{1000 * (time.perf_counter() - w):.0f}/{1000 * (time.process_time() - cpu):.0f}"
        f"/{1000 * time_limit_s:.0f}{'' if x is not None else 'x'}"
    )
    return x


_staged.maximise = _timed_stage


def main() -> None:
    if len(sys.argv) not in (4, 8) or "-h" in sys.argv or "--help" in sys.argv:
        sys.exit(__doc__)
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
                "parts_s",
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
        "phases": {k: [int(n), round(w, 3), round(c, 3)] for k, (n, w, c) in PHASES.items()},
        "lp_stages": " ".join(STAGES),
        "B2_whole": SEEN.get("B2_whole"),
        "B2L": SEEN.get("B2L"),
    }
    if "data" in SEEN:  # B2 given all its steps (after the run, out of its time)
        gpu_prices = importlib.import_module("schedopt.problems.fairshare.bound").gpu_prices
        row["B2_all_steps"] = gpu_prices(SEEN["data"])[0]
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
