"""Regenerate the golden fair-share instances and record their proven optimal objectives.

    python benchmarks/make_golden_fairshare.py [--fairness-unit tenant|job]

Writes ``instances/fairshare/<name>.json`` and, per fairness unit (F1), the record
``instances/fairshare/golden.json`` (tenants) or ``golden-perjob.json`` (jobs); without
``--fairness-unit`` both. The
objectives are the MILP's (real coefficients, HiGHS). An instance becomes golden only if
MILP-HiGHS and MILP-CBC prove every level optimal and agree, and CP-SAT proves every level and
agrees on L1 within its resolution (1/SHARE_SCALE); otherwise the script stops.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import schedopt
from schedopt.core.status import Status
from schedopt.problems.fairshare import FairnessUnit, FairshareInstance, generate, generate_custom
from schedopt.problems.fairshare.data import SHARE_SCALE

OUT = Path(__file__).resolve().parents[1] / "instances" / "fairshare"
EXACT = ("milp:highs", "milp:cbc", "cpsat")
RECORD = {FairnessUnit.TENANT: "golden.json", FairnessUnit.JOB: "golden-perjob.json"}


def per_job_candidates() -> Iterator[tuple[str, FairshareInstance]]:
    job = FairnessUnit.JOB
    yield (
        "perjob-16gpu-12j-s3",
        generate_custom(
            gpus=16,
            tenants=3,
            jobs=12,
            gpus_per_host=4,
            seed=3,
            fairness_unit=job,
            name="fs-perjob-16-s3",
        ),
    )
    yield (
        "perjob-32gpu-20j-s4",
        generate_custom(
            gpus=32, tenants=5, jobs=20, seed=4, fairness_unit=job, name="fs-perjob-32-s4"
        ),
    )
    yield (
        "perjob-32gpu-20j-onehost-s5",
        generate_custom(
            gpus=32,
            tenants=5,
            jobs=20,
            seed=5,
            allow_multi_host=False,
            fairness_unit=job,
            name="fs-perjob-32-onehost-s5",
        ),
    )
    yield (
        "perjob-32gpu-24j-hard-cap-s6",
        generate_custom(
            gpus=32,
            tenants=4,
            jobs=24,
            seed=6,
            guarantees_hard=True,
            max_preemptions=3,
            fairness_unit=job,
            name="fs-perjob-32-hard-cap-s6",
        ),
    )


def candidates() -> Iterator[tuple[str, FairshareInstance]]:
    for seed in range(3):
        yield f"small-s{seed}", generate("small", seed)
    yield "32gpu-20j-s0", generate_custom(gpus=32, tenants=5, jobs=20, seed=0, name="fs-32-s0")
    yield (
        "32gpu-20j-onehost-s1",
        generate_custom(
            gpus=32, tenants=5, jobs=20, seed=1, allow_multi_host=False, name="fs-32-onehost-s1"
        ),
    )
    yield (
        "32gpu-24j-hard-cap-s2",
        generate_custom(
            gpus=32,
            tenants=4,
            jobs=24,
            seed=2,
            guarantees_hard=True,
            max_preemptions=3,
            name="fs-32-hard-cap-s2",
        ),
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--fairness-unit", choices=[u.value for u in FairnessUnit])
    args = ap.parse_args(argv)
    units = list(FairnessUnit) if args.fairness_unit is None else [FairnessUnit(args.fairness_unit)]
    OUT.mkdir(parents=True, exist_ok=True)
    for unit in units:
        made = record(per_job_candidates() if unit is FairnessUnit.JOB else candidates())
        if made is None:
            return 1
        (OUT / RECORD[unit]).write_text(json.dumps(made, indent=1) + "\n")
    return 0


def record(cases: Iterator[tuple[str, FairshareInstance]]) -> dict[str, dict] | None:
    """Every case's proven objectives, or None (and why on stderr) when one is not golden."""
    golden = {}
    for name, inst in cases:
        found = {}
        for method in EXACT:
            r = schedopt.solve(inst, method, time_limit_s=120)
            if r.status is not Status.OPTIMAL:
                print(f"{name}: {method} ended {r.status.value}; not golden", file=sys.stderr)
                return None
            found[method] = r.objectives
        ref, cbc, cp = found["milp:highs"], found["milp:cbc"], found["cpsat"]
        if any(abs(a - b) > 1e-6 * max(1, abs(a)) for a, b in zip(ref, cbc, strict=True)):
            print(f"{name}: HiGHS and CBC disagree {found}", file=sys.stderr)
            return None
        if abs(ref[0] - cp[0]) > 1.01 / SHARE_SCALE:
            print(f"{name}: CP-SAT's L1 is outside its resolution {found}", file=sys.stderr)
            return None
        schedopt.dump(inst, OUT / f"{name}.json")
        golden[f"{name}.json"] = {"status": "optimal", "objectives": list(ref)}
        print(f"{name}: {ref} (cpsat {cp})")
    return golden


if __name__ == "__main__":
    sys.exit(main())
