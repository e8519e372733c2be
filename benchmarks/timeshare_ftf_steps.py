"""Finish-time fairness: LPs and seconds per round at 32, 256 and 1,024 jobs with elapsed time
(issue #19; benchmarks/RESULTS.md).

A thin caller of ``schedopt bench timeshare-ftf`` (schedopt/bench/suites/timeshare.py): one
process per row, rows in benchmarks/results/bench/timeshare-ftf.jsonl (a rerun resumes), the LPs
of the secant search in each row's ``stats.dinkelbach_steps``:

    python benchmarks/timeshare_ftf_steps.py
    python benchmarks/timeshare_ftf_steps.py --recipes ftf-32j-s3     # one row

Every argument goes to ``schedopt bench``.
"""

from __future__ import annotations

import sys

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import bench


def main(argv: list[str] | None = None) -> int:
    return bench("timeshare-ftf", list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
