"""An independent optimum of Gavel's policies: dense LPs written from Gavel's code
(scheduler/policies/*.py) and solved by scipy's ``linprog``, sharing nothing with schedopt's
model, data or validator. For small instances only."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog, minimize

from schedopt.problems.timeshare import Policy, TimeshareInstance


def _combos(inst: TimeshareInstance):
    """(members, per-type throughput tuples, GPUs) of every job alone and every pair."""
    blind = inst.policy is Policy.MAX_MIN_FAIRNESS
    out = []
    for j in inst.jobs:
        rates = {w: ((1.0 if blind and r > 0 else r),) for w, r in j.throughput.items()}
        out.append(((j.id,), rates, j.scale_factor))
    sf = {j.id: j.scale_factor for j in inst.jobs}
    for p in inst.pairs:
        out.append((tuple(p.jobs), {w: tuple(r) for w, r in p.throughput.items()}, sf[p.jobs[0]]))
    # co-location by job type: every two jobs (in the order of ``jobs``) whose types have an
    # entry, written out pair by pair
    entries = {}
    for e in inst.colocation:
        a, b = e.job_types
        entries[(a, b)] = {w: tuple(r) for w, r in e.throughput.items()}
        entries.setdefault((b, a), {w: (r[1], r[0]) for w, r in e.throughput.items()})
    for i, ja in enumerate(inst.jobs):
        for jb in inst.jobs[i + 1 :]:
            rates = entries.get((ja.job_type, jb.job_type))
            if rates is not None:
                out.append(((ja.id, jb.id), rates, sf[ja.id]))
    return out


def _polytope(inst: TimeshareInstance):
    """Variables x[c, w] (combination-major) then t; A_ub, b_ub of C1 and C2, and each job's
    throughput row ρ_j = Σ T x."""
    types = sorted(inst.workers)
    combos = _combos(inst)
    nv = len(combos) * len(types)
    ids = [j.id for j in inst.jobs]
    rho = np.zeros((len(ids), nv))
    time_rows = np.zeros((len(ids), nv))
    cap = np.zeros((len(types), nv))
    for c, (members, rates, gpus) in enumerate(combos):
        for k, w in enumerate(types):
            v = c * len(types) + k
            r = rates.get(w, (0.0,) * len(members))
            # schedopt's C4 (formulations/timeshare.md): a gang runs only where it fits.
            # Gavel's LP lets an 8-GPU job run on a 4-GPU type; the two agree when s ≤ N_w.
            usable = inst.workers[w] >= gpus and all(x > 0 for x in r)
            for m, rate in zip(members, r, strict=True):
                time_rows[ids.index(m), v] = 1.0
                rho[ids.index(m), v] = rate if usable else 0.0
            cap[k, v] = gpus
    b = np.concatenate([np.ones(len(ids)), [float(inst.workers[w]) for w in types]])
    return np.vstack([time_rows, cap]), b, rho, nv


def max_min(inst: TimeshareInstance, weights: np.ndarray) -> float:
    """max t s.t. t ≤ a_j ρ_j, C1, C2, 0 ≤ x ≤ 1."""
    A, b, rho, nv = _polytope(inst)
    n = len(inst.jobs)
    A_ub = np.vstack(
        [
            np.hstack([A, np.zeros((len(A), 1))]),
            np.hstack([-weights[:, None] * rho, np.ones((n, 1))]),
        ]
    )
    b_ub = np.concatenate([b, np.zeros(n)])
    c = np.zeros(nv + 1)
    c[-1] = -1.0
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=[(0, 1)] * nv + [(0, None)], method="highs")
    assert res.status == 0, res.message
    return -res.fun


def equal_split(inst: TimeshareInstance) -> np.ndarray:
    """Gavel's ProportionalPolicy: x = N_w / m, divided by the largest row sum."""
    types = sorted(inst.workers)
    m = len(inst.jobs)
    x = np.array([inst.workers[w] / m for w in types])
    x = x / x.sum()
    return np.array(
        [sum(j.throughput.get(w, 0.0) * x[k] for k, w in enumerate(types)) for j in inst.jobs]
    )


def isolated(inst: TimeshareInstance) -> np.ndarray:
    """Gavel's IsolatedPolicy throughput."""
    types = sorted(inst.workers)
    m = len(inst.jobs)
    out = []
    for j in inst.jobs:
        x = np.array([inst.workers[w] / m for w in types]) / j.scale_factor
        x = x / max(1.0, x.sum())
        out.append(sum(j.throughput.get(w, 0.0) * x[k] for k, w in enumerate(types)))
    return np.array(out)


def policy_value(inst: TimeshareInstance) -> float:
    """The optimum of the policy, in Gavel's own terms: min normalised throughput (max-min),
    the minimum makespan in seconds, or the minimum of the largest finish-time ratio."""
    s = np.array([j.scale_factor for j in inst.jobs], dtype=float)
    pw = np.array([j.priority_weight for j in inst.jobs])
    R = np.array([j.remaining_steps or 0.0 for j in inst.jobs])
    if inst.policy is Policy.MAX_MIN_FAIRNESS:
        return max_min(inst, s / pw)
    if inst.policy is Policy.MAX_MIN_FAIRNESS_PERF:
        return max_min(inst, s / (pw * equal_split(inst)))
    if inst.policy is Policy.MIN_MAKESPAN:
        return 1.0 / max_min(inst, 1.0 / R)  # ρ_j ≥ R_j y, makespan 1/y
    # finish-time fairness by bisection on r: feasible iff max-min of ρ_j / q_j(r) ≥ 1
    tau = np.array([j.time_since_start_s for j in inst.jobs])
    E = np.array([j.isolated_time_s for j in inst.jobs]) + R / isolated(inst)
    lo, hi = float(np.max(tau / E)), 1.0
    while max_min(inst, (hi * E - tau) / R) < 1:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if max_min(inst, (mid * E - tau) / R) >= 1:
            hi = mid
        else:
            lo = mid
    return hi


def _nash_weights(inst: TimeshareInstance) -> np.ndarray:
    """a_j of max-min perf: s_j / (π_j p_j), p_j the equal split's throughput."""
    s_over_pi = np.array([j.scale_factor / j.priority_weight for j in inst.jobs])
    return s_over_pi / equal_split(inst)


def nash_dual_bound(inst: TimeshareInstance, utility: np.ndarray) -> float:
    """Weak duality, written apart from nash.py: with λ_j = 1/u_j (any u > 0), Σ log u ≤
    Σ_j (−1 − log λ_j) + max_{x ∈ P} Σ_j λ_j a_j ρ_j(x) for every allocation (P: C1, C2, C4,
    0 ≤ x ≤ 1); tight at the optimal u."""
    A, b, rho, nv = _polytope(inst)
    lam = 1.0 / utility
    res = linprog(-(lam * _nash_weights(inst)) @ rho, A_ub=A, b_ub=b, bounds=[(0, 1)] * nv)
    assert res.status == 0, res.message
    return float(np.sum(-1.0 - np.log(lam)) - res.fun)


def nash_slsqp(inst: TimeshareInstance) -> tuple[float, np.ndarray]:
    """max Σ log a_j ρ_j(x) over the polytope by scipy's SLSQP (a local method on a concave
    objective: its answer is an allocation, so at most the optimum): the value and u."""
    A, b, rho, nv = _polytope(inst)
    W = _nash_weights(inst)[:, None] * rho
    res = minimize(
        lambda x: -np.sum(np.log(W @ x)),
        np.full(nv, 1e-3),
        jac=lambda x: -(W.T @ (1.0 / (W @ x))),
        bounds=[(1e-12, 1)] * nv,
        constraints=[{"type": "ineq", "fun": lambda x: b - A @ x, "jac": lambda x: -A}],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 2000},
    )
    x = np.clip(res.x, 0, 1)
    x *= min(1.0, float(np.min(b / np.maximum(A @ x, 1e-300))))  # exactly feasible
    u = W @ x
    return float(np.sum(np.log(u))), u


def leximin(inst: TimeshareInstance, weights: np.ndarray) -> np.ndarray:
    """Water filling by the book: after each max-min LP, a job is frozen at t* when an LP that
    maximises its own a_j ρ_j (the others kept at t* or their levels) cannot lift it; the
    levels a_j ρ_j, sorted."""
    A, b, rho, nv = _polytope(inst)
    n = len(inst.jobs)
    W = weights[:, None] * rho
    frozen = np.full(n, np.nan)

    def best(c, floors):  # max c·[x, t] s.t. polytope, W x ≥ floors (t-rows where nan)
        rising = np.isnan(floors)
        rows = np.hstack([-W, rising[:, None].astype(float)])
        A_ub = np.vstack([np.hstack([A, np.zeros((len(A), 1))]), rows])
        b_ub = np.concatenate([b, np.where(rising, 0.0, -np.nan_to_num(floors))])
        res = linprog(-c, A_ub=A_ub, b_ub=b_ub, bounds=[(0, 1)] * nv + [(0, None)])
        assert res.status == 0, res.message
        return res.x

    while np.isnan(frozen).any():
        c = np.zeros(nv + 1)
        c[-1] = 1.0
        t_star = best(c, frozen)[-1]
        rising = np.flatnonzero(np.isnan(frozen))
        floors = np.where(np.isnan(frozen), t_star * (1 - 1e-9), frozen)
        stuck = [
            j
            for j in rising
            if (W[j] @ best(np.append(W[j], 0.0), floors)[:-1]) <= t_star * (1 + 1e-7)
        ]
        assert stuck, "some job must be a bottleneck"
        frozen[stuck] = t_star
    return np.sort(frozen)


#: HiGHS's presolve has called feasible phases of reweighted water filling infeasible
CLEAN = {"presolve": False}


def reweighted_fill(inst: TimeshareInstance, weights: np.ndarray, priorities) -> np.ndarray:
    """Water filling with Gavel's priority reweighting, by the book: in each phase the rising
    jobs (``priorities(frozen)`` > 0) rise at γ_j = w_j / π_j from their levels U_j, as far as
    an LP lets them all; then a rising job is frozen when an LP that maximises its own a_j ρ_j
    (every job kept at its new level) cannot lift it. Each job's level a_j ρ_j, in job order."""
    A, b, rho, nv = _polytope(inst)
    n = len(inst.jobs)
    W = weights[:, None] * rho
    pi = np.array([j.priority_weight for j in inst.jobs])
    frozen = np.zeros(n, dtype=bool)
    level = np.zeros(n)
    box = [(0, 1)] * nv
    while not frozen.all():
        gamma = priorities(frozen) / pi
        rising = gamma > 0
        assert rising.any()
        # max t s.t. A x ≤ b, γ_j t − W_j x ≤ −U_j
        A_ub = np.vstack([np.hstack([A, np.zeros((len(A), 1))]), np.hstack([-W, gamma[:, None]])])
        b_ub = np.concatenate([b, -level])
        c = np.zeros(nv + 1)
        c[-1] = -1.0
        res = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=[*box, (0, None)], options=CLEAN)
        assert res.status == 0, res.message
        reached = level + gamma * res.x[-1]
        level = np.where(rising, reached * (1 - 1e-9), level)
        stuck = []
        for j in np.flatnonzero(rising):
            own = linprog(
                -W[j],
                A_ub=np.vstack([A, -W]),
                b_ub=np.concatenate([b, -level]),
                bounds=box,
                options=CLEAN,
            )
            assert own.status == 0, own.message
            if -own.fun <= reached[j] * (1 + 1e-7) + 1e-7:
                stuck.append(j)
        assert stuck, "some rising job must be a bottleneck"
        frozen[stuck] = True
    return level
