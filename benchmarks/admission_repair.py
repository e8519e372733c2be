"""Admission's repair with and without the LP's neighbourhoods, reproducibly (#17; RESULTS.md,
"Admission at the papers' scale ...", "Repair's LP neighbourhoods").

Not a ``schedopt bench`` suite: it measures one step of ``decomp:lp`` (the repair) from one
start, not a method's answer. Per instance the LP guide and the start are computed once (as
``decomp:lp`` does, with no time pressure), then ``repair`` runs from that start for at most
``--steps`` CP-SAT steps on CP-SAT's deterministic time (``--step-s`` a step at most, 60-job
groups), once with ``lp=None`` (the windows only: the repair before the neighbourhoods) and
once with the LP point, in one process. The same command gives the same values on any load;
only the wall time depends on the machine. With ``--wall S`` the repair instead runs S seconds
of wall time (CP-SAT on the wall clock, as in ``decomp:lp``), ``--repeat`` times per variant,
the variants alternating (windows first, then the LP first): a comparison at equal time, which
the load moves. Rows go to benchmarks/results/admission_repair.jsonl.
"""

from __future__ import annotations

import argparse
import json
import os
import time

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import append_rows

from schedopt.core.stopping import Deadline
from schedopt.problems.admission import generate_custom
from schedopt.problems.admission.assemble import guaranteed_value
from schedopt.problems.admission.data import build_data
from schedopt.problems.admission.guide import guide
from schedopt.problems.admission.lpdecomp import start_plan
from schedopt.problems.admission.repair import repair

SHAPES = {"256x800": (32, 800), "1024x3200": (128, 3200)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="256x800")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--steps", default="18,60", help="step caps, comma-separated")
    ap.add_argument("--guide-s", type=float, default=30.0)
    ap.add_argument("--wall", type=float, default=None, help="seconds of wall time instead")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args(argv)
    for shape in args.shapes.split(","):
        hosts, jobs = SHAPES[shape]
        for seed in (int(s) for s in args.seeds.split(",")):
            inst = generate_custom(hosts=hosts, jobs=jobs, slots=12, seed=seed)
            far = Deadline.after(3600)
            data = build_data(inst, check_size=False, deadline=far)
            g = guide(data, args.guide_s, far)
            start = start_plan(data, g.lp, None, far)
            assert start is not None and g.bound is not None
            pair = [("windows", None), ("windows+lp", g.lp)]
            if args.wall is None:
                runs = [(v, lp, int(n)) for n in args.steps.split(",") for v, lp in pair]
            else:
                runs = [
                    (v, lp, None) for r in range(args.repeat) for v, lp in pair[:: 1 - 2 * (r % 2)]
                ]
            for variant, lp, steps in runs:
                load0 = os.getloadavg()[0]
                t = time.perf_counter()
                out, stats = repair(
                    data,
                    start,
                    far if args.wall is None else Deadline.after(args.wall),
                    0,
                    lp,
                    max_steps=steps,
                    deterministic=args.wall is None,
                )
                value = guaranteed_value(data, out) / 1000
                row = {
                    "instance": f"{shape}-s{seed}",
                    "variant": variant,
                    "max_steps": steps,
                    "wall_limit_s": args.wall,
                    "bound": g.bound,
                    "start": guaranteed_value(data, start) / 1000,
                    "value": value,
                    "gap": (g.bound - value) / g.bound,
                    "wall_s": round(time.perf_counter() - t, 2),
                    "load_before": load0,
                    "load_after": os.getloadavg()[0],
                    "stats": stats,
                }
                print(json.dumps(row), flush=True)
                append_rows("admission_repair", [row], argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
