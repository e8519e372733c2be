"""What ``auto`` does at 1,024 GPUs x 3,200 jobs once the deadline has passed inside
``decomp:lp``'s bound phase, in wall and CPU seconds (RESULTS.md, "Admission's wall on a
starved machine"). A step made slow stands in for a starved machine: it sleeps until the
deadline has passed, and what the solve does after that is timed.

- ``--at b0``: B0's LP runs out its share at the deadline and answers nothing (the guide's
  bound taken away), the path of #17's 21.4 s and 24.1 s rows (B0k);
- ``--at greedy``: the deadline passes while the greedy plans are made.

Each row runs in a fresh process under ``nice -n 5`` with this checkout's package or
``--previous PATH``'s, alternating. On a machine ``S`` times slower than alone, the CPU
seconds after the deadline become about ``S`` times as many wall seconds past it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import append_rows, checkout_commit, run_in_checkout

ROOT = Path(__file__).resolve().parent.parent

ROW = """
import dataclasses, json, os, time
import schedopt
from schedopt.problems.admission import generate_custom, lpdecomp
from schedopt.problems.admission import tier_bound

inst = generate_custom(hosts=128, jobs=3200, slots=12, seed={seed})
mark = {{}}

def passed():
    mark["wall"], mark["cpu"] = time.perf_counter(), time.process_time()

if {at!r} == "b0":
    real_guide = lpdecomp.guide
    lpdecomp.guide = lambda *a, **k: dataclasses.replace(
        real_guide(*a, **k), bound=None, label="none", lagrangian=None
    )
    def late_b0(data, deadline, seconds):
        time.sleep(deadline.remaining() + 0.01)
        passed()
        return None
    tier_bound.tier_bound = late_b0
else:
    real_greedy = lpdecomp.greedy_plans
    def late_greedy(data, stop, tuned=None):
        plans = real_greedy(data, stop, tuned)
        time.sleep(stop.remaining() + 0.01)
        passed()
        return plans
    lpdecomp.greedy_plans = late_greedy
t = time.perf_counter()
r = schedopt.solve(inst, "auto", time_limit_s={limit})
wall, cpu = time.perf_counter(), time.process_time()
print(json.dumps(dict(
    wall_s=round(wall - t, 3), after_wall_s=round(wall - mark["wall"], 3),
    after_cpu_s=round(cpu - mark["cpu"], 3), load=os.getloadavg()[0], status=r.status.value,
    method_used=r.method, objective=r.objective, bound=r.best_bound,
    bound_label=r.stats.get("bound"), start_value=r.stats.get("start_value"),
)))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--at", choices=("b0", "greedy"), default="b0")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--limit", type=float, default=5.0)
    ap.add_argument("--previous", default=None, help="a checkout to alternate with")
    args = ap.parse_args(argv)
    trees = [("this", ROOT)] + ([("previous", Path(args.previous))] if args.previous else [])
    for r in range(args.rounds):
        for seed in (int(s) for s in args.seeds.split(",")):
            for label, path in trees if (r + seed) % 2 == 0 else trees[::-1]:
                row = {
                    "instance": f"1024x3200-s{seed}",
                    "at": args.at,
                    "tree": label,
                    "commit": checkout_commit(path),
                    "limit_s": args.limit,
                    **run_in_checkout(ROW.format(at=args.at, seed=seed, limit=args.limit), path),
                }
                print(json.dumps(row), flush=True)
                append_rows("admission_late_steps", [row], argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
