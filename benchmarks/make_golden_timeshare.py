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

import json
import sys
from pathlib import Path

import schedopt
from schedopt.core.status import Status
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
    OUT.mkdir(parents=True, exist_ok=True)
    golden = {}
    for name, inst in candidates():
        found = {}
        for method in EXACT:
            r = schedopt.solve(inst, method, time_limit_s=60)
            if r.status is not Status.OPTIMAL:
                print(f"{name}: {method} ended {r.status.value}; not golden", file=sys.stderr)
                return 1
            found[method] = r.objectives
        ref, cbc = found["milp:highs"], found["milp:cbc"]
        if any(abs(a - b) > 1e-6 * max(1, abs(a)) for a, b in zip(ref, cbc, strict=True)):
            print(f"{name}: HiGHS and CBC disagree {found}", file=sys.stderr)
            return 1
        schedopt.dump(inst, OUT / f"{name}.json")
        golden[f"{name}.json"] = {"status": "optimal", "objectives": list(ref)}
        print(f"{name}: {ref} (cbc {cbc})")
    (OUT / "golden.json").write_text(json.dumps(golden, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
