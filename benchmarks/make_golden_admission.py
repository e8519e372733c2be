"""Regenerate the golden admission instances and record their proven optimal objectives.

    python benchmarks/make_golden_admission.py

Writes ``instances/admission/<name>.json`` and ``instances/admission/golden.json``. An instance
becomes golden only if CP-SAT, MILP-HiGHS and MILP-CBC all prove every lexicographic level
optimal and agree; otherwise the script stops with the disagreement.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import schedopt
from schedopt.core.status import Status
from schedopt.problems.admission import generate, generate_custom

OUT = Path(__file__).resolve().parents[1] / "instances" / "admission"
EXACT = ("cpsat", "milp:highs", "milp:cbc")


def candidates():
    for seed in range(4):
        yield f"small-s{seed}", generate("small", seed)
    for seed in (0, 2):
        yield (
            f"4x8-20j-s{seed}",
            generate_custom(
                hosts=4, jobs=20, slots=8, seed=seed, name=f"admission-4x8-20j-s{seed}"
            ),
        )


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    golden = {}
    for name, inst in candidates():
        found = {}
        for method in EXACT:
            r = schedopt.solve(inst, method, time_limit_s=120)
            if r.status is not Status.OPTIMAL:
                print(f"{name}: {method} ended {r.status.value}; not golden", file=sys.stderr)
                return 1
            found[method] = r.objectives
        values = list(found.values())
        if any(
            abs(a - b) > 1e-6 * max(1, abs(a))
            for v in values
            for a, b in zip(v, values[0], strict=True)
        ):
            print(f"{name}: back-ends disagree {found}", file=sys.stderr)
            return 1
        schedopt.dump(inst, OUT / f"{name}.json")
        golden[f"{name}.json"] = {"status": "optimal", "objectives": list(values[0])}
        print(f"{name}: {values[0]}")
    (OUT / "golden.json").write_text(json.dumps(golden, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
