"""Before and after the model layer (issue 8): the legacy models against the ones written once.

Every exact method runs twice on the same instance in one process, one after the other:
``legacy:<method>`` (the hand-written CP-SAT and PuLP models) and ``<method>`` (schedopt.model).
Cases: admission 1,024 GPUs × 1,000 jobs; fair share 1,024 GPUs/1,000 jobs and 4,096/5,000;
MoE placement 64 GPUs × 32 layers × 64 experts. Columns: build seconds, solve seconds, the
first level's value and gap, status, and for HiGHS the seconds spent handing the model over
(PuLP rebuilt HiGHS's model at every level; highspy keeps one model).

    python benchmarks/model_layer.py --time-limit 10

prints a table; the rows go to ``benchmarks/results/model_layer.jsonl`` (--out), keyed by case,
method and limit, with the machine and versions (schedopt.bench.record): a rerun of the same
command reads back the rows it finds.

Not a ``schedopt bench`` suite: it is a micro-benchmark of the model layer itself. Its columns
come from inside the back-ends (the seconds HiGHS runs spend handing the model over, measured by
wrapping the back-end functions in this process), and its two sides ran in one process one
after the other, which a suite's fresh process per row would not reproduce. The legacy models
were deleted after the comparison; the commit to check out to rerun it is in RESULTS.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import add_out_argument, key, print_table, row_log

import schedopt
from schedopt.backends import milp as pulp_backend
from schedopt.model import emit_highs
from schedopt.problems import admission, fairshare, moe_placement

METHODS = ("cpsat", "milp:highs", "milp:cbc")


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[], Any]

    @property
    def problem(self) -> str:
        return {"moe": "moe_placement"}.get(self.name.split()[0], self.name.split()[0])


CASES = (
    Case(
        "admission 1024gpu-1000j",
        lambda: admission.generate_custom(hosts=128, jobs=1000, slots=12, seed=0),
    ),
    Case(
        "fairshare 1024gpu-1000j",
        lambda: fairshare.generate_custom(gpus=1024, tenants=50, jobs=1000, seed=0),
    ),
    Case(
        "fairshare 4096gpu-5000j",
        lambda: fairshare.generate_custom(gpus=4096, tenants=100, jobs=5000, seed=0),
    ),
    Case(
        "moe 64gpu-32x64",
        lambda: moe_placement.generate_custom(
            shape="olmoe-1b-7b", layers=32, experts=64, hosts=8, seed=0
        ),
    ),
)


class HandoverMeter:
    """Seconds HiGHS runs spend outside HiGHS's clock (hand-over and read-back), per solve."""

    def __init__(self) -> None:
        self.seconds = 0.0
        real_pulp, real_direct = pulp_backend.solve_highs, emit_highs.HighsSession.run

        def pulp_run(*args: Any, **kwargs: Any):
            run = real_pulp(*args, **kwargs)
            self.seconds += float(run.stats.get("handover_s", 0.0))
            return run

        def direct_run(session: Any, *args: Any, **kwargs: Any):
            run = real_direct(session, *args, **kwargs)
            self.seconds += run.handover_s
            return run

        pulp_backend.solve_highs = pulp_run
        emit_highs.HighsSession.run = direct_run  # type: ignore[method-assign]


def row(case: Case, inst: Any, method: str, limit: float, meter: HandoverMeter) -> dict[str, Any]:
    meter.seconds = 0.0
    started = time.perf_counter()
    r = schedopt.solve(inst, method, time_limit_s=limit, seed=0)
    return {
        "instance": case.name,
        "method": method,
        "status": r.status.value,
        "first_level": None if r.objectives is None else r.objectives[0],
        "gap": r.gap,
        "build_s": r.build_s,
        "solve_s": r.solve_s,
        "wall_s": time.perf_counter() - started,
        "highs_handover_s": meter.seconds if method.endswith("highs") else None,
        "time_limit_s": limit,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--time-limit", type=float, default=10.0, help="seconds per solve (10)")
    ap.add_argument("--methods", default=",".join(METHODS), help="comma-separated exact methods")
    ap.add_argument(
        "--cases", default="", help="comma-separated substrings of case names (default: all)"
    )
    add_out_argument(ap, "model_layer")
    args = ap.parse_args(argv)
    meter = HandoverMeter()
    log = row_log("model_layer", argv, args.out)
    rows = []
    for case in CASES:
        if args.cases and not any(w in case.name for w in args.cases.split(",")):
            continue
        built: list[Any] = []

        def instance(case: Case = case, built: list[Any] = built) -> Any:
            if not built:  # built only when a row of the case is not in the file yet
                built.append(case.make())
            return built[0]

        for method in args.methods.split(","):
            legacy = f"legacy:{method}"
            known = schedopt.get_problem(case.problem).methods
            # The legacy models were deleted after the comparison (benchmarks/RESULTS.md names
            # the commit to check out to rerun it); without them only the new ones run.
            names = (legacy, method) if legacy in known else (method,)
            for name in names:
                rows.append(
                    log.row(
                        key(case.name, name, f"{args.time_limit:g}s"),
                        lambda c=case, n=name: row(c, instance(), n, args.time_limit, meter),
                    )
                )
                print(rows[-1], file=sys.stderr, flush=True)
    columns = (
        "instance",
        "method",
        "status",
        "first_level",
        "gap",
        "build_s",
        "solve_s",
        "wall_s",
        "highs_handover_s",
    )
    print_table("legacy models vs schedopt.model", rows, columns)
    print(f"rows in {log.path} ({log.measured} measured, {log.resumed} read back)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
