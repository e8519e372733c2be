"""Deadline-admission benchmark: every method on generated instances of 64 to 1,024 GPUs.

Now the suites ``admission-scaling`` and ``admission-contested`` of ``schedopt bench``
(schedopt/bench/suites/admission.py, docs/benchmarks.md); this script only calls it, with the
output file RESULTS.md cites:

    python benchmarks/admission.py                 # schedopt bench admission-scaling
    python benchmarks/admission.py --contended     # schedopt bench admission-contested
    python benchmarks/admission.py --methods auto,heuristic:edf --time-limits 5 --jobs 2

Every other argument goes to ``schedopt bench`` (--methods, --time-limits, --seeds, --executor,
--jobs, --address). Rows go to benchmarks/results/bench/<suite>.jsonl (a rerun resumes), with
the Markdown table and the plots beside them. The rows of earlier runs of the old script are in
benchmarks/results/admission.jsonl.
"""

from __future__ import annotations

import sys

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import bench


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    suite = "admission-scaling"
    if "--contended" in args:
        args.remove("--contended")
        suite = "admission-contested"
    return bench(suite, args)


if __name__ == "__main__":
    sys.exit(main())
