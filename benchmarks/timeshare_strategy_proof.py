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

Prints a table and appends JSON lines to ``benchmarks/results/timeshare_strategy_proof.jsonl``.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

import numpy as np
from common import append_rows, print_table
from gavel_inputs import DEFAULT_THROUGHPUTS, load_throughputs, make_request

from schedopt.integrations.gavel import MaxMinFairnessStrategyProofPerf


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("-n", nargs="+", type=int, default=[8, 16, 32])
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gavel-dir", required=True, help="a checkout of stanford-futuredata/gavel")
    ap.add_argument("--throughputs", default=DEFAULT_THROUGHPUTS)
    args = ap.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main())
