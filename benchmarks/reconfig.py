"""Reconfiguration benchmark: every method at 256 to 16,384 GPUs with 1-16 fail-stop and
fail-slow GPUs, and an ETTR replay of a month-long job over the InfiniteHBD fault trace.

    python benchmarks/reconfig.py                  # both parts (about 25 minutes on 2 cores)
    python benchmarks/reconfig.py --part scale     # part 1 only
    python benchmarks/reconfig.py --part ettr      # part 2 only (needs ../shared/data)
    python benchmarks/reconfig.py --quick          # 256 and 1,024 GPUs, one failure mix

Part 1 is ``schedopt bench reconfig-scaling reconfig-scaling-60s`` (one process per row, rows
in benchmarks/results/bench/<suite>.jsonl): per instance and method the levels (iteration time,
state moved, GPUs held), the bound and gap, the throughput retained (the healthy plan's
iteration time over the new plan's, a metric), build and solve seconds. Time limit 10 s up to
1,024 GPUs and 60 s above (the issue's targets).

Part 2 (ETTR): Llama-2 70B on 128 DGX H100 hosts (1,024 GPUs), 30 days of the InfiniteHBD trace
mapped onto the hosts (trace servers in order of first fault, days 0-30 shifted by --offset).
At every fault start or end each method re-plans (current plan = the one running; with no fault
left, the healthy plan comes back). A GPU-class fault fails one GPU (fail-stop) - except the
degradation kinds (P2P bandwidth low, PCI link width low, temperature high), which make it slow
(κ = 0.5); any other class takes the whole host down (fail-stop of its 8 GPUs). Each
reconfiguration costs the decision's wall time, a fixed 60 s of communicator rebuild, and the
recovery: copying the rebuilt pipelines' state from surviving replicas over IB, or when no copy
survives, restart (600 s) plus half a checkpoint interval (30 min) of lost work. ETTR = useful
training time / wall time, where a second of training counts as the best healthy plan's
iteration time over the running plan's (the best healthy plan: auto, 60 s, on the healthy
cluster; the job itself runs its Megatron plan while no fault is active), minus those costs.
Rows go to benchmarks/results/reconfig.jsonl (--out), one per method keyed by days, offset and
method, with the machine and versions (schedopt.bench.record); a rerun replays only the methods
it does not find.

Why part 2 is not a suite: a replay is a sequence of decisions, each instance made from the
plan the previous decision left running and the faults open at that moment; ETTR is the
replay's figure, not one solve's. Its single fault windows are suites (``reconfig-trace``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import add_out_argument, bench, key, print_table, row_log

import schedopt
from schedopt.bench.suites.reconfig import EVERY_METHOD
from schedopt.io.traces import load_infinitehbd_faults
from schedopt.problems.reconfig import ReconfigSolution, generate_custom
from schedopt.problems.reconfig.policy import fault_events, replay_ettr
from schedopt.problems.reconfig.validate import evaluate

TRACE = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "infinitehbd-faults"
    / "fault_trace.json"
)
METHODS = EVERY_METHOD  # the suites' methods


def part_scale(quick: bool, methods: list[str]) -> int:
    """Part 1: the suites reconfig-scaling (256 and 1,024 GPUs, 10 s) and
    reconfig-scaling-60s (4,096 and 16,384 GPUs, 60 s) of ``schedopt bench``."""
    args = ["--methods", ",".join(methods)]
    if quick:
        return bench("reconfig-scaling", [*args, "--recipes", "256gpu-4+4-s0,1024gpu-4+4-s0"])
    return max(bench(s, args) for s in ("reconfig-scaling", "reconfig-scaling-60s"))


# --- part 2: ETTR replay (schedopt.problems.reconfig.policy) ---------------------------------
def part_ettr(
    methods: list[str], trace: Path, days: float, offset: float, argv: list[str], out: Path
) -> None:
    if not trace.exists():
        print(f"no trace at {trace}: ETTR replay skipped (--trace PATH)", file=sys.stderr)
        return
    log = row_log("reconfig", argv, out)
    keys = {m: key("ettr", f"{days:g}d", f"offset{offset:g}", m) for m in methods}
    setup: list[tuple] = []

    def replay(method: str) -> dict:
        if not setup:  # the healthy plans and the events, only when a row is missing
            base = generate_custom(128, 8, "llama2-70b", 1024, 0, 0, seed=0)
            faults = load_infinitehbd_faults(trace)
            events = fault_events(faults, list(base.cluster.hosts()), days, offset)
            free = base.model_copy(update={"current_plan": None})
            best = schedopt.solve(free, "auto", time_limit_s=60)
            megatron_s = evaluate(base, ReconfigSolution(pipelines=base.current_plan or ()))[0]
            best_s = min(best.metrics["iteration_time_s"], megatron_s)
            print(
                f"healthy: Megatron plan {megatron_s:.4g} s, best found {best_s:.4g} s "
                f"({best.status.value}, gap {best.gap})"
            )
            setup.append((base, events, best_s))
        base, events, best_s = setup[0]
        return {"part": "ettr", "days": days, **replay_ettr(method, base, events, days, best_s)}

    rows = [log.row(keys[m], lambda m=m: replay(m)) for m in methods]
    cols = ["method", "events", "decisions", "ettr", "lost_h", "degraded_h"]
    print_table(f"reconfig: ETTR over {days:g} days of the InfiniteHBD trace", rows, cols)
    print(f"rows in {log.path} ({log.measured} measured, {log.resumed} read back)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--part", choices=["scale", "ettr", "both"], default="both")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--days", type=float, default=30.0)
    ap.add_argument("--trace", type=Path, default=TRACE, help="InfiniteHBD fault_trace.json")
    ap.add_argument("--offset", type=float, default=0.0, help="first trace day of the window")
    add_out_argument(ap, "reconfig")
    args = ap.parse_args(argv)
    methods = args.methods.split(",")
    argv = list(sys.argv[1:] if argv is None else argv)
    code = 0
    if args.part in ("scale", "both"):
        code = part_scale(args.quick, methods)
    if args.part in ("ettr", "both"):
        ettr_methods = [m for m in methods if m != "cpsat"]
        part_ettr(ettr_methods, args.trace, args.days, args.offset, argv, args.out)
    return code


if __name__ == "__main__":
    sys.exit(main())
