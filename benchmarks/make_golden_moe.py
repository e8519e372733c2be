"""Regenerate the golden MoE placement instances and record their proven optimal objectives.

    python benchmarks/make_golden_moe.py

Writes ``instances/moe_placement/<name>.json`` and ``instances/moe_placement/golden.json``. An
instance becomes golden only if MILP-HiGHS and MILP-CBC both prove every lexicographic level
optimal and agree (relative 1e-6), and CP-SAT proves its 1/1000-share grid model optimal at
every level with a first level within its documented resolution δ of the MILP optimum (its
lower levels are optimal *given its own grid optimum* of the levels above, so they may differ
from the MILP's); otherwise the script stops with the disagreement.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import schedopt
from schedopt.core.status import Status
from schedopt.problems.moe_placement import MoePlacementInstance, generate, generate_custom
from schedopt.problems.moe_placement.data import build_data

OUT = Path(__file__).resolve().parents[1] / "instances" / "moe_placement"


def _weighted(inst: MoePlacementInstance) -> MoePlacementInstance:
    doc = inst.model_dump(mode="json")
    doc["name"] = inst.name + "-weighted"
    doc["objective"] = {"mode": "weighted", "weights": {"load": 1.0, "comm": 1.0, "gpus": 50.0}}
    return MoePlacementInstance.model_validate(doc)


def candidates():
    for seed in (0, 1, 3):  # tiny-s2 takes CP-SAT 25 s to prove: too slow for the test suite
        yield f"tiny-s{seed}", generate("tiny", seed)
    yield (
        "2x2-attn-host0-current",
        generate_custom(
            layers=2,
            experts=4,
            hosts=2,
            gpus_per_host=2,
            attention="host0",
            with_current=True,
            seed=3,
            name="moe-2x2-attn-host0-current",
        ),
    )
    yield (
        "2x2-within-host",
        generate_custom(
            layers=2,
            experts=3,
            hosts=2,
            gpus_per_host=2,
            layer_within="host",
            attention="host0",
            seed=4,
            name="moe-2x2-within-host",
        ),
    )
    yield "tiny-s0-weighted", _weighted(generate("tiny", 0))


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    golden = {}
    for name, inst in candidates():
        found = {}
        for method in ("milp:highs", "milp:cbc", "cpsat"):
            r = schedopt.solve(inst, method, time_limit_s=120)
            grid_ok = method == "cpsat" and r.stats.get("grid_optimal") == "yes"
            if r.status is not Status.OPTIMAL and not grid_ok:
                print(f"{name}: {method} ended {r.status.value}; not golden", file=sys.stderr)
                return 1
            found[method] = r.objectives
        ref, cbc, cp = found["milp:highs"], found["milp:cbc"], found["cpsat"]
        if any(abs(a - b) > 1e-6 * max(1.0, abs(a)) for a, b in zip(ref, cbc, strict=True)):
            print(f"{name}: HiGHS and CBC disagree {ref} {cbc}", file=sys.stderr)
            return 1
        delta = build_data(inst).cpsat_tolerance_us
        weighted = inst.objective.mode == "weighted"
        eps = 1e-6 + 1e-8 * abs(ref[0])  # solver tolerances (HiGHS, CBC: 1e-6 feasibility)
        if not weighted and not (ref[0] - eps <= cp[0] <= ref[0] + delta + eps):
            print(f"{name}: CP-SAT {cp[0]} not within δ={delta} of {ref[0]}", file=sys.stderr)
            return 1
        schedopt.dump(inst, OUT / f"{name}.json")
        golden[f"{name}.json"] = {
            "status": "optimal",
            "objectives": list(ref),
            "cpsat_objectives": list(cp),
            "cpsat_tolerance_us": delta,
        }
        print(f"{name}: {ref}  cpsat {cp}  δ {delta:.4g}")
    (OUT / "golden.json").write_text(json.dumps(golden, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
