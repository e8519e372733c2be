"""Regenerate the golden fair-share instances and record their proven optimal objectives.

    python benchmarks/make_golden_fairshare.py

Writes ``instances/fairshare/<name>.json`` and ``instances/fairshare/golden.json``. The
objectives are the MILP's (real coefficients, HiGHS). An instance becomes golden only if
MILP-HiGHS and MILP-CBC prove every level optimal and agree, and CP-SAT proves every level and
agrees on L1 within its resolution (1/SHARE_SCALE); otherwise the script stops.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import schedopt
from schedopt.core.status import Status
from schedopt.problems.fairshare import generate, generate_custom
from schedopt.problems.fairshare.data import SHARE_SCALE

OUT = Path(__file__).resolve().parents[1] / "instances" / "fairshare"
EXACT = ("milp:highs", "milp:cbc", "cpsat")


def candidates():
    for seed in range(3):
        yield f"small-s{seed}", generate("small", seed)
    yield "32gpu-20j-s0", generate_custom(gpus=32, tenants=5, jobs=20, seed=0, name="fs-32-s0")
    yield (
        "32gpu-20j-onehost-s1",
        generate_custom(
            gpus=32, tenants=5, jobs=20, seed=1, allow_multi_host=False, name="fs-32-onehost-s1"
        ),
    )
    yield (
        "32gpu-24j-hard-cap-s2",
        generate_custom(
            gpus=32,
            tenants=4,
            jobs=24,
            seed=2,
            guarantees_hard=True,
            max_preemptions=3,
            name="fs-32-hard-cap-s2",
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
        ref, cbc, cp = found["milp:highs"], found["milp:cbc"], found["cpsat"]
        if any(abs(a - b) > 1e-6 * max(1, abs(a)) for a, b in zip(ref, cbc, strict=True)):
            print(f"{name}: HiGHS and CBC disagree {found}", file=sys.stderr)
            return 1
        if abs(ref[0] - cp[0]) > 1.01 / SHARE_SCALE:
            print(f"{name}: CP-SAT's L1 is outside its resolution {found}", file=sys.stderr)
            return 1
        schedopt.dump(inst, OUT / f"{name}.json")
        golden[f"{name}.json"] = {"status": "optimal", "objectives": list(ref)}
        print(f"{name}: {ref} (cpsat {cp})")
    (OUT / "golden.json").write_text(json.dumps(golden, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
