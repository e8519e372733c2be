"""Regenerate the golden reconfiguration instances and record their proven optimal objectives.

    python benchmarks/make_golden_reconfig.py

Writes ``instances/reconfig/<name>.json`` and ``instances/reconfig/golden.json``. An instance
becomes golden only if CP-SAT, MILP-HiGHS and MILP-CBC all prove every lexicographic level
optimal (over the template plan space, formulations/reconfig.md) and agree (relative 1e-9; every
level is integer-valued in the model), or all three report INFEASIBLE; otherwise the script
stops with the disagreement. Every level is recomputed by the independent validator.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import schedopt
from schedopt.core.status import Status
from schedopt.problems.reconfig import ReconfigInstance, generate, generate_custom

OUT = Path(__file__).resolve().parents[1] / "instances" / "reconfig"


def _renamed(inst: ReconfigInstance, name: str, **update: object) -> ReconfigInstance:
    return ReconfigInstance.model_validate({**inst.model_dump(mode="json"), "name": name, **update})


def candidates():
    for seed in (0, 1, 2):
        yield f"tiny-s{seed}", generate("tiny", seed)
    yield "toy-3x4-f2-s2", generate_custom(3, 4, "toy", 12, 2, 2, seed=5, memory_gib=8.0)
    yield "toy-2x8-f1-s1", generate_custom(2, 8, "toy", 16, 1, 1, seed=7, memory_gib=6.0)
    rated = generate_custom(2, 4, "toy", 8, 1, 1, seed=3, memory_gib=8.0, failure_rate_per_hour=2.0)
    yield "toy-2x4-rate", rated
    tight = generate("tiny", 0)
    yield "tiny-no-memory", _renamed(tight, "tiny-no-memory", memory_reserve_gib=7.99)


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    golden = {}
    for name, inst in candidates():
        found = {}
        for method in ("cpsat", "milp:highs", "milp:cbc"):
            r = schedopt.solve(inst, method, time_limit_s=120)
            if r.status not in (Status.OPTIMAL, Status.INFEASIBLE):
                print(f"{name}: {method} ended {r.status.value}; not golden", file=sys.stderr)
                return 1
            found[method] = (r.status, r.objectives)
        statuses = {s for s, _ in found.values()}
        if len(statuses) != 1:
            print(f"{name}: statuses differ {found}", file=sys.stderr)
            return 1
        status = statuses.pop()
        entry: dict[str, object] = {"status": status.value}
        if status is Status.OPTIMAL:
            ref = found["cpsat"][1]
            for method, (_, obj) in found.items():
                if any(abs(a - b) > 1e-9 * max(1.0, abs(a)) for a, b in zip(ref, obj, strict=True)):
                    print(f"{name}: {method} {obj} against cpsat {ref}", file=sys.stderr)
                    return 1
            entry["objectives"] = list(ref)
        (OUT / f"{name}.json").write_text(schedopt.io.to_json(inst) + "\n")
        golden[f"{name}.json"] = entry
        print(name, entry)
    (OUT / "golden.json").write_text(json.dumps(golden, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
