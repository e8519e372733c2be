"""The template plan space against the physical one on tiny instances (#17 item 3).

    python benchmarks/reconfig_physical.py --count 36
    python benchmarks/reconfig_physical.py --count 36 --decomp   # decomp:physical and Q7-Q9 too

Seeded tiny instances (1-2 hosts of 2 or 4 GPUs, the 4-layer toy model, 2-3 micro-batches,
fail-stop and fail-slow GPUs), each solved by brute force over the template space
(tests/reconfig/bruteforce.py::best_iteration_us) and over the physical space (every plan
V1-V6 accept: ``physical_best``), beside the proven physical bound
(``validate.physical_bound_us``, formulations/reconfig.md P1-P6). Prints how often and by how
much physical plans beat the template optimum, and how far below the physical optimum the
bound lies. Rows are appended to benchmarks/results/reconfig_physical.jsonl.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from anywhere: use this checkout's schedopt and tests
    sys.path.insert(0, str(ROOT))

from common import append_rows, print_table  # noqa: E402

from schedopt.problems.reconfig import ReconfigInstance, generate_custom  # noqa: E402
from schedopt.problems.reconfig.validate import physical_bound_us  # noqa: E402
from tests.reconfig.bruteforce import best_iteration_us, physical_best  # noqa: E402


def tiny(seed: int) -> ReconfigInstance:
    hosts, per_host = 1 + seed % 2, (2, 4)[(seed // 2) % 2]
    gpus = hosts * per_host
    inst = generate_custom(
        hosts,
        per_host,
        "toy",
        2 + seed % 2,
        fail_stop=min(seed % 3, gpus - 2),
        fail_slow=1 + (seed // 3) % 2,
        seed=seed,
        memory_gib=(4.0, 8.0, 16.0)[(seed // 4) % 3],
        tp_sizes=((1, 2), (1, 2, 4), (2, 4))[(seed // 6) % 3],
        max_stages=4,
    )
    doc = inst.model_dump(mode="json")
    doc["current_plan"] = None
    doc["failure_rate_per_hour"] = None
    return ReconfigInstance.model_validate(doc)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--count", type=int, default=36)
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument(
        "--decomp",
        action="store_true",
        help="also decomp:physical's plan (30 s) and the priced bound (Q7-Q9, no deadline) "
        "against the physical optimum: which side of the gap is weak (#17)",
    )
    args = ap.parse_args()
    rows: list[dict[str, Any]] = []
    for seed in range(args.count):
        inst = tiny(seed)
        template = best_iteration_us(inst)
        physical = physical_best(inst)
        bound = physical_bound_us(inst)
        best = None if physical is None else physical[0]
        rows.append(
            {
                "instance": inst.name,
                "seed": seed,
                "template_us": template,
                "physical_us": best,
                "bound_us": bound,
                "better_by": None if template is None or best is None else 1 - best / template,
                "bound_ratio": None if bound is None or not best else bound / best,
            }
        )
        if args.decomp and best:
            import schedopt
            from schedopt.problems.reconfig.price_bound import priced_bound_us

            priced, _ = priced_bound_us(inst, None, rel_tol=1e-4)
            plan = schedopt.solve(inst, "decomp:physical", time_limit_s=30).objectives
            rows[-1]["priced_us"] = priced
            rows[-1]["plan_us"] = None if plan is None else round(plan[0] * 1e6)
            rows[-1]["priced_ratio"] = None if priced is None else priced / best
            rows[-1]["plan_ratio"] = None if plan is None else round(plan[0] * 1e6) / best
    columns = ["seed", "template_us", "physical_us", "bound_us", "better_by", "bound_ratio"]
    print_table("template space vs physical space (tiny, brute force)", rows, columns)
    both = [r for r in rows if r["better_by"] is not None]
    beat = [r["better_by"] for r in both if r["better_by"] > 1e-12]
    ratios = [r["bound_ratio"] for r in rows if r["bound_ratio"] is not None]
    only_physical = sum(1 for r in rows if r["template_us"] is None and r["physical_us"])
    print(
        f"{len(beat)} of {len(both)} instances with both optima: a physical plan beats the "
        f"template optimum (median {100 * statistics.median(beat or [0]):.1f}%, max "
        f"{100 * max(beat or [0]):.1f}%); {only_physical} infeasible over the templates with a "
        f"physical plan; bound / physical optimum: median {statistics.median(ratios or [0]):.3f},"
        f" min {min(ratios or [0]):.3f}"
    )
    if args.decomp:
        done = [r for r in rows if r.get("plan_ratio") is not None]
        pr = [r["priced_ratio"] for r in done]
        pl = [r["plan_ratio"] for r in done]
        print(
            f"decomp:physical on {len(done)} instances with a physical plan: plan / optimum "
            f"median {statistics.median(pl or [0]):.3f}, max {max(pl or [0]):.3f}, equal on "
            f"{sum(x <= 1 + 1e-9 for x in pl)}; priced bound / optimum median "
            f"{statistics.median(pr or [0]):.3f}, min {min(pr or [0]):.3f}, equal on "
            f"{sum(x >= 1 - 1e-9 for x in pr)}"
        )
    if not args.no_save:
        append_rows("reconfig_physical", rows, None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
