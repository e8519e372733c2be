"""Where a repair window's LP gap is: its integrality in the admissions or in the slots (#17;
RESULTS.md, "Window rows on the repair step").

Not a ``schedopt bench`` suite. The windows are admission_step.py's (the repair's first pass
from the cached start, by first deadline, seed 0, 60 SLO jobs a window), each as the repair
step's model (C1–C7, L1 and B1c's rows, on the capacity the others leave), solved by HiGHS
(scipy's ``milp``) four ways: the LP; the tiers ``y`` and admissions ``z`` integer, the slots
``x`` continuous; ``x`` integer, ``y`` and ``z`` continuous; everything integer (the window's
optimum, or HiGHS's bound at ``--limit`` seconds). Values in L1's units (10 a first tier).
Rows go to benchmarks/results/admission_window_gap.jsonl.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from admission_step import prepared
from common import append_rows
from scipy.optimize import Bounds, LinearConstraint, milp

from schedopt.model.lp_bound import relax
from schedopt.problems.admission.assemble import guaranteed_value
from schedopt.problems.admission.model import build_model
from schedopt.problems.admission.repair import groups, left_for

MODES = {"lp": (), "yz": ("y", "z"), "x": ("x",), "all": ("x", "y", "z")}


def window_gap(sub, start, limit: float) -> dict:
    am = build_model(sub, l1_only=True, whole_slots=True)
    level = am.model.levels[0]
    r = relax(am.model, level.expr, level.sense)
    shape = (len(r.starts) - 1, am.model.num_cols)
    a = sp.csr_matrix((r.coefs, r.cols, r.starts), shape=shape)
    row = {"start": guaranteed_value(sub, start) / 1000}
    for mode, kinds in MODES.items():
        integral = np.zeros(am.model.num_cols)
        for kind in kinds:
            integral[list(getattr(am, kind).cols)] = 1
        t = time.perf_counter()
        res = milp(
            -r.c,
            constraints=LinearConstraint(a, r.lo, r.hi),
            bounds=Bounds(r.lb, r.ub),
            integrality=integral,
            options={"time_limit": limit},
        )
        bound = getattr(res, "mip_dual_bound", None)
        row[mode] = None if res.fun is None else round(-res.fun, 3)
        row[f"{mode}_bound"] = row[mode] if bound is None or mode == "lp" else round(-bound, 3)
        row[f"{mode}_s"] = round(time.perf_counter() - t, 2)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="1024x3200")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--windows", default="10-19", help="first-last, of the repair's first pass")
    ap.add_argument("--limit", type=float, default=20.0, help="HiGHS seconds per solve")
    ap.add_argument("--cache", default="/tmp")
    args = ap.parse_args(argv)
    data, start, _bound = prepared(args.shape, args.seed, Path(args.cache))
    first, last = (int(v) for v in args.windows.split("-"))
    windows = groups(data, start, 60, np.random.default_rng(0))
    rows = []
    for w in range(first, min(last, len(windows) - 1) + 1):
        indices = windows[w]
        sub = data.subset(indices, slot_capacity=left_for(data, start, set(indices)))
        load0 = os.getloadavg()[0]
        row = {"instance": f"{args.shape}-s{args.seed}", "window": w}
        row.update(window_gap(sub, [start[i] for i in indices], args.limit))
        row.update(load_before=load0, load_after=os.getloadavg()[0])
        print(json.dumps(row), flush=True)
        rows.append(row)
    append_rows("admission_window_gap", rows, argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
