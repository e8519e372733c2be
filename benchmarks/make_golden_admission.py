"""Regenerate the golden admission instances and record their proven optimal objectives.

    python benchmarks/make_golden_admission.py

Writes ``instances/admission/<name>.json`` and ``instances/admission/golden.json``. An instance
becomes golden only if CP-SAT, MILP-HiGHS and MILP-CBC all prove every lexicographic level
optimal and agree; otherwise the script stops with the disagreement.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import make_golden

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
    return make_golden(candidates(), OUT, EXACT, time_limit_s=120, rel_tol=1e-6)


if __name__ == "__main__":
    sys.exit(main())
