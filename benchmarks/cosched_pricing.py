"""The cost of cosched's exact pricing rounds, on fixed duals, in CPU seconds (#17).

    python benchmarks/cosched_pricing.py --capture duals.pkl      # a 10 s colgen run's duals
    python benchmarks/cosched_pricing.py --replay duals.pkl       # this checkout's cost

``--capture`` runs ``colgen`` on issue #17's 656 GPUs × 40 jobs (``generate_custom(41, 41, 40,
40, seed=0, models=(0, 1))``) for ``--time-limit`` seconds and keeps the duals of every exact
Farley bound its rounds prove (the smoothed ones exact pricing uses). ``--replay`` proves the
Farley bound with exact case bounds at each of those duals, without a deadline and without
hints carried between calls, and prints the CPU seconds (``time.process_time``: insensitive
to the machine's load, unlike the wall clock) and the bounds. Run ``--replay`` on the same file
from two checkouts (``PYTHONPATH=<checkout> python <this file> --replay FILE``) to compare them
on the same work; the bounds must agree (or rise where the old code stopped a case early).
"""

from __future__ import annotations

import argparse
import pickle
import time

import numpy as np

from schedopt.core.stopping import Deadline
from schedopt.problems.cosched import colgen, generate_custom
from schedopt.problems.cosched.farley import Combos, farley_bound
from schedopt.problems.cosched.heuristics import heuristic_data


def _instance():
    return generate_custom(41, 41, 40, 40, 0, (0, 1))


def capture(path: str, limit: float) -> None:
    import schedopt

    duals: list[tuple[np.ndarray, np.ndarray]] = []
    inner = colgen.farley_bound

    def keep(data, pi, y, deadline=None, exact=None, *rest, **kw):  # type: ignore[no-untyped-def]
        if exact is not None and deadline is exact:  # a round's exact pricing
            duals.append((np.array(pi), np.array(y)))
        return inner(data, pi, y, deadline, exact, *rest, **kw)

    colgen.farley_bound = keep  # type: ignore[assignment]
    result = schedopt.solve(_instance(), "colgen", time_limit_s=limit)
    with open(path, "wb") as f:
        pickle.dump(duals, f)
    print(f"{len(duals)} exact rounds; plan {result.objectives}, bound {result.best_bound}")


def replay(path: str) -> None:
    with open(path, "rb") as f:
        duals = pickle.load(f)
    data = heuristic_data(_instance())
    combos = [Combos(data, j) for j in data.jobs]
    started = time.process_time()
    bounds = [farley_bound(data, pi, y, None, Deadline.after(600), [], combos) for pi, y in duals]
    cpu = time.process_time() - started
    shown = ", ".join("none" if b is None else f"{b:.2f}" for b in bounds)
    print(f"{len(duals)} exact Farley bounds in {cpu:.2f} CPU s: {shown}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--capture", metavar="FILE")
    ap.add_argument("--replay", metavar="FILE")
    ap.add_argument("--time-limit", type=float, default=10.0)
    args = ap.parse_args()
    if args.capture:
        capture(args.capture, args.time_limit)
    if args.replay:
        replay(args.replay)


if __name__ == "__main__":
    main()
