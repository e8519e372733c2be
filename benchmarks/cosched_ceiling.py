"""How far cosched's Dantzig-Wolfe bound can go at 4,096 GPUs x 200 jobs (#17).

    python benchmarks/cosched_rounds.py --rounds 2000 --wall 600 --final duals.pkl
    python benchmarks/cosched_ceiling.py duals.pkl --case-s 0.25 2 10

``cosched_rounds.py --final`` keeps the duals of the last restricted master LP (its value
``z``, an upper bound on ``z_R'``, the master's LP over the whole relaxed column space R').
This script proves the Farley bound at those duals with exact case bounds of CP-SAT given
``--case-s`` seconds per case (``farley.CASE_S``, wall clock, no deadline on the whole), and
prints, per time: the bound, ``θ`` (the bound over the dual objective), how many case models
CP-SAT ran and how many it left open, and the CPU seconds (``time.process_time``). With
``θ = 1`` the master is optimal over R' and ``z`` is ``z_R'`` itself: the ceiling of every
bound of this Dantzig-Wolfe master. Below 1, ``θ z ≤ z_R' ≤ z``.
"""

from __future__ import annotations

import argparse
import pickle
import time

import numpy as np

from schedopt.core.stopping import Deadline
from schedopt.problems.cosched import farley, generate_custom, pricing
from schedopt.problems.cosched.farley import Combos, farley_bound
from schedopt.problems.cosched.heuristics import heuristic_data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("duals")
    ap.add_argument("--case-s", type=float, nargs="+", default=[0.25])
    args = ap.parse_args()
    with open(args.duals, "rb") as f:
        z, pi, y = pickle.load(f)
    data = heuristic_data(generate_custom(256, 256, 200, 200, 0, (0, 1)))
    combos = [Combos(data, j) for j in data.jobs]
    dual = float(pi.sum() + np.dot(np.minimum(y, 0.0), np.array(data.hosts, dtype=float)))
    print(f"master LP {z:.1f}, dual objective {dual:.1f}")
    inner = pricing.case_bound
    for seconds in args.case_s:
        runs = {"cases": 0, "open": 0}

        def counted(*a, runs=runs, **kw):
            got = inner(*a, **kw)
            runs["cases"] += 1
            enough = kw.get("enough", a[13] if len(a) > 13 else None)
            closed = got.upper <= got.value + 1e-3 or (
                enough is not None and got.upper <= enough + 1e-3
            )
            runs["open"] += not closed
            return got

        pricing.case_bound = counted
        farley.CASE_S = seconds
        found: list = []
        began = time.process_time()
        b = farley_bound(data, pi, y, None, Deadline.after(3600), found, combos)
        cpu = time.process_time() - began
        theta = float("nan") if b is None else b / dual
        print(
            f"case {seconds:g} s: bound {b:.1f}, theta {theta:.4f}, {runs['cases']} case models, "
            f"{runs['open']} left open, {len(found)} groups of negative reduced cost, "
            f"{cpu:.1f} CPU s",
            flush=True,
        )
    pricing.case_bound = inner


if __name__ == "__main__":
    main()
