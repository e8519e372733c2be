"""Golden rounds of timeshare's drop-in-only policies: Gavel's strategy-proof policy and water
filling (with and without priority reweighting by entity), which `schedopt solve` does not take
(formulations/timeshare.md, "Drop-in only policies").

    python benchmarks/make_golden_dropin.py

Writes ``instances/timeshare/dropin/<name>.json`` (the arguments of Gavel's ``get_allocation``,
with the class's name under ``policy``; a pair's key, a tuple in Gavel, goes under
``pair_throughputs`` as its two job ids and the throughputs) and
``instances/timeshare/dropin/golden.json``: each round's value as schedopt's drop-in proves it
with no time limit to speak of (an hour) and, for the strategy-proof policy, a gap of 1e-10 on
the geometric mean: the geometric mean and each job's discounted rate (steps/s, what Gavel's
scheduler uses; exact to the programs' gaps), or each job's water level a_j ρ_j. A round that
is not proven OPTIMAL stops the script (exit 1). The values are checked apart from schedopt's
code by tests/timeshare/test_dropin_golden.py (closed form, scipy, the reference water
filling), which also runs every back-end on them.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from schedopt.core.status import Status
from schedopt.integrations import gavel

FOLDER = Path(__file__).resolve().parents[1] / "instances" / "timeshare" / "dropin"
STRATEGY_PROOF = "MaxMinFairnessStrategyProofPolicyWithPerf"
WATER_FILLING = "MaxMinFairnessWaterFillingPolicyWithPerf"
PACKING = "MaxMinFairnessWaterFillingPolicyWithPacking"
BLIND = "MaxMinFairnessWaterFillingPolicy"
#: the strategy-proof programs' gap on the geometric mean when the values are recorded
TOL = 1e-10


def _jobs(rows: dict[str, tuple[dict[str, float], int, float]]) -> dict[str, Any]:
    return {
        "throughputs": {j: rates for j, (rates, _, _) in rows.items()},
        "scale_factors": {j: sf for j, (_, sf, _) in rows.items()},
        "priority_weights": {j: pw for j, (_, _, pw) in rows.items()},
    }


#: Small rounds: one GPU type (a closed form decides), a rate of 0, gangs of 2, priorities,
#: several water levels, both reweighting rules.
ROUNDS: dict[str, dict[str, Any]] = {
    "strategy_proof-1type-4j": {
        "policy": STRATEGY_PROOF,
        **_jobs(
            {
                "a": ({"v100": 4.0}, 1, 1.0),
                "b": ({"v100": 1.5}, 1, 2.0),
                "c": ({"v100": 3.0}, 2, 1.0),
                "d": ({"v100": 2.0}, 1, 1.0),
            }
        ),
        "cluster_spec": {"v100": 3},
    },
    "strategy_proof-3types-5j": {
        "policy": STRATEGY_PROOF,
        **_jobs(
            {
                "a": ({"k80": 1.2, "p100": 3.1, "v100": 6.0}, 1, 1.0),
                "b": ({"k80": 0.4, "p100": 2.2, "v100": 9.5}, 1, 2.0),
                "c": ({"k80": 1.9, "p100": 1.5, "v100": 2.4}, 2, 1.0),
                "d": ({"k80": 0.0, "p100": 4.0, "v100": 5.0}, 1, 1.0),
                "e": ({"k80": 0.8, "p100": 1.1, "v100": 7.7}, 1, 1.0),
            }
        ),
        "cluster_spec": {"k80": 4, "p100": 3, "v100": 2},
    },
    "strategy_proof-2types-3j": {
        "policy": STRATEGY_PROOF,
        **_jobs(
            {
                "a": ({"k80": 1.0, "v100": 4.0}, 1, 1.0),
                "b": ({"k80": 2.0, "v100": 2.5}, 1, 1.0),
                "c": ({"k80": 0.0, "v100": 3.0}, 1, 1.0),
            }
        ),
        "cluster_spec": {"k80": 1, "v100": 1},
    },
    "water_filling-perf-6j": {
        "policy": WATER_FILLING,
        **_jobs(
            {
                "a": ({"k80": 0.0, "p100": 0.0, "v100": 8.0}, 1, 1.0),
                "b": ({"k80": 0.0, "p100": 0.0, "v100": 3.0}, 1, 2.0),
                "c": ({"k80": 1.5, "p100": 2.5, "v100": 5.0}, 1, 1.0),
                "d": ({"k80": 0.5, "p100": 4.0, "v100": 6.0}, 2, 1.0),
                "e": ({"k80": 1.0, "p100": 0.0, "v100": 0.0}, 1, 1.0),
                "f": ({"k80": 0.0, "p100": 3.5, "v100": 9.0}, 1, 2.0),
            }
        ),
        "cluster_spec": {"k80": 3, "p100": 2, "v100": 2},
    },
    "water_filling-blind-5j": {
        "policy": BLIND,
        **_jobs(
            {
                "a": ({"k80": 0.0, "v100": 8.0}, 1, 1.0),
                "b": ({"k80": 0.0, "v100": 3.0}, 1, 1.0),
                "c": ({"k80": 1.5, "v100": 5.0}, 1, 2.0),
                "d": ({"k80": 0.5, "v100": 6.0}, 2, 1.0),
                "e": ({"k80": 1.0, "v100": 1.2}, 1, 1.0),
            }
        ),
        "cluster_spec": {"k80": 4, "v100": 2},
    },
}
ROUNDS["water_filling-packing-5j"] = {
    "policy": PACKING,
    **_jobs(
        {
            "a": ({"k80": 0.0, "v100": 8.0}, 1, 1.0),
            "b": ({"k80": 1.0, "v100": 3.0}, 1, 1.0),
            "c": ({"k80": 1.5, "v100": 5.0}, 1, 2.0),
            "d": ({"k80": 0.5, "v100": 6.0}, 2, 1.0),
            "e": ({"k80": 1.0, "v100": 0.0}, 1, 1.0),
        }
    ),
    "pair_throughputs": [
        {"jobs": ["a", "b"], "throughput": {"k80": [0.0, 0.0], "v100": [6.0, 2.4]}},
        {"jobs": ["b", "c"], "throughput": {"k80": [0.8, 1.2], "v100": [1.5, 4.5]}},
        {"jobs": ["a", "c"], "throughput": {"k80": [0.0, 0.0], "v100": [4.0, 2.5]}},
    ],
    "cluster_spec": {"k80": 2, "v100": 2},
}
# Gavel's scheduler offers every pair of jobs, and its packing classes need them all (their
# constraints reshape x to one row per job): this round has all six, so Gavel's class runs too
ROUNDS["water_filling-packing-allpairs-4j"] = {
    "policy": PACKING,
    **_jobs(
        {
            "a": ({"k80": 0.5, "v100": 8.0}, 1, 1.0),
            "b": ({"k80": 1.0, "v100": 3.0}, 1, 1.0),
            "c": ({"k80": 1.5, "v100": 5.0}, 1, 2.0),
            "d": ({"k80": 0.5, "v100": 6.0}, 1, 1.0),
        }
    ),
    "pair_throughputs": [
        {"jobs": ["a", "b"], "throughput": {"k80": [0.3, 0.7], "v100": [6.0, 2.4]}},
        {"jobs": ["a", "c"], "throughput": {"k80": [0.2, 1.1], "v100": [4.0, 2.5]}},
        {"jobs": ["a", "d"], "throughput": {"k80": [0.4, 0.2], "v100": [3.5, 3.0]}},
        {"jobs": ["b", "c"], "throughput": {"k80": [0.8, 1.2], "v100": [1.5, 4.5]}},
        {"jobs": ["b", "d"], "throughput": {"k80": [0.6, 0.3], "v100": [2.0, 4.0]}},
        {"jobs": ["c", "d"], "throughput": {"k80": [0.0, 0.0], "v100": [2.0, 2.0]}},
    ],
    "cluster_spec": {"k80": 2, "v100": 2},
}
ROUNDS["water_filling-entities-fairness-6j"] = {
    **ROUNDS["water_filling-perf-6j"],
    "priority_reweighting_policies": {"team1": "fairness", "team2": "fairness"},
    "entity_weights": {"team1": 1.0, "team2": 3.0},
    "entity_to_job_mapping": {"team1": ["a", "c", "e"], "team2": ["b", "d", "f"]},
}
ROUNDS["water_filling-entities-mixed-6j"] = {
    **ROUNDS["water_filling-perf-6j"],
    "priority_reweighting_policies": {"team1": "fifo", "team2": "fairness", "team3": "fifo"},
    "entity_weights": {"team1": 2.0, "team2": 1.0, "team3": 1.0},
    "entity_to_job_mapping": {"team1": ["c", "a"], "team2": ["b", "d", "e"], "team3": ["f"]},
}


def throughputs(doc: dict[str, Any]) -> dict[Any, Any]:
    """Gavel's ``throughputs``: every job's, and every pair's under the tuple of its ids."""
    pairs = {tuple(p["jobs"]): p["throughput"] for p in doc.get("pair_throughputs", ())}
    return {**doc["throughputs"], **pairs}


def run(doc: dict[str, Any], policy: Any) -> dict[Any, dict[str, float]]:
    """``policy.get_allocation`` on the round's arguments (the allocation alone)."""
    thr = throughputs(doc)
    args = (thr, doc["scale_factors"], doc["priority_weights"], doc["cluster_spec"])
    if doc["policy"] == STRATEGY_PROOF:
        allocation, _ = policy.get_allocation(*args)
        return allocation  # type: ignore[no-any-return]
    entities = {}
    if "priority_reweighting_policies" in doc:
        entities = {
            "entity_weights": doc["entity_weights"],
            "entity_to_job_mapping": doc["entity_to_job_mapping"],
        }
    return policy.get_allocation(*args, **entities)  # type: ignore[no-any-return]


def levels(doc: dict[str, Any], allocation: dict[Any, dict[str, float]]) -> dict[str, float]:
    """Each job's a_j ρ_j: s_j ρ_j / (π_j p_j), p_j the equal split's rate, ρ_j with its time in
    pairs at the pair's rates; the blind policy's ρ_j is the time on types where the job runs
    and a_j = s_j / π_j."""
    spec, thr = doc["cluster_spec"], doc["throughputs"]
    total = sum(spec.values())
    out = {}
    for j, rates in thr.items():
        s, pw = doc["scale_factors"][j], doc["priority_weights"][j]
        if doc["policy"] == BLIND:
            time = sum(x for w, x in allocation[j].items() if rates[w] > 0)
            out[j] = s * time / pw
            continue
        rho = sum(x * rates[w] for w, x in allocation[j].items())
        for pair in doc.get("pair_throughputs", ()):
            if j in pair["jobs"]:
                k = pair["jobs"].index(j)
                shares = allocation[tuple(pair["jobs"])]
                rho += sum(x * pair["throughput"][w][k] for w, x in shares.items())
        p = sum(rates[w] * n / total for w, n in spec.items())
        out[j] = s * rho / (pw * p)
    return out


def record(doc: dict[str, Any]) -> dict[str, Any]:
    if doc["policy"] == STRATEGY_PROOF:
        policy = gavel.MaxMinFairnessStrategyProofPerf(tol=TOL, time_limit_s=3600.0)
        allocation = run(doc, policy)
        result = policy.last_result
        if result.status is not Status.OPTIMAL:
            raise SystemExit(f"not proven: {result.status} {result.explanation}")
        rates = {
            j: sum(x * doc["throughputs"][j][w] for w, x in allocation[j].items())
            for j in doc["throughputs"]
        }
        assert result.objective is not None and math.isfinite(result.objective)
        return {"status": "optimal", "geometric_mean": result.objective, "rates": rates}
    cls = getattr(gavel, doc["policy"])
    policy = cls(doc.get("priority_reweighting_policies"), time_limit_s=3600.0)
    allocation = run(doc, policy)
    if policy.last_result.status is not Status.OPTIMAL:
        raise SystemExit(f"not proven: {policy.last_result}")
    return {"status": "optimal", "levels": levels(doc, allocation)}


def main() -> int:
    FOLDER.mkdir(parents=True, exist_ok=True)
    golden = {}
    for name, doc in ROUNDS.items():
        path = FOLDER / f"{name}.json"
        path.write_text(json.dumps(doc, indent=1) + "\n")
        golden[path.name] = record(json.loads(path.read_text()))
        print(name, golden[path.name], flush=True)
    (FOLDER / "golden.json").write_text(json.dumps(golden, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
