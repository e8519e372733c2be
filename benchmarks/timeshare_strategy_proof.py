"""Gavel's strategy-proof policy against schedopt's drop-in, alternating in one process.

Requests as Gavel's policy-runtime benchmark makes them (``gavel_inputs.make_request``,
max-min perf rounds); Gavel's ``MaxMinFairnessStrategyProofPolicyWithPerf`` (cvxpy + ECOS,
imported from ``--gavel-dir``) and ``schedopt.integrations.gavel.MaxMinFairnessStrategyProofPerf``
(a fresh object per run) each allocate every round ``--repeat`` times, one after the other.
Reported: median seconds of each and their ratio; Gavel's objective (the geometric mean of
s_j ρ_j / (π_j p_j) at the Nash welfare allocation, recomputed from its
``recurse_deeper=False`` rates) against schedopt's; the largest relative difference of the
discounted rates and of the discounts; schedopt's status and gap.

    nice -n 5 python benchmarks/timeshare_strategy_proof.py --gavel-dir /work/gavel -n 8 16 32 64

``--prune-spread S [S ...]`` (without ``--gavel-dir``) instead times schedopt's mechanism as it
is ("keep": every tangent kept across the |J| + 1 programs) against the same mechanism with the
tangents pruned after the whole program (formulations/timeshare.md, "Pruning tangents": those
not binding at its optimal basis and farther than S in log from its u, each job's tangent at
its largest u kept), the variants alternating ``--repeat`` times in one process:

    nice -n 5 python benchmarks/timeshare_strategy_proof.py -n 256 --prune-spread 0.1 0.03

Prints a table and appends JSON lines to ``benchmarks/results/timeshare_strategy_proof.jsonl``.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

import highspy
import numpy as np
from common import append_rows, print_table
from gavel_inputs import DEFAULT_THROUGHPUTS, load_throughputs, make_request

from schedopt.core.status import Status
from schedopt.integrations.gavel import MaxMinFairnessStrategyProofPerf
from schedopt.problems.timeshare.data import TimeshareData, build_data
from schedopt.problems.timeshare.instance import TimeshareInstance
from schedopt.problems.timeshare.nash import NashProgram


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("-n", nargs="+", type=int, default=[8, 16, 32])
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gavel-dir", help="a checkout of stanford-futuredata/gavel")
    ap.add_argument("--throughputs", default=DEFAULT_THROUGHPUTS)
    ap.add_argument(
        "--prune-spread",
        nargs="+",
        type=float,
        metavar="S",
        help="compare schedopt's mechanism with its tangents pruned at these spreads (no Gavel)",
    )
    args = ap.parse_args(argv)
    if args.prune_spread is not None:
        if args.gavel_dir is not None:
            ap.error("--prune-spread times schedopt alone: give no --gavel-dir")
        return pruning(args, argv)
    if args.gavel_dir is None:
        ap.error("--gavel-dir is required (or --prune-spread)")
    sys.path.insert(0, f"{args.gavel_dir}/scheduler")
    from policies.max_min_fairness_strategy_proof import (  # type: ignore[import-not-found]
        MaxMinFairnessStrategyProofPolicyWithPerf as Gavel,
    )

    oracle = load_throughputs(args.throughputs)
    rows = []
    for n in args.n:
        req = make_request(oracle, "max_min_fairness_perf", n, args.seed)
        thr = {int(j["id"]): dict(j["throughput"]) for j in req["jobs"]}
        sf = {int(j["id"]): int(j["scale_factor"]) for j in req["jobs"]}
        pw = {int(j["id"]): float(j["priority_weight"]) for j in req["jobs"]}
        spec = dict(req["worker_types"])
        ours_s, theirs_s = [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            policy = MaxMinFairnessStrategyProofPerf()
            s_alloc, s_d = policy.get_allocation(thr, sf, pw, spec)
            t1 = time.perf_counter()
            g_alloc, g_d = Gavel("ECOS").get_allocation(thr, sf, pw, spec)
            t2 = time.perf_counter()
            ours_s.append(t1 - t0)
            theirs_s.append(t2 - t1)
        g_rho = Gavel("ECOS").get_allocation(thr, sf, pw, spec, recurse_deeper=False)
        total = sum(spec.values())
        p = {k: sum(thr[k][w] * c / total for w, c in spec.items()) for k in thr}
        geo = math.exp(statistics.fmean(math.log(sf[k] * g_rho[k] / (pw[k] * p[k])) for k in thr))

        def rates(a, thr=thr):
            return np.array([sum(x * thr[k][w] for w, x in a[k].items()) for k in sorted(thr)])

        result = policy.last_result
        rows.append(
            {
                "jobs": n,
                "schedopt_s": statistics.median(ours_s),
                "gavel_s": statistics.median(theirs_s),
                "ratio": statistics.median(ours_s) / statistics.median(theirs_s),
                "schedopt_objective": result.objective,
                "gavel_objective": geo,
                "objective_rel_diff": (result.objective - geo) / geo,
                "rates_rel_diff": float(np.max(np.abs(rates(s_alloc) / rates(g_alloc) - 1))),
                "discounts_rel_diff": float(np.max(np.abs(s_d / g_d - 1))),
                "status": result.status.value,
                "gap": result.stats["gap"],
                "lps": result.stats["nash_lps"],
            }
        )
        print(rows[-1], flush=True)
    print_table(
        "Gavel's strategy-proof policy: schedopt vs Gavel (cvxpy + ECOS), median seconds",
        rows,
        list(rows[0]) if rows else [],
    )
    append_rows("timeshare_strategy_proof", rows, argv)
    return 0


def _round(oracle, n: int, seed: int) -> TimeshareData:
    req = make_request(oracle, "max_min_fairness_perf", n, seed)
    inst = TimeshareInstance.model_validate(
        {
            "workers": dict(req["worker_types"]),
            "jobs": [
                {
                    "id": str(j["id"]),
                    "throughput": dict(j["throughput"]),
                    "scale_factor": int(j["scale_factor"]),
                    "priority_weight": float(j["priority_weight"]),
                }
                for j in req["jobs"]
            ],
        }
    )
    return build_data(inst, pairs=False)


def prune(program: NashProgram, near: np.ndarray, spread: float) -> int:
    """Delete the tangents whose row is basic (not binding) at the current basis and whose
    point v is farther than ``spread`` from ``near`` (|log v − log near_j| > spread), but each
    job's tangent at its largest point (at its largest u: it bounds z_j). Still a relaxation:
    formulations/timeshare.md, "Pruning tangents". Returns how many were deleted."""
    h = program.h
    status = h.getBasis().row_status
    first = program.n + len(program.rows.capacity)  # C1: a row per job, C2: a row per type
    job, at = np.asarray(program.cut_job), np.asarray(program.cut_at)
    top = np.full(program.n, -1)
    for r in np.lexsort((at, job)).tolist():  # by job, then point: the last one per job wins
        top[job[r]] = r
    far = np.abs(np.log(at / near[job])) > spread
    far[top[top >= 0]] = False
    basic = highspy.HighsBasisStatus.kBasic
    drop = [r for r in np.flatnonzero(far).tolist() if status[first + r] == basic]
    if drop:
        rows = np.asarray(drop, dtype=np.int32) + first
        if h.deleteRows(len(rows), rows) == highspy.HighsStatus.kError:
            raise RuntimeError("HiGHS refused to delete tangents")
        keep = np.ones(len(job), dtype=bool)
        keep[drop] = False
        program.cut_job = job[keep].tolist()
        program.cut_at = at[keep].tolist()
        program.tangents -= len(drop)
    return len(drop)


def mechanism(data: TimeshareData, spread: float | None) -> tuple[np.ndarray, float, int, int, str]:
    """The programs of nash.strategy_proof (the whole one, then one without each job, in one
    model), with the tangents pruned after the whole program when ``spread`` is given: the
    discounted rates' logs (log d_i u_i = NW(x) − NW_{−i}, the formulation), the geometric
    mean, the LPs, the model's rows at the end, and "optimal" unless some program stopped
    short of its gap (at MAX_LPS, or without a tangent to add)."""
    program = NashProgram(data)
    forever = lambda: 3600.0  # noqa: E731
    full = program.solve(forever)
    assert full.status is Status.OPTIMAL and full.utility is not None
    if spread is not None:
        prune(program, full.utility, spread)
    lps, rates, status = full.lps, np.empty(data.num_jobs), Status.OPTIMAL
    for i in range(data.num_jobs):
        alone = program.solve(forever, exclude=i)
        if alone.status is not Status.OPTIMAL:
            status = alone.status
        lps += alone.lps
        rates[i] = full.value - alone.value
    return rates, full.geo_mean, lps, program.h.getNumRow(), status.value


def pruning(args: argparse.Namespace, argv: list[str] | None) -> int:
    oracle = load_throughputs(args.throughputs)
    rows = []
    for n in args.n:
        data = _round(oracle, n, args.seed)
        variants = {"keep": lambda d: mechanism(d, None)}
        for s in args.prune_spread:
            variants[f"prune {s:g}"] = lambda d, s=s: mechanism(d, s)
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        last: dict[str, tuple[np.ndarray, float, int, int, str]] = {}
        for _ in range(args.repeat):
            for name, run in variants.items():
                t0 = time.perf_counter()
                last[name] = run(data)
                seconds[name].append(time.perf_counter() - t0)
        base_rates, base_geo = last["keep"][0], last["keep"][1]
        for name in variants:
            rates, geo, lps, end_rows, status = last[name]
            rows.append(
                {
                    "jobs": n,
                    "variant": name,
                    "status": status,
                    "median_s": statistics.median(seconds[name]),
                    "runs_s": [round(x, 2) for x in seconds[name]],
                    "lps": lps,
                    "rows_at_end": end_rows,
                    "geo_mean_rel_diff": geo / base_geo - 1.0,
                    "rates_log_diff": float(np.max(np.abs(rates - base_rates))),
                    "load": os.getloadavg()[0],
                }
            )
            print(rows[-1], flush=True)
    print_table(
        "Strategy proof: tangents kept vs pruned after the whole program, median seconds",
        rows,
        list(rows[0]) if rows else [],
    )
    append_rows("timeshare_strategy_proof", rows, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
