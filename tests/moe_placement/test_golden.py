"""CP-SAT against the golden optima within its resolution δ (the golden optima × every exact
method, MILP back-ends on every level, are in tests/conformance/test_golden.py). CP-SAT solves
shares on a 1/Q grid (Q = data.SHARE_RESOLUTION); its first level must lie within the
resolution δ derived in data.cpsat_tolerance_us (re-derived here from the raw instance) of the
MILP optimum, and its reported bound must stay below the true optimum.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import schedopt
from schedopt.core.status import Status
from schedopt.problems.moe_placement.data import SHARE_RESOLUTION, build_data

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "instances" / "moe_placement"
GOLDEN = json.loads((GOLDEN_DIR / "golden.json").read_text())


def resolution_us(inst) -> float:
    """δ from the raw instance: shares move by < 1/Q each, so a GPU's layer load by less than
    Σ_e (w_e / s_g) / Q; coefficient rounding adds one load unit per expert (data.py)."""
    d = build_data(inst)
    total = 0.0
    for li, layer in enumerate(inst.layers):
        pop = inst.point_popularity(li)
        speeds = [inst.cluster.gpu(g).speed for g in inst.cluster.gpus()]
        per_gpu = [
            sum(p * e.compute_us_per_token / s for p, e in zip(pop, layer.experts, strict=True))
            for s in speeds
        ]
        total += max(per_gpu) / SHARE_RESOLUTION + d.load_unit_us * len(layer.experts)
    if inst.objective.mode == "weighted":
        w = inst.objective.weights
        comm = d.comm
        grid = sum(float(np.sum(d.pop[i]) * comm.max()) for i in range(d.L)) / SHARE_RESOLUTION
        total = w.load * total + w.comm * (grid + d.comm_unit_us * sum(len(m) for m in d.mem))
    return total


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_cpsat_agrees_within_its_resolution(name: str) -> None:
    inst = schedopt.load(GOLDEN_DIR / name)
    best = GOLDEN[name]["objectives"][0]
    delta = resolution_us(inst)
    assert delta >= GOLDEN[name]["cpsat_tolerance_us"] - 1e-9 or inst.objective.mode == "weighted"
    result = schedopt.solve(inst, "cpsat", time_limit_s=60, deterministic=True)
    assert result.stats["grid_optimal"] == "yes"
    eps = 1e-6 + 1e-8 * abs(best)  # solver tolerances
    assert best - eps <= result.objective <= best + delta + eps
    assert result.best_bound <= best + 1e-6
    assert result.status in (Status.OPTIMAL, Status.FEASIBLE)
