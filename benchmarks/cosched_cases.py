"""Cosched's exact case models at 4,096 GPUs x 200 jobs, captured and replayed (#17).

    python benchmarks/cosched_cases.py --capture cases.pkl --duals duals.pkl --case-s 2
    python benchmarks/cosched_cases.py --replay cases.pkl --case-s 0.25

``--capture`` proves the Farley bound at the duals ``(z, π, y)`` that ``cosched_rounds.py
--final`` keeps, with ``--case-s`` seconds per case model, and keeps the arguments of every
case model CP-SAT is given (:func:`.pricing.case_bound`). ``--replay`` solves each captured
case model again with this checkout's code, for ``--case-s`` seconds (wall, as in a run) and
no ``enough`` (to its proof or the time), one process, with the two-pool programme's bound on
every case left open (as the refinement takes a case that would lower θ; ``--raw``: CP-SAT's
bound alone; an old checkout has no programme), and prints per case its proven bound
``U``, the best group found and whether it is proven; then the share of cases proven and the
mean gap ``(U − best) / best`` of the open ones, ``best`` being the most Σ π any replay of the
file has found (``--best``: a file of the best values, from a long replay, kept and read).
Run it from two checkouts on the same file to compare them on the same case models.
"""

from __future__ import annotations

import argparse
import os
import pickle
import time

import numpy as np

from schedopt.core.stopping import Deadline
from schedopt.problems.cosched import farley, generate_custom, pricing
from schedopt.problems.cosched.farley import Combos, farley_bound
from schedopt.problems.cosched.heuristics import heuristic_data


def capture(path: str, duals: str, seconds: float) -> None:
    with open(duals, "rb") as f:
        _, pi, y = pickle.load(f)
    data = heuristic_data(generate_custom(256, 256, 200, 200, 0, (0, 1)))
    combos = [Combos(data, j) for j in data.jobs]
    kept: list[tuple] = []
    inner = pricing.case_bound

    def keep(*a, **kw):  # type: ignore[no-untyped-def]
        kept.append(tuple(a[:12]))
        return inner(*a, **kw)

    pricing.case_bound = keep  # type: ignore[assignment]
    farley.CASE_S = seconds
    b = farley_bound(data, pi, y, None, Deadline.after(3600), [], combos)
    pricing.case_bound = inner
    with open(path, "wb") as f:
        pickle.dump(kept, f)
    print(f"{len(kept)} case models kept; bound {b}")


def replay(path: str, seconds: float, best_path: str | None, raw: bool = False) -> None:
    with open(path, "rb") as f:
        cases = pickle.load(f)
    best = [0.0] * len(cases)
    if best_path and os.path.exists(best_path):
        with open(best_path, "rb") as f:
            best = pickle.load(f)
    got = []
    started = time.process_time()
    for i, args in enumerate(cases):
        t = time.process_time()
        r = pricing.case_bound(*args, seconds)
        if not getattr(r, "decided", True) and not raw:  # as the refinement takes it
            a = args
            dp = pricing.open_bound(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[10], a[9])
            r = pricing.with_programme(r, dp)
        cpu = time.process_time() - t
        proven = r.upper <= r.value + len(args[1]) / pricing.SCALE + 1e-6
        got.append((r.upper, r.value, proven))
        best[i] = max(best[i], r.value)
        print(
            f"case {i:3} items {len(args[1]):3} level {args[10]:6}  U {r.upper:9.3f}  "
            f"found {r.value:9.3f}  {'proven' if proven else 'open  '}  {cpu:.2f} CPU s"
        )
    cpu = time.process_time() - started
    if best_path:
        with open(best_path, "wb") as f:
            pickle.dump(best, f)
    open_ = [i for i, (_, _, p) in enumerate(got) if not p]
    gaps = [(got[i][0] - best[i]) / best[i] for i in open_ if best[i] > 0]
    print(
        f"{len(cases)} case models at {seconds:g} s: {len(cases) - len(open_)} proven "
        f"({(len(cases) - len(open_)) / len(cases):.0%}); open: mean gap of U over the best "
        f"{np.mean(gaps) if gaps else 0:.2%}, max {max(gaps, default=0):.2%}; {cpu:.1f} CPU s"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--capture", metavar="FILE")
    ap.add_argument("--duals", metavar="FILE")
    ap.add_argument("--replay", metavar="FILE")
    ap.add_argument("--best", metavar="FILE")
    ap.add_argument("--case-s", type=float, default=0.25)
    ap.add_argument("--raw", action="store_true", help="CP-SAT's bounds alone (no programme)")
    args = ap.parse_args()
    if args.capture:
        capture(args.capture, args.duals, args.case_s)
    if args.replay:
        replay(args.replay, args.case_s, args.best, args.raw)


if __name__ == "__main__":
    main()
