"""Issue #17's contested admission rows, new against previous, in one run (RESULTS.md,
"Admission at the papers' scale: whole-slot rows, B1L, LP rounding and repair").

Two parts:

- ``--bounds``: per instance, B1 without and with the whole-slot rows B1c (HiGHS to optimality,
  no limit) and B1L at the LP's capacity duals, with their times;
- the rows: ``schedopt.solve(inst, METHOD, time_limit_s=LIMIT)`` once per instance and method,
  each in a fresh process, one at a time; ``--previous PATH`` runs ``auto`` a second time with
  the package imported from PATH (a checkout of the commit before), on the same instances;
  ``--variant LABEL=PATH`` likewise from other checkouts, ``--params LABEL=JSON`` with
  ``params`` (``{"executor": "process", "workers": 2}``: the parallel pass).

An instance's rows are a pair (or more): this checkout's against the others'. Their order
alternates so that load drifting within a pair favours neither side: in the odd pairs (the
1st, 3rd, ... instance) the other checkouts' rows run first, in the even ones this
checkout's; ``--bounds`` always first. ``--seeds 0,0`` measures one instance twice, once each
way.

Rows (with the 1-minute load before and after each, and the solve's CPU seconds ``cpu_s``) go to
benchmarks/results/admission_bounds.jsonl; a table is printed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import append_rows, run_in_checkout

ROOT = Path(__file__).resolve().parent.parent
SHAPES = {"256x800": (32, 800), "1024x3200": (128, 3200), "1024x1000": (128, 1000)}

ROW = """
import json, os, sys, time
import schedopt
from schedopt.problems.admission import generate_custom
hosts, jobs, seed, method, limit = {hosts}, {jobs}, {seed}, {method!r}, {limit}
params = {params!r}
inst = generate_custom(hosts=hosts, jobs=jobs, slots=12, seed=seed)
load0 = os.getloadavg()[0]
t, c = time.perf_counter(), time.process_time()
r = schedopt.solve(inst, method, time_limit_s=limit, **({{"params": params}} if params else {{}}))
wall, cpu = time.perf_counter() - t, time.process_time() - c
print(json.dumps(dict(status=r.status.value, method_used=r.method, objective=r.objective,
    bound=r.best_bound, gap=r.gap, wall_s=round(wall, 3), cpu_s=round(cpu, 3), load_before=load0,
    load_after=os.getloadavg()[0],
    stats={{k: v for k, v in r.stats.items() if isinstance(v, (int, float, str))}})))
"""

BOUNDS = """
import json, os, time
import numpy as np
from schedopt.problems.admission import generate_custom
from schedopt.problems.admission.data import build_data
from schedopt.problems.admission.bound import l1_bound
from schedopt.problems.admission.lagrange import Prices
d = build_data(generate_custom(hosts={hosts}, jobs={jobs}, slots=12, seed={seed}), check_size=False)
out = dict(load_before=os.getloadavg()[0])
for name, ws in (("b1", False), ("b1c", True)):
    t = time.perf_counter(); lp = l1_bound(d, 600.0, whole_slots=ws)
    out[name] = lp.bound; out[name + "_s"] = round(time.perf_counter() - t, 3)
p = Prices(d)
lam = np.array([max(0.0, lp.prices.get(k, 0.0)) for k in p.keys])
t = time.perf_counter(); v, _ = p.oracle(lam)
out["b1l"] = float(lam @ p.rhs + v); out["b1l_s"] = round(time.perf_counter() - t, 3)
out["load_after"] = os.getloadavg()[0]
print(json.dumps(out))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="256x800,1024x3200")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--methods", default="auto")
    ap.add_argument("--limit", type=float, default=10.0)
    ap.add_argument("--previous", default=None, help="a checkout of the previous commit")
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="LABEL=PATH",
        help="auto once more per instance from another checkout (repeatable)",
    )
    ap.add_argument(
        "--params",
        action="append",
        default=[],
        metavar="LABEL=JSON",
        help="auto once more per instance with these params (e.g. the executor's), repeatable",
    )
    ap.add_argument("--bounds", action="store_true")
    args = ap.parse_args(argv)
    rows = []
    pair = 0
    for shape in args.shapes.split(","):
        hosts, jobs = SHAPES[shape]
        for seed in (int(s) for s in args.seeds.split(",")):
            pair += 1
            here: list[tuple[str, Path, str]] = []
            for m in args.methods.split(","):
                here.append((m, ROOT, ROW))
            params: dict[str, dict] = {}
            for spec in args.params:
                label, _, given = spec.partition("=")
                here.append((f"auto ({label})", ROOT, ROW))
                params[f"auto ({label})"] = json.loads(given)
            others: list[tuple[str, Path, str]] = []
            for spec in args.variant:
                label, _, where = spec.partition("=")
                others.append((f"auto ({label})", Path(where), ROW))
            if args.previous:
                others.append(("auto (previous)", Path(args.previous), ROW))
            cases = [("bounds", ROOT, BOUNDS)] if args.bounds else []
            cases += others + here if pair % 2 else here + others  # module docstring
            for label, path, code in cases:
                method = "auto" if label.startswith("auto (") else label
                got = run_in_checkout(
                    code.format(
                        hosts=hosts,
                        jobs=jobs,
                        seed=seed,
                        method=method,
                        limit=args.limit,
                        params=params.get(label, {}),
                    ),
                    path,
                )
                row = {"instance": f"{shape}-s{seed}", "method": label, "limit_s": args.limit}
                row.update(got)
                rows.append(row)
                print(json.dumps(row), flush=True)
                append_rows("admission_bounds", [row], argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
