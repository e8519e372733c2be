"""MoE expert-placement benchmark: every method on real model shapes from 8 to 256 GPUs, and the
scenario model against the point-estimate model on held-out popularity.

    python benchmarks/moe_placement.py                # the full suite (about 15 minutes)
    python benchmarks/moe_placement.py --quick        # 8, 16 and 64 GPUs; short scenario part
    python benchmarks/moe_placement.py --methods auto,heuristic:eplb --time-limit 5

Part 1, per instance and method: the first objective (Σ over layers of the most loaded GPU's
µs), the best bound and gap, the max-load imbalance (Σ_l max / Σ_l mean GPU load), cross-host
traffic (GiB per batch), GPUs used, and model build, solve and wall seconds. Exact models too
large to build are reported as "too large" (auto then returns its heuristic answer).

Part 2: a placement from the point estimate (posterior mean; milp:highs, else local search)
against milp:scenario (16 posterior scenarios, expected layer time) on popularity they did not
see: with the OLMoE routing counts (shared/data/olmoe-routing) both are fitted on the arxiv,
book, c4 and github domains and evaluated on wikipedia and tulu (real popularity shift), with
the raw counts and with a tempered posterior (effective_tokens = 2000 per layer);
without the data, on a synthetic noisy instance and posterior draws. Rows are appended as JSON
lines to benchmarks/results/moe_placement.jsonl.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import append_rows, print_table, run_cases

import schedopt
from schedopt.core.errors import ModelTooLargeError
from schedopt.problems.moe_placement import MoePlacementInstance, from_counts, generate_custom
from schedopt.problems.moe_placement.validate import layer_time
from schedopt.topology import Cluster

OLMOE = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "olmoe-routing" / "expert_counts.csv"
)

#: (model shape, layers, experts, hosts of 8 GPUs)
SHAPES = (
    ("mixtral-8x7b", 1, 8, 1),  # 8 GPUs, one Mixtral layer (exact models prove it)
    ("mixtral-8x7b", 32, 8, 1),  # 8 GPUs, Mixtral-8x7B
    ("olmoe-1b-7b", 16, 64, 2),  # 16 GPUs, OLMoE-1B-7B
    ("olmoe-1b-7b", 32, 64, 8),  # 64 GPUs, 64 experts × 32 layers (the target)
    ("deepseek-v3", 58, 256, 32),  # 256 GPUs, DeepSeek-V3 (58 MoE layers × 256 experts)
)
QUICK = SHAPES[:4]
METHODS = ("heuristic:eplb", "heuristic:local-search", "milp:highs", "cpsat", "auto")


@dataclass(frozen=True)
class Case:
    shape: str
    layers: int
    experts: int
    hosts: int
    seed: int
    method: str
    time_limit_s: float


def run(case: Case) -> dict:
    inst = generate_custom(
        shape=case.shape,
        layers=case.layers,
        experts=case.experts,
        hosts=case.hosts,
        seed=case.seed,
    )
    row = {
        "instance": f"{case.shape}-{case.layers}x{case.experts}-{case.hosts * 8}gpu-s{case.seed}",
        "gpus": case.hosts * 8,
        "layers": case.layers,
        "experts": case.experts,
        "method": case.method,
        "time_limit_s": case.time_limit_s,
    }
    try:
        r = schedopt.solve(inst, case.method, time_limit_s=case.time_limit_s, seed=0)
    except ModelTooLargeError:
        return {**row, "status": "too large"}
    m = r.metrics
    return {
        **row,
        "method": r.method,
        "status": r.status.value,
        "layer_time_us": r.objective,
        "bound_us": r.best_bound,
        "gap": r.gap,
        "imbalance": m.get("imbalance"),
        "cross_host_gib": None if not m else m["cross_host_bytes"] / 2**30,
        "gpus_used": m.get("gpus_used"),
        "replicas": m.get("replicas"),
        "build_s": r.build_s,
        "solve_s": r.solve_s,
        "wall_s": r.wall_s,
    }


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
    ap.add_argument("--seeds", type=int, default=2, help="seeds per shape (2)")
    ap.add_argument("--methods", default=",".join(METHODS), help="comma-separated methods")
    ap.add_argument("--time-limit", type=float, default=10.0, help="seconds per solve (10)")
    ap.add_argument("--workers", type=int, default=1, help="parallel solves (1)")
    args = ap.parse_args(argv)
    shapes = QUICK if args.quick else SHAPES
    seeds = range(1 if args.quick else args.seeds)
    cases = [
        Case(s, layers, experts, hosts, seed, m, args.time_limit)
        for s, layers, experts, hosts in shapes
        for seed in seeds
        for m in args.methods.split(",")
    ]
    rows = []
    for row in run_cases(run, cases, args.workers):
        rows.append(row)
        print(f"  {row['instance']:<34} {row['method']:<40} {row['status']:<10}", flush=True)
    print_table(
        "MoE expert placement",
        rows,
        [
            "instance",
            "method",
            "status",
            "layer_time_us",
            "bound_us",
            "gap",
            "imbalance",
            "cross_host_gib",
            "gpus_used",
            "build_s",
            "solve_s",
            "wall_s",
        ],
    )
    srows = scenario_rows(20.0 if args.quick else 60.0, args.quick)
    cols = ["instance", "data", "method", "status", "point_us", "heldout_mean_us", "heldout_p95_us"]
    cols += [c for c in srows[0] if c.endswith("_us") and c not in cols] + ["wall_s"]
    print_table("scenario model vs point estimate (µs of layer time per batch)", srows, cols)
    path = append_rows("moe_placement", [*rows, *({"part": "scenario", **r} for r in srows)], argv)
    print(f"appended {len(rows) + len(srows)} rows to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
