"""Time shares (Gavel's policies): cold solves by size and policy, space sharing by column
generation, and round-to-round sessions against cold solves of the same rounds.

    python benchmarks/timeshare_rounds.py                  # all three parts
    python benchmarks/timeshare_rounds.py --part rounds --rounds 20

Part ``cold`` is ``schedopt bench timeshare-cold --seeds 0,1,2`` (one process per row, rows in
benchmarks/results/bench/timeshare-cold.jsonl, a rerun resumes): ``milp:highs`` at 256 / 1,024 /
2,048 jobs for each of three policies, level 1 only (as Gavel) and with level 2; wall, model
build and solver seconds per row (--repeats N: seeds 0..N-1, read the median).
Part ``pairs`` is ``schedopt bench timeshare-pairs``: max-min fairness with every equal-scale
pair co-locatable (Gavel's packing), 256 and 1,024 jobs: solver seconds, pair columns, columns
added and pricing rounds of the column generation (a row's ``stats``).
Part ``rounds`` is measured here: a RoundSession over 2,048 jobs, each round 8 departures, 8
arrivals and 8 revised throughputs, against a cold ``solve`` of the same round in the same
process; per-round apply (changed jobs checked), build, solver and wall seconds. Its rows go to
benchmarks/results/timeshare_rounds.jsonl (--out), one group per (jobs, rounds, levels), with
the machine and versions (schedopt.bench.record); a rerun reads them back.

Why ``rounds`` is not a suite: a session carries its model from round to round, each round's
instance being the last one changed; the figure is the warm step against a cold solve in one
process, which a suite's independent rows (a fresh process each) cannot measure.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from common import add_out_argument, bench, key, print_table, row_log

import schedopt
from schedopt.bench.suites.timeshare import COLD_POLICIES
from schedopt.problems.timeshare import generate_custom
from schedopt.problems.timeshare.rounds import RoundChange, RoundSession


def rounds(n: int, count: int, efficiency: bool) -> list[dict]:
    inst = generate_custom(n, seed=0).model_copy(update={"efficiency": efficiency})
    pool = generate_custom(n, seed=1).jobs
    session = RoundSession(inst, time_limit_s=60)
    session.solve()
    rows = []
    for k in range(count):
        ids = [j.id for j in session.instance.jobs]
        arrivals = tuple(
            j.model_copy(update={"id": f"r{k}-{i}"}) for i, j in enumerate(pool[8 * k : 8 * k + 8])
        )
        revised = {
            i: {
                w: r * 1.1
                for w, r in session.instance.jobs[session.instance.job_index[i]].throughput.items()
            }
            for i in ids[8:16]
        }
        warm = session.step(
            RoundChange(arrivals=arrivals, departures=tuple(ids[:8]), throughputs=revised)
        )
        timing = session.timings[-1]
        coldr = schedopt.solve(session.instance, "milp:highs", time_limit_s=60)
        assert abs(warm.objectives[0] - coldr.objectives[0]) <= 1e-6 * max(1, coldr.objectives[0])
        rows.append(
            {
                "part": "rounds",
                "jobs": n,
                "levels": 2 if efficiency else 1,
                "round": k,
                "apply_s": timing.apply_s,
                "build_s": timing.build_s,
                "solver_s": timing.solver_s,
                "wall_s": timing.wall_s + timing.apply_s,
                "warm": timing.warm,
                "cold_wall_s": coldr.wall_s,
                "cold_build_s": coldr.build_s,
                "cold_solver_s": coldr.solve_s,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--part", choices=["cold", "pairs", "rounds", "all"], default="all")
    ap.add_argument("--sizes", default="256,1024,2048", help="job counts of the cold part")
    ap.add_argument("--pair-sizes", default="256,1024", help="job counts of the pairs part")
    ap.add_argument("--repeats", type=int, default=3, help="cold solves per case (seeds)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--round-jobs", type=int, default=2048)
    add_out_argument(ap, "timeshare_rounds")
    args = ap.parse_args(argv)
    code = 0
    if args.part in ("cold", "all"):
        recipes = [
            f"{n}j-{policy}-L{levels}-s0"
            for n in args.sizes.split(",")
            for policy in COLD_POLICIES
            for levels in (1, 2)
        ]
        seeds = ",".join(str(s) for s in range(args.repeats))
        code = bench("timeshare-cold", ["--recipes", ",".join(recipes), "--seeds", seeds])
    if args.part in ("pairs", "all"):
        recipes = [f"{n}j-pairs-s0" for n in args.pair_sizes.split(",")]
        code = max(code, bench("timeshare-pairs", ["--recipes", ",".join(recipes)]))
    if args.part in ("rounds", "all"):
        log = row_log("timeshare_rounds", argv, args.out)
        for efficiency in (False, True):
            group = key("rounds", f"{args.round_jobs}j", f"{args.rounds}r", f"L{1 + efficiency}")
            rows = log.rows(group, lambda e=efficiency: rounds(args.round_jobs, args.rounds, e))
            print_table(
                f"rounds at {args.round_jobs} jobs, levels {2 if efficiency else 1}",
                rows,
                [
                    "round",
                    "apply_s",
                    "build_s",
                    "solver_s",
                    "wall_s",
                    "warm",
                    "cold_wall_s",
                    "cold_solver_s",
                ],
            )
            for name in ("wall_s", "solver_s", "cold_wall_s", "cold_solver_s", "apply_s"):
                print(f"  median {name}: {statistics.median(r[name] for r in rows):.4f}")
        print(f"rows in {log.path} ({log.measured} measured, {log.resumed} read back)")
    return code


if __name__ == "__main__":
    sys.exit(main())
