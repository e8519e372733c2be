"""Throughput-blind max-min's level 2 (formulations/timeshare.md, "Level 2", #19): among the
time-fair optima, the most perf-normalised throughput. Checked against a dense scipy LP written
here from the formulation (jobs alone, x[j, w], real rates), sharing nothing with the model."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

import schedopt
from schedopt.core.status import Status
from schedopt.problems.timeshare import Policy, TimeshareInstance, generate_custom

EXACT = ("milp:highs", "milp:cbc")


def _reference(inst: TimeshareInstance) -> tuple[float, float, float]:
    """(t*, the largest and the smallest mean s_j ρ_j / (π_j p_j) over x with min_j s_j τ_j / π_j
    ≥ t*): τ_j the job's time where it runs and fits, ρ_j its real throughput, p_j Gavel's
    equal-split throughput."""
    types = sorted(inst.workers)
    cap = np.array([float(inst.workers[w]) for w in types])
    n, k = len(inst.jobs), len(types)
    rate = np.array([[j.throughput.get(w, 0.0) for w in types] for j in inst.jobs])
    rate[:, cap == 0] = 0.0
    s = np.array([float(j.scale_factor) for j in inst.jobs])
    pi = np.array([j.priority_weight for j in inst.jobs])
    usable = (rate > 0) & (s[:, None] <= cap[None, :])
    nv = n * k
    a_ub, b_ub = [], []
    for j in range(n):  # C1: Σ_w x_jw ≤ 1
        row = np.zeros(nv + 1)
        row[j * k : (j + 1) * k] = 1.0
        a_ub.append(row)
        b_ub.append(1.0)
    for w in range(k):  # C2: Σ_j s_j x_jw ≤ N_w
        row = np.zeros(nv + 1)
        row[w:nv:k] = s
        a_ub.append(row)
        b_ub.append(cap[w])
    for j in range(n):  # C3: t ≤ s_j τ_j / π_j
        row = np.zeros(nv + 1)
        row[j * k : (j + 1) * k] = -(s[j] / pi[j]) * usable[j]
        row[-1] = 1.0
        a_ub.append(row)
        b_ub.append(0.0)
    bounds = [(0.0, 1.0 if usable.flat[v] else 0.0) for v in range(nv)] + [(0.0, None)]
    c = np.zeros(nv + 1)
    c[-1] = -1.0
    res = linprog(c, A_ub=np.array(a_ub), b_ub=b_ub, bounds=bounds, method="highs")
    assert res.status == 0, res.message
    t_star = -res.fun
    p = rate @ (cap / cap.sum())
    perf = np.where(p > 0, s / (pi * np.where(p > 0, p, 1.0)), 0.0)
    l2 = np.append((perf[:, None] * rate * usable).reshape(-1) / n, 0.0)
    bounds[-1] = (t_star * (1 - 1e-9), None)
    best = linprog(-l2, A_ub=np.array(a_ub), b_ub=b_ub, bounds=bounds, method="highs")
    worst = linprog(l2, A_ub=np.array(a_ub), b_ub=b_ub, bounds=bounds, method="highs")
    assert best.status == 0 and worst.status == 0
    return t_star, -best.fun, worst.fun


def _crossed() -> TimeshareInstance:
    """Two jobs, one GPU of each type, each job 4x faster on its own type: every split of the
    two GPUs gives each job the whole round (t* = 1), but only one runs both at full speed."""
    return TimeshareInstance.model_validate(
        {
            "policy": "max_min_fairness",
            "workers": {"a": 1, "b": 1},
            "jobs": [
                {"id": "ja", "throughput": {"a": 4.0, "b": 1.0}},
                {"id": "jb", "throughput": {"a": 1.0, "b": 4.0}},
            ],
        }
    )


@pytest.mark.parametrize("method", EXACT)
def test_the_tie_break_puts_each_job_on_its_fast_type(method: str) -> None:
    inst = _crossed()
    t_star, best, worst = _reference(inst)
    assert t_star == pytest.approx(1.0)
    assert worst < best - 0.5  # the tie is real: level 1 alone allows the crossed split
    result = schedopt.solve(inst, method, time_limit_s=30)
    assert result.status is Status.OPTIMAL
    assert result.objectives[0] == pytest.approx(t_star, rel=1e-7)
    assert result.objectives[1] == pytest.approx(best, rel=1e-7)
    got = {(s.job, s.worker_type): s.fraction for s in result.solution.shares}
    assert got == pytest.approx({("ja", "a"): 1.0, ("jb", "b"): 1.0})


@pytest.mark.parametrize("method", EXACT)
def test_generated_rounds_reach_the_reference_level_2(method: str) -> None:
    for seed in range(4):
        inst = generate_custom(8, seed=seed, policy=Policy.MAX_MIN_FAIRNESS)
        t_star, best, _ = _reference(inst)
        result = schedopt.solve(inst, method, time_limit_s=30)
        assert result.status is Status.OPTIMAL
        assert result.objectives[0] == pytest.approx(t_star, rel=1e-6)
        assert result.objectives[1] == pytest.approx(best, rel=1e-6)


def test_identical_jobs_keep_the_reference_level_2() -> None:
    """Classes of identical jobs (data.aggregate) count m times in level 2."""
    jobs = [
        {"id": f"j{i}", "throughput": kind, "priority_weight": 1.0 + i % 2}
        for i, kind in enumerate(
            [{"v100": 6.0, "p100": 3.0, "k80": 1.0}, {"v100": 2.0, "p100": 1.8, "k80": 1.5}] * 6
        )
    ]
    inst = TimeshareInstance.model_validate(
        {"policy": "max_min_fairness", "workers": {"v100": 3, "p100": 3, "k80": 3}, "jobs": jobs}
    )
    t_star, best, worst = _reference(inst)
    assert worst < best * (1 - 1e-3)
    result = schedopt.solve(inst, "milp:highs", time_limit_s=30)
    assert result.status is Status.OPTIMAL
    assert result.objectives[0] == pytest.approx(t_star, rel=1e-6)
    assert result.objectives[1] == pytest.approx(best, rel=1e-6)
