"""Conformance: every exact back-end reaches the recorded optimum on every golden instance.

The golden objectives are the MILP's (real coefficients). CP-SAT may differ within its
documented resolution: L1 by 1/SHARE_SCALE, L2 by |J|/EFF_SCALE, L3 by |J|/COST_SCALE; when its
L1 equals the MILP's, it solves L2 and L3 over the same set (formulations/fairshare.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import schedopt
from schedopt.problems.fairshare.data import COST_SCALE, EFF_SCALE, SHARE_SCALE

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "instances" / "fairshare"
GOLDEN = json.loads((GOLDEN_DIR / "golden.json").read_text())


@pytest.mark.parametrize("method", ["milp:highs", "milp:cbc", "cpsat", "auto"])
@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_exact_backends_reach_the_golden_optimum(name: str, method: str) -> None:
    inst = schedopt.load(GOLDEN_DIR / name)
    expected = GOLDEN[name]
    result = schedopt.solve(inst, method, time_limit_s=60)
    assert result.status.value == expected["status"]
    l1, l2, l3 = expected["objectives"]
    if method in ("cpsat", "auto"):  # auto's exact method is CP-SAT
        n = len(inst.jobs)
        assert result.objectives[0] == pytest.approx(l1, abs=1.01 / SHARE_SCALE)
        if abs(result.objectives[0] - l1) < 1e-9:
            assert result.objectives[1] == pytest.approx(l2, abs=n / EFF_SCALE)
            assert result.objectives[2] == pytest.approx(l3, abs=n / COST_SCALE + 1e-6)
        assert result.best_bound >= l1 - 1e-9
    else:
        assert result.objectives == pytest.approx((l1, l2, l3), rel=1e-6)
        assert result.gap == 0.0 or result.gap < 1e-6


def test_golden_files_load_as_fairshare() -> None:
    for name in GOLDEN:
        inst = schedopt.load(GOLDEN_DIR / name)
        assert inst.problem == "fairshare"
