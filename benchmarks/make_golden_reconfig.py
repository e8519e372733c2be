"""Regenerate the golden reconfiguration instances and record their proven optimal objectives.

    python benchmarks/make_golden_reconfig.py

Writes ``instances/reconfig/<name>.json`` and ``instances/reconfig/golden.json``. An instance
becomes golden only if CP-SAT, MILP-HiGHS and MILP-CBC all prove every lexicographic level
optimal (over the template plan space, formulations/reconfig.md) and agree (relative 1e-9; every
level is integer-valued in the model), or all three report INFEASIBLE; otherwise the script
stops with the disagreement. Every level is recomputed by the independent validator.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import make_golden

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
    return make_golden(
        candidates(),
        OUT,
        ("cpsat", "milp:highs", "milp:cbc"),
        time_limit_s=120,
        rel_tol=1e-9,
        infeasible_ok=True,
    )


if __name__ == "__main__":
    sys.exit(main())
