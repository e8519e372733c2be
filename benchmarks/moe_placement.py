"""MoE expert-placement benchmark: every method on real model shapes from 8 to 256 GPUs, and the
scenario model against the point-estimate model on held-out popularity.

    python benchmarks/moe_placement.py                # the full suite (about 15 minutes)
    python benchmarks/moe_placement.py --quick        # 8, 16 and 64 GPUs; short scenario part
    python benchmarks/moe_placement.py --methods auto,heuristic:eplb --time-limit 5

Part 1 (``--part methods``) is ``schedopt bench moe_placement-scaling`` (one process per row,
rows in benchmarks/results/bench/moe_placement-scaling.jsonl): per instance and method the first
objective (Σ over layers of the most loaded GPU's µs), the best bound and gap, and the
validator's metrics (imbalance: Σ_l max / Σ_l mean GPU load, cross-host bytes, GPUs used), model
build, solve and wall seconds. An exact model too large to build is an ``error`` row.

Part 2: a placement from the point estimate (posterior mean; milp:highs, else local search)
against milp:scenario (16 posterior scenarios, expected layer time) on popularity they did not
see: with the OLMoE routing counts (shared/data/olmoe-routing) both are fitted on the arxiv,
book, c4 and github domains and evaluated on wikipedia and tulu (real popularity shift), with
the raw counts and with a tempered posterior (effective_tokens = 2000 per layer);
without the data, on a synthetic noisy instance and posterior draws. Its rows go to
benchmarks/results/moe_placement.jsonl (--out; with part 1's of earlier runs), one group per
data source and limit, with the machine and versions (schedopt.bench.record); a rerun reads
them back.

Why part 2 is not a suite: its figure is each placement's layer time on popularity the solve
did not see (other domains' routing counts), computed after the solve from data that is not
part of the instance; a suite's row holds only what the solve and validator return.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import add_out_argument, bench, key, print_table, row_log

import schedopt
from schedopt.bench.suites.moe_placement import SHAPES
from schedopt.problems.moe_placement import MoePlacementInstance, from_counts, generate_custom
from schedopt.problems.moe_placement.validate import layer_time
from schedopt.topology import Cluster

OLMOE = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "olmoe-routing" / "expert_counts.csv"
)

#: The suite's recipes --quick runs (8 to 64 GPUs, seed 0).
QUICK = ",".join(
    f"{shape}-{layers}x{experts}-{8 * hosts}gpu-s0" for shape, layers, experts, hosts in SHAPES[:4]
)


def _olmoe_split():
    from schedopt.io.traces.routing_counts import load_olmoe_counts

    counts = load_olmoe_counts(OLMOE).select(model="olmoe", variant="expert_counts")
    train = counts.select(domain={"arxiv", "book", "c4", "github"}).matrix()
    held = {d: counts.select(domain=d).matrix() for d in ("wikipedia", "tulu")}
    return train, held


def scenario_rows(time_limit_s: float, quick: bool) -> list[dict]:
    rows = []
    cases = []
    if OLMOE.exists():
        train, held = _olmoe_split()
        cluster = Cluster.dgx(nodes=1, gpus_per_node=8)
        base = from_counts(train, shape="olmoe-1b-7b", cluster=cluster, name="olmoe-3x64-train")
        tests = {}
        for domain, m in held.items():
            pops = []
            for li, row in enumerate(m):
                t = base.layers[li].tokens_per_batch
                pops.append(tuple(t * c / sum(row) for c in row))
            tests[domain] = pops
        for eff in (None, 2000.0):  # raw counts (10M tokens), and a tempered posterior
            doc = base.model_dump(mode="json")
            doc["effective_tokens"] = eff
            label = "olmoe fit arxiv/book/c4/github" + ("" if eff is None else f", eff {eff:g}")
            cases.append((MoePlacementInstance.model_validate(doc), label, tests))
    else:
        inst = generate_custom(
            shape="olmoe-1b-7b",
            layers=2,
            experts=16,
            hosts=1,
            gpus_per_host=8,
            observed_tokens=400,
            skew=1.2,
            seed=0,
        )
        cases.append((inst, "synthetic (400 observed tokens)", {}))
    for inst, source, tests in cases:
        for method, params in (
            ("milp:highs", {}),
            ("heuristic:local-search", {}),
            ("milp:scenario", {"scenarios": 16}),
        ):
            r = schedopt.solve(inst, method, time_limit_s=time_limit_s, params=params, seed=0)
            row = {
                "instance": inst.name,
                "data": source,
                "method": method,
                "status": r.status.value,
                "point_us": r.metrics["point_max_load"],
                "heldout_mean_us": r.metrics.get("heldout_mean_max_load"),
                "heldout_p95_us": r.metrics.get("heldout_p95_max_load"),
                "wall_s": r.wall_s,
            }
            for domain, pops in tests.items():
                row[f"{domain}_us"] = layer_time(inst, r.solution, pops)
            rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="8 to 64 GPUs, one seed")
    ap.add_argument("--methods", default=None, help="comma-separated methods (the suite's)")
    ap.add_argument("--time-limit", type=float, default=10.0, help="seconds per solve (10)")
    ap.add_argument("--part", choices=("methods", "scenario", "both"), default="both")
    add_out_argument(ap, "moe_placement")
    args = ap.parse_args(argv)
    code = 0
    if args.part in ("methods", "both"):
        extra = ["--time-limits", f"{args.time_limit:g}"]
        extra += ["--methods", args.methods] if args.methods else []
        code = bench(
            "moe_placement-scaling", [*extra, *(["--recipes", QUICK] if args.quick else [])]
        )
    if args.part in ("scenario", "both"):
        log = row_log("moe_placement", argv, args.out)
        limit = 20.0 if args.quick else 60.0
        source = "olmoe" if OLMOE.exists() else "synthetic"
        srows = log.rows(
            key("scenario", source, f"{limit:g}s"),
            lambda: [{"part": "scenario", **r} for r in scenario_rows(limit, args.quick)],
        )
        cols = ["instance", "data", "method", "status", "point_us", "heldout_mean_us"]
        cols += ["heldout_p95_us"]
        cols += [c for c in srows[0] if c.endswith("_us") and c not in cols] + ["wall_s"]
        print_table("scenario model vs point estimate (µs of layer time per batch)", srows, cols)
        print(f"rows in {log.path} ({log.measured} measured, {log.resumed} read back)")
    return code


if __name__ == "__main__":
    sys.exit(main())
