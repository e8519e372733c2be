"""Does a heuristic hint help CP-SAT's first level? The experiment behind cpsat.py's choice.

    python benchmarks/admission_hint.py            # 3 contested 256-GPU seeds, 8 s each

For each instance it solves level 1 (guaranteed value) of the CP-SAT model twice with a single
worker, once hinted with the slack heuristic's plan and once unhinted, and prints the values
against the heuristic and the bound.
"""

from __future__ import annotations

import argparse
import sys

from common import append_rows, print_table

import schedopt
from schedopt.backends import cpsat as backend
from schedopt.problems.admission import generate_custom
from schedopt.problems.admission.assemble import raw_from_solution
from schedopt.problems.admission.cpsat import AdmissionCpsat
from schedopt.problems.admission.data import VALUE_SCALE, build_data


def level_one(data, hint_solution, seconds: float):
    model = AdmissionCpsat(data)
    if hint_solution is not None:
        model.hint(raw_from_solution(data, hint_solution))
    model.model.maximize(model.levels[0].expr)
    run = backend.run(model.model, backend.make_solver(time_limit_s=seconds, linearization_level=2))
    value = None if run.objective is None else run.objective / VALUE_SCALE
    bound = None if run.bound is None else run.bound / VALUE_SCALE
    return value, bound


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=8.0)
    args = ap.parse_args(argv)
    rows = []
    for seed in range(args.seeds):
        inst = generate_custom(hosts=32, jobs=800, slots=12, seed=seed)
        heuristic = schedopt.solve(inst, "heuristic:slack")
        data = build_data(inst)
        hinted, b1 = level_one(data, heuristic.solution, args.seconds)
        plain, b2 = level_one(data, None, args.seconds)
        rows.append(
            {
                "instance": f"256gpu-800j-s{seed}",
                "heuristic": heuristic.objective,
                "hinted": hinted,
                "unhinted": plain,
                "bound": min(b for b in (b1, b2) if b is not None),
            }
        )
    print_table(
        "CP-SAT level 1, hinted vs unhinted",
        rows,
        ["instance", "heuristic", "hinted", "unhinted", "bound"],
    )
    print(f"appended to {append_rows('admission_hint', rows, argv)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
