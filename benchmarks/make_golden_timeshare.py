"""Regenerate the golden time-share instances and record their proven optimal objectives.

    python benchmarks/make_golden_timeshare.py

Writes ``instances/timeshare/<name>.json`` and ``instances/timeshare/golden.json``: one round
per Gavel policy, with and without co-located pairs (pairs one by one, and a co-location
table by job type). An instance becomes golden only if HiGHS
and CBC both prove it optimal and agree on every level within 1e-6 (CBC's solution file
carries 8 significant digits); the objectives recorded are HiGHS's. Their agreement with an
independent LP written from Gavel's code is tests/timeshare/test_gavel_optimum.py's job.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import make_golden

from schedopt.problems.timeshare import Policy, generate_custom

OUT = Path(__file__).resolve().parents[1] / "instances" / "timeshare"
EXACT = ("milp:highs", "milp:cbc")


def candidates():
    for k, policy in enumerate(Policy):
        yield f"{policy.value}-8j-s{k}", generate_custom(8, seed=k, policy=policy)
        if policy.takes_pairs:
            name = f"{policy.value}-pairs-6j-s{k}"
            yield name, generate_custom(6, seed=k, policy=policy, pairs=True, name=name)
            # co-location by job type: classes of identical jobs and class pairs
            name = f"{policy.value}-colocation-24j-s{k}"
            yield (
                name,
                generate_custom(24, seed=k, policy=policy, pairs=True, job_types=4, name=name),
            )


def main() -> int:
    return make_golden(candidates(), OUT, EXACT, time_limit_s=60, rel_tol=1e-6)


if __name__ == "__main__":
    sys.exit(main())
