"""Fair-share benchmark: every method on generated rounds of 64 to 4,096 GPUs (H100/A100/V100).

Now the suite ``fairshare-scaling`` of ``schedopt bench`` (schedopt/bench/suites/fairshare.py,
docs/benchmarks.md); this script only calls it, with the output file RESULTS.md cites:

    python benchmarks/fairshare.py             # schedopt bench fairshare-scaling
    python benchmarks/fairshare.py --quick     # 64 to 1,024 GPUs
    python benchmarks/fairshare.py --methods auto,heuristic:astraea --time-limits 5

Every other argument goes to ``schedopt bench``. A row records the minimum tenant LTGF (L1), the
bound and gap, the effective throughput (L2), the restart + fragmentation cost (L3), and the
validator's metrics (Jain index, max/min share ratio, preemptions, the Gavel LP's minimum share
for gavel-round). Gavel's measured throughputs: the suites ``fairshare-medium`` and
``fairshare-trace`` (the data folder). The rows of the script this replaces are in
benchmarks/results/fairshare.jsonl.
"""

from __future__ import annotations

import sys

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import bench

QUICK = "64gpu-10t-100j-s0,256gpu-20t-300j-s0,1024gpu-50t-1000j-s0"


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if "--quick" in args:
        args.remove("--quick")
        args += ["--recipes", QUICK]
    return bench("fairshare-scaling", args)


if __name__ == "__main__":
    sys.exit(main())
