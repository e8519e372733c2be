"""Cosched's column generation round by round, in CPU seconds (#17).

    python benchmarks/cosched_rounds.py --rounds 60 [--smooth 0.8] [--packing FILE]

Runs column generation (``colgen.generate``, deterministic mode: CP-SAT stops on its
deterministic time) on issue #17's 4,096 GPUs x 200 jobs (``generate_custom(256, 256, 200,
200, seed=0, models=(0, 1))``) from the packing plan (computed once in 20 s and kept in
``--packing``, so two checkouts start from the same columns), for ``--rounds`` rounds, and
prints every exact round's Farley bound and every master LP from the greedy rounds' end on,
each with the CPU seconds since the start (``time.process_time``: insensitive to the machine's
load) and the groups exact pricing proposed; then how many proposed groups the schedule check
kept whole, shrank or dropped. Run it from two checkouts (``PYTHONPATH=<checkout> python
<this file>``) for the master LP and the bound per round and per CPU second, old against new.
"""

from __future__ import annotations

import argparse
import os
import pickle
import time

import schedopt
from schedopt.core.options import SolveOptions
from schedopt.core.stopping import Deadline
from schedopt.executor import make_executor
from schedopt.problems.cosched import colgen, decomp, generate_custom
from schedopt.problems.cosched.heuristics import heuristic_data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--smooth", type=float, help="colgen.SMOOTH for this run")
    ap.add_argument("--packing", default="cosched-4096-packing.pkl")
    ap.add_argument(
        "--wall",
        type=float,
        default=3600.0,
        help="seconds of rounds (then the final bound stage, up to 120 s more)",
    )
    ap.add_argument("--live", action="store_true", help="print every round as it ends")
    ap.add_argument("--final", metavar="FILE", help="keep the last master LP's duals in FILE")
    args = ap.parse_args()
    inst = generate_custom(256, 256, 200, 200, 0, (0, 1))
    if not os.path.exists(args.packing):
        with open(args.packing, "wb") as f:
            pickle.dump(schedopt.solve(inst, "heuristic:packing", time_limit_s=20).solution, f)
    with open(args.packing, "rb") as g:
        hint = pickle.load(g)
    if args.smooth is not None:
        colgen.SMOOTH = args.smooth
    log: list[tuple] = []
    t0 = [0.0]
    checks = {"whole": 0, "shrunk": 0, "dropped": 0}
    bound, solve, check = colgen.farley_bound, colgen.Master.solve, colgen.check

    def traced_bound(data, pi, y, deadline=None, exact=None, *rest, **kw):
        b = bound(data, pi, y, deadline, exact, *rest, **kw)
        found = rest[0] if rest else kw.get("found")
        n = "-" if found is None else len(found)
        log.append(("bound", time.process_time() - t0[0], b, n))
        if args.live:
            print(*_shown(log[-1]), sep="", flush=True)
        return b

    last: list = []

    def traced_solve(self, seconds):
        r = solve(self, seconds)
        if r is not None:
            last[:] = [r]
        log.append(
            ("lp", time.process_time() - t0[0], None if r is None else r[0], len(self.columns))
        )
        if args.live:
            print(*_shown(log[-1]), sep="", flush=True)
        return r

    def traced_check(data, members, *a, **kw):
        col = check(data, members, *a, **kw)
        key = "dropped" if col is None else "shrunk" if len(col.members) < len(members) else "whole"
        checks[key] += 1
        return col

    colgen.farley_bound = traced_bound
    colgen.Master.solve = traced_solve  # type: ignore[method-assign]
    # counted here because no case workers are given: ``colgen.checked`` then runs each
    # group's ``colgen.check`` as a task of the inline executor below, in this process (with
    # case workers it would send ``check_batch`` tasks to them, past this patch)
    colgen.check = traced_check
    data = heuristic_data(inst)
    start, _ = decomp._start(
        inst, data, SolveOptions(deterministic=True, hint=hint), Deadline.after(100)
    )
    t0[0] = time.process_time()
    with make_executor("inline") as ex:
        gen = colgen.generate(
            data,
            start,
            Deadline.after(args.wall),
            ex,
            Deadline.after(args.wall + 120),
            args.rounds,
            True,
        )
    seen_exact = False
    for entry in log if not args.live else ():
        seen_exact |= entry[0] == "bound"
        if seen_exact:  # from the first exact round on
            print(*_shown(entry), sep="")
    print(f"checks {checks}; bound {gen.bound}, master LP {gen.lp}, {gen.rounds} rounds")
    if args.final and last:
        with open(args.final, "wb") as f:
            pickle.dump(last[0], f)


def _shown(entry: tuple) -> tuple[str, ...]:
    kind, cpu, value, n = entry
    shown = "none" if value is None else f"{value:.1f}"
    what = "proposed" if kind == "bound" else "columns"
    return (f"{kind:5} {cpu:7.2f} CPU s  {shown:>8}  {what} {n}",)


if __name__ == "__main__":
    main()
