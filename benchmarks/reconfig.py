"""Reconfiguration benchmark: every method at 256 to 16,384 GPUs with 1-16 fail-stop and
fail-slow GPUs, and an ETTR replay of a month-long job over the InfiniteHBD fault trace.

    python benchmarks/reconfig.py                  # both parts (about 25 minutes on 2 cores)
    python benchmarks/reconfig.py --part scale     # part 1 only
    python benchmarks/reconfig.py --part ettr      # part 2 only (needs ../shared/data)
    python benchmarks/reconfig.py --quick          # 256 and 1,024 GPUs, one failure mix

Part 1, per instance and method: throughput retained (the healthy plan's iteration time over the
new plan's), iteration time, state moved (GB), GPUs held, gap of the first level, build and
solve seconds. Time limit 10 s up to 1,024 GPUs and 60 s above (the issue's targets).

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
Rows are appended as JSON lines to benchmarks/results/reconfig.jsonl.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import append_rows, print_table, run_cases

import schedopt
from schedopt.io.traces import load_infinitehbd_faults
from schedopt.problems.reconfig import ReconfigInstance, ReconfigSolution, generate_custom
from schedopt.problems.reconfig.validate import _Costs, evaluate

TRACE = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "infinitehbd-faults"
    / "fault_trace.json"
)
METHODS = (
    "heuristic:megatron",
    "heuristic:oobleck",
    "heuristic:keep_shrink",
    "milp:highs",
    "cpsat",
    "auto",
)
#: (GPUs, model, global batch, [(fail-stop, fail-slow)])
SHAPES = (
    (256, "llama2-70b", 512, [(1, 0), (4, 4), (16, 16)]),
    (1024, "llama2-70b", 1024, [(1, 0), (4, 4), (16, 16)]),
    (4096, "gpt3-175b", 2048, [(1, 0), (16, 16)]),
    (16384, "gpt3-175b", 8192, [(1, 0), (16, 16)]),
)
SLOW_KINDS = ("GPU P2P Bandwidth Low", "GPU PCI link width low", "GPU Temperature High")
REBUILD_S = 60.0


@dataclass(frozen=True)
class Case:
    gpus: int
    model: str
    batch: int
    stop: int
    slow: int
    method: str


def run_case(case: Case) -> dict:
    inst = generate_custom(case.gpus // 8, 8, case.model, case.batch, case.stop, case.slow, seed=0)
    limit = 10.0 if case.gpus <= 1024 else 60.0
    t0 = time.perf_counter()
    r = schedopt.solve(inst, case.method, time_limit_s=limit)
    wall = time.perf_counter() - t0
    m = r.metrics
    return {
        "instance": f"{case.gpus} GPUs {case.model} f{case.stop}+s{case.slow}",
        "method": case.method,
        "status": r.status.value,
        "retained": m.get("throughput_retained"),
        "iter_s": r.objectives[0] if r.objectives else None,
        "moved_gb": r.objectives[1] if r.objectives else None,
        "gpus_held": r.objectives[2] if r.objectives else None,
        "gap": r.gap,
        "build_s": r.build_s,
        "solve_s": r.solve_s,
        "wall_s": wall,
        "limit_s": limit,
    }


def part_scale(quick: bool, methods: list[str], argv: list[str]) -> None:
    shapes = SHAPES[:2] if quick else SHAPES
    cases = [
        Case(g, model, batch, stop, slow, meth)
        for g, model, batch, mixes in shapes
        for stop, slow in (mixes[1:2] if quick else mixes)
        for meth in methods
    ]
    rows = list(run_cases(run_case, cases, workers=1))
    cols = ["instance", "method", "status", "retained", "iter_s", "moved_gb", "gpus_held", "gap"]
    print_table("reconfig: methods by scale", rows, [*cols, "build_s", "solve_s", "wall_s"])
    append_rows("reconfig", [{"part": "scale", **r} for r in rows], argv)


# --- part 2: ETTR replay ---------------------------------------------------------------------
def _events(
    trace: Path, hosts: list[str], days: float, offset: float
) -> list[tuple[float, str, str, str]]:
    """(day, "start"/"end", host, kind) of the trace's faults on our hosts in the window."""
    faults = load_infinitehbd_faults(trace)
    nodes: list[str] = []
    for f in faults:
        if f.node not in nodes:
            nodes.append(f.node)
    where = dict(zip(nodes, hosts, strict=False))
    out = []
    for f in faults:
        if f.node not in where or not offset <= f.start_day < offset + days:
            continue
        kind = "slow" if f.desc in SLOW_KINDS else "gpu" if f.is_gpu else "host"
        out.append((f.start_day - offset, "start", where[f.node], kind))
        if f.end_day - offset < days:
            out.append((f.end_day - offset, "end", where[f.node], kind))
    return sorted(out)


def replay(
    method: str, base: ReconfigInstance, events: list, days: float, rate: float, best_s: float
) -> dict:
    """``best_s``: the best healthy plan's iteration time (the rate useful training is counted
    at); the job runs its Megatron plan (``base.current_plan``) whenever no fault is active."""
    healthy = ReconfigSolution(pipelines=base.current_plan or ())
    start = best_s / evaluate(base, healthy)[0]
    costs = _Costs(base)
    active: dict[tuple[str, str], int] = {}
    running, retained, clock, useful, lost, decisions = healthy, start, 0.0, 0.0, 0.0, 0
    for day, what, host, kind in events:
        t = day * 86400
        useful += (t - clock) * retained
        clock = t
        key = (host, kind)
        active[key] = active.get(key, 0) + (1 if what == "start" else -1)
        failed: list[str] = []
        slow: list[dict] = []
        for (h, k), n in active.items():
            if n <= 0:
                continue
            gpus = list(base.cluster.gpus_on(h))
            if k == "host":
                failed += gpus
            elif k == "gpu":
                failed.append(gpus[0])
            else:
                slow.append({"gpu": gpus[1], "speed_factor": 0.5})
        failed = sorted(set(failed))
        slow = [s for s in slow if s["gpu"] not in failed]
        if not failed and not slow:
            running, retained = healthy, start
            lost += REBUILD_S
            continue
        doc = base.model_dump(mode="json")
        doc.update(
            failed_gpus=failed,
            slow_gpus=slow,
            current_plan=[p.model_dump() for p in running.pipelines],
            failure_rate_per_hour=rate,
        )
        inst = ReconfigInstance.model_validate(doc)
        t0 = time.perf_counter()
        r = schedopt.solve(inst, method, time_limit_s=10)
        decide = time.perf_counter() - t0
        decisions += 1
        if r.solution is None:  # this method has no plan: fall back to the exact model's
            r = schedopt.solve(inst, "auto", time_limit_s=10)
        running = r.solution
        retained = best_s / r.metrics["iteration_time_s"]
        kept = {p.stages for p in inst.current_plan or ()}
        rebuilt = [p for p in running.pipelines if p.stages not in kept]
        if r.metrics.get("recovery_copy", 0.0) >= 0.5:
            recover = max(
                (16 * costs.P / sum(len(s.gpus) for s in p.stages) / costs.ib for p in rebuilt),
                default=0.0,
            )
        else:
            recover = base.restart_s + base.checkpoint_interval_s / 2
        lost += decide + REBUILD_S + recover
    wall = days * 86400
    useful += (wall - clock) * retained
    return {
        "method": method,
        "events": len(events),
        "decisions": decisions,
        "ettr": (useful - lost) / wall,
        "lost_h": lost / 3600,
        "degraded_h": (wall - useful) / 3600,
    }


def part_ettr(methods: list[str], trace: Path, days: float, offset: float, argv: list[str]) -> None:
    if not trace.exists():
        print(f"no trace at {trace}: ETTR replay skipped (--trace PATH)", file=sys.stderr)
        return
    base = generate_custom(128, 8, "llama2-70b", 1024, 0, 0, seed=0)
    events = _events(trace, list(base.cluster.hosts()), days, offset)
    # the trace's fault rate scaled to our 128 of its 400 servers: 584 faults in 349 days
    rate = 584 / 400 / (349 * 24) * 128
    free = base.model_copy(update={"current_plan": None})
    best = schedopt.solve(free, "auto", time_limit_s=60)
    megatron_s = evaluate(base, ReconfigSolution(pipelines=base.current_plan or ()))[0]
    best_s = min(best.metrics["iteration_time_s"], megatron_s)
    print(
        f"healthy: Megatron plan {megatron_s:.4g} s, best found {best_s:.4g} s "
        f"({best.status.value}, gap {best.gap})"
    )
    rows = [replay(m, base, events, days, rate, best_s) for m in methods]
    cols = ["method", "events", "decisions", "ettr", "lost_h", "degraded_h"]
    print_table(f"reconfig: ETTR over {days:g} days of the InfiniteHBD trace", rows, cols)
    append_rows("reconfig", [{"part": "ettr", "days": days, **r} for r in rows], argv)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--part", choices=["scale", "ettr", "both"], default="both")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--days", type=float, default=30.0)
    ap.add_argument("--trace", type=Path, default=TRACE, help="InfiniteHBD fault_trace.json")
    ap.add_argument("--offset", type=float, default=0.0, help="first trace day of the window")
    args = ap.parse_args()
    methods = args.methods.split(",")
    argv = sys.argv[1:]
    if args.part in ("scale", "both"):
        part_scale(args.quick, methods, argv)
    if args.part in ("ettr", "both"):
        part_ettr([m for m in methods if m != "cpsat"], args.trace, args.days, args.offset, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
