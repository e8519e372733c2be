"""Does a heuristic hint help CP-SAT's first level? The experiment behind the choice in
admission's exact.py (``AdmissionHooks.hint_first_level``).

    python benchmarks/admission_hint.py            # 3 contested 256-GPU seeds, 8 s each

For each instance it solves level 1 (guaranteed value) of the CP-SAT model twice with a single
worker, once hinted with the slack heuristic's plan and once unhinted, and prints the values
against the heuristic and the bound. Rows go to benchmarks/results/admission_hint.jsonl (--out),
one per instance and budget with the machine and versions (schedopt.bench.record); a rerun
reads back the rows it finds.

Not a ``schedopt bench`` suite: the two columns are one back-end session with and without a
solver option (a hint), below the level of a method, so no ``schedopt.solve`` method names
them; the instances are the suite ``admission-paper``'s contested 256-GPU shape.
"""

from __future__ import annotations

import argparse
import sys

from common import add_out_argument, key, print_table, row_log

import schedopt
from schedopt.core.options import SolveOptions
from schedopt.model.emit_cpsat import CpsatSession
from schedopt.problems.admission import generate_custom
from schedopt.problems.admission.assemble import raw_from_solution
from schedopt.problems.admission.codec import encode
from schedopt.problems.admission.data import build_data
from schedopt.problems.admission.exact import AdmissionHooks
from schedopt.problems.admission.model import build_model


def level_one(data, hint_solution, seconds: float):
    am = build_model(data)
    session = CpsatSession(am.model, AdmissionHooks.cpsat_linearization_level)
    session.set_level(am.model.levels[0])
    if hint_solution is not None:
        session.set_hint(encode(am, raw_from_solution(data, hint_solution)))
    run = session.run(seconds, SolveOptions(time_limit_s=seconds))
    return run.objective, run.bound


def measure(seed: int, args: argparse.Namespace) -> dict:
    inst = generate_custom(hosts=32, jobs=800, slots=12, seed=seed)
    heuristic = schedopt.solve(inst, "heuristic:slack")
    data = build_data(inst)
    hinted, b1 = level_one(data, heuristic.solution, args.seconds)
    plain, b2 = level_one(data, None, args.seconds)
    return {
        "instance": f"256gpu-800j-s{seed}",
        "heuristic": heuristic.objective,
        "hinted": hinted,
        "unhinted": plain,
        "bound": min((b for b in (b1, b2) if b is not None), default=None),
        "seconds": args.seconds,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=8.0)
    add_out_argument(ap, "admission_hint")
    args = ap.parse_args(argv)
    log = row_log("admission_hint", argv, args.out)
    rows = [
        log.row(key(f"256gpu-800j-s{seed}", f"{args.seconds:g}s"), lambda s=seed: measure(s, args))
        for seed in range(args.seeds)
    ]
    print_table(
        "CP-SAT level 1, hinted vs unhinted",
        rows,
        ["instance", "heuristic", "hinted", "unhinted", "bound"],
    )
    print(f"rows in {log.path} ({log.measured} measured, {log.resumed} read back)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
