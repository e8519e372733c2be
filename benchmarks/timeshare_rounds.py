"""Time shares (Gavel's policies): cold solves by size and policy, space sharing by column
generation, and round-to-round sessions against cold solves of the same rounds.

    python benchmarks/timeshare_rounds.py                  # all three parts
    python benchmarks/timeshare_rounds.py --part rounds --rounds 20

Part ``cold``: ``schedopt.solve(milp:highs)`` at 256 / 1,024 / 2,048 jobs for each policy,
level 1 only (as Gavel) and with level 2; wall, model build, solver, validation (the rest).
Part ``pairs``: max-min fairness with every equal-scale pair co-locatable (Gavel's packing),
256 and 1,024 jobs: instance validation, data, column generation rounds, solver seconds.
Part ``rounds``: a RoundSession over 2,048 jobs, each round 8 departures, 8 arrivals and 8
revised throughputs, against a cold ``solve`` of the same round in the same process;
per-round apply (changed jobs checked), build, solver and wall seconds.
Prints tables and appends JSON lines to ``benchmarks/results/timeshare_rounds.jsonl``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from common import append_rows, print_table

import schedopt
from schedopt.problems.timeshare import Policy, generate_custom
from schedopt.problems.timeshare.rounds import RoundChange, RoundSession


def cold(sizes: list[int], repeats: int) -> list[dict]:
    rows = []
    for n in sizes:
        for policy in (
            Policy.MAX_MIN_FAIRNESS_PERF,
            Policy.FINISH_TIME_FAIRNESS,
            Policy.MIN_MAKESPAN,
        ):
            base = generate_custom(n, seed=0, policy=policy)
            for efficiency in (False, True):
                inst = base.model_copy(update={"efficiency": efficiency})
                runs = [schedopt.solve(inst, "milp:highs", time_limit_s=60) for _ in range(repeats)]
                mid = sorted(runs, key=lambda r: r.wall_s)[len(runs) // 2]
                rows.append(
                    {
                        "part": "cold",
                        "jobs": n,
                        "policy": policy.value,
                        "levels": 2 if efficiency else 1,
                        "status": mid.status.value,
                        "wall_s": mid.wall_s,
                        "build_s": mid.build_s,
                        "solver_s": mid.solve_s,
                        "validate_s": mid.wall_s - mid.build_s - mid.solve_s,
                        "level1": mid.objectives[0],
                    }
                )
    return rows


def pairs(sizes: list[int]) -> list[dict]:
    rows = []
    for n in sizes:
        t = time.perf_counter()
        inst = generate_custom(n, seed=0, pairs=True).model_copy(update={"efficiency": False})
        made = time.perf_counter() - t
        r = schedopt.solve(inst, "milp:highs", time_limit_s=120)
        rows.append(
            {
                "part": "pairs",
                "jobs": n,
                "pairs": len(inst.pairs),
                "generate_and_validate_s": made,
                "status": r.status.value,
                "wall_s": r.wall_s,
                "solver_s": r.solve_s,
                "pair_columns": r.stats.get("pair_columns"),
                "added": r.stats.get("pair_columns_added"),
                "pricing_rounds": r.stats.get("pricing_rounds"),
                "level1": r.objectives[0],
            }
        )
    return rows


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
    ap.add_argument("--repeats", type=int, default=3, help="cold solves per case (median shown)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--round-jobs", type=int, default=2048)
    args = ap.parse_args(argv)
    out = []
    if args.part in ("cold", "all"):
        rows = cold([int(s) for s in args.sizes.split(",")], args.repeats)
        print_table(
            "cold solves (milp:highs, median of repeats)",
            rows,
            ["jobs", "policy", "levels", "status", "wall_s", "build_s", "solver_s", "validate_s"],
        )
        out += rows
    if args.part in ("pairs", "all"):
        rows = pairs([int(s) for s in args.pair_sizes.split(",")])
        print_table(
            "space sharing (column generation)",
            rows,
            [
                "jobs",
                "pairs",
                "generate_and_validate_s",
                "status",
                "wall_s",
                "solver_s",
                "pair_columns",
                "added",
                "pricing_rounds",
            ],
        )
        out += rows
    if args.part in ("rounds", "all"):
        for efficiency in (False, True):
            rows = rounds(args.round_jobs, args.rounds, efficiency)
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
            for key in ("wall_s", "solver_s", "cold_wall_s", "cold_solver_s", "apply_s", "build_s"):
                print(f"  median {key}: {statistics.median(r[key] for r in rows):.4f}")
            out += rows
    append_rows("timeshare_rounds", out, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
