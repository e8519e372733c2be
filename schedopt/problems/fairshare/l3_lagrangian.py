"""B3L's Lagrangian (formulations/fairshare.md, "B3L", Claim 2): its value at given multipliers
(``λ`` on the L2 row, ``μ_g`` on C2, ``ρ_v`` on the fix rows R1), each ``ρ_v`` by bisection or
as given, the supergradient of the relaxed rows' slacks, and the multipliers a search found
(``L3Dual``). What is left after the rows are relaxed splits by job (one option, or kept, or
idle), so the value is a sum of per-job minima; any multipliers give a valid bound (weak
duality). The search over them is ``l3_bound.py``'s."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .option_arrays import Arrays

#: Bisection steps of each unit's ρ_v (any ρ is valid; the bound is the better end).
RHO_STEPS = 20


def _choice(
    costs: np.ndarray, n: np.ndarray, rho: np.ndarray, of: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each job's least cost less ``ρ n`` over its options, and ``of`` (default: the option's
    index) at the first option reaching it. ``costs``, ``n``, ``of``: by option, then job (a
    pass per option: argmin over each job's row of 6 took 3-4 times as long at 20,000 jobs);
    ``rho``: each job's ``ρ`` of its unit."""
    least = costs[0] - rho * n[0]
    at = np.zeros(len(least)) if of is None else of[0].copy()
    for k in range(1, len(costs)):
        cost = costs[k] - rho * n[k]
        better = cost < least
        np.copyto(least, cost, where=better)
        np.copyto(at, k if of is None else of[k], where=better)
    return least, at


def _per_job(costs: np.ndarray, n: np.ndarray, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each job's least cost (0: idle) and the GPUs of that choice (``_choice``'s layout)."""
    least, gpus = _choice(costs, n, rho, n)
    return np.minimum(least, 0.0), np.where(least < 0.0, gpus, 0.0)


def lagrangian(
    a: Arrays,
    need: np.ndarray,
    l2_floor: float | None,
    lam: float,
    mu: np.ndarray,
    near: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """The bound at ``λ``, ``μ`` with every ``ρ_v`` chosen by bisection, and those ρ;
    ``need[v]`` is ``m_v(t̂)`` (0 for units not counted), ``l2_floor`` λ₂ (None: no L2 row,
    λ = 0). ``near``: ρ found at nearby multipliers, which narrows the bisection to
    ``[ρ/2, 2ρ + 1]`` and halves its steps (a ρ outside is only a weaker bound)."""
    if l2_floor is None:
        lam = 0.0
    units = len(need)
    if not len(a.unit):
        return a.restart_constant, np.zeros(units)
    costs, n = a.costs(lam, mu), a.columns[3]
    if near is None:
        finite = np.abs(costs[np.isfinite(costs)])
        lo = np.zeros(units)
        hi = np.full(units, float(finite.max(initial=0.0)) + 1.0)  # every job at its widest
        steps = RHO_STEPS
    else:
        lo, hi, steps = 0.5 * near, 2.0 * near + 1.0, RHO_STEPS // 2
    counted = need > 0
    rows = np.flatnonzero(counted[a.unit])  # (the others' ρ stays 0: got 0 ≥ need as theirs)
    part, part_n, part_unit = costs[:, rows], n[:, rows], a.unit[rows]
    for _ in range(steps):
        mid = np.where(counted, 0.5 * (lo + hi), 0.0)
        _, gpus = _per_job(part, part_n, mid[part_unit])
        got = np.bincount(part_unit, weights=gpus, minlength=units)
        short = got < need  # supergradient m_v − g_v > 0: ρ_v must rise
        lo = np.where(short, mid, lo)
        hi = np.where(short, hi, mid)
    best, best_rho = -math.inf, lo
    for rho in (np.where(counted, lo, 0.0), np.where(counted, hi, 0.0)):
        least, _ = _per_job(costs, n, rho[a.unit])
        value = (
            a.restart_constant
            + (lam * l2_floor if l2_floor is not None else 0.0)
            - float(mu @ a.capacity)
            + float(rho @ need)
            + float(least.sum())
        )
        if value > best:
            best, best_rho = value, rho
    return best, best_rho


@dataclass(frozen=True)
class L3Dual:
    """B3L's value and the multipliers it was found at (``λ`` on the L2 row, ``μ_g`` on C2,
    ``ρ_v`` on the fix rows): a job's reduced cost on option ``o`` is ``a_jo`` of Claim 2."""

    value: float
    lam: float
    mu: np.ndarray
    rho: np.ndarray

    def costs(self, a: Arrays) -> np.ndarray:
        """``a_jo`` by row of ``a`` (+inf where padded; the kept choice at the previous
        option, as in ``a.base``)."""
        return a.base - self.lam * a.eff + a.gpu_terms(self.mu, self.rho)


def at_point(
    a: Arrays, need: np.ndarray, l2_floor: float, lam: float, mu: np.ndarray, rho: np.ndarray
) -> tuple[float, np.ndarray]:
    """Claim 2's bound at ``(λ, μ, ρ)`` as given (ρ_v = 0 for units not counted) and a
    supergradient in all three: the relaxed rows' slacks at the per-job minimisers,
    ``(λ₂ − Σ e x, Σ_{o of g} n x − F_g, m_v − g_v)``."""
    least, at = _choice(a.costs(lam, mu), a.columns[3], rho[a.unit])
    rows, pick = np.arange(len(least)), at.astype(np.int64)
    on = least < 0.0
    n = a.n[rows, pick][on]
    value = (
        a.restart_constant
        + lam * l2_floor
        - float(mu @ a.capacity)
        + float(rho @ need)
        + float(least[on].sum())
    )
    used = np.bincount(a.gtype[rows, pick][on], weights=n, minlength=len(a.capacity))
    got = np.bincount(a.unit[on], weights=n, minlength=len(need))
    slack_l2 = l2_floor - float(a.eff[rows, pick][on].sum())
    return value, np.concatenate([[slack_l2], used - a.capacity, need - got])


def supergradient(
    a: Arrays, l2_floor: float, lam: float, mu: np.ndarray, rho: np.ndarray
) -> np.ndarray:
    """A supergradient in ``(λ, μ)`` of the Lagrangian at ``(λ, μ, ρ)``: the relaxed rows'
    slacks at the per-job minimisers, ``λ₂ − Σ e x`` and ``Σ_{o of g} n x − F_g``."""
    need = np.zeros(len(rho))  # (the ρ part of at_point's supergradient is not used)
    return at_point(a, need, l2_floor, lam, mu, rho)[1][: 1 + len(a.capacity)]


__all__ = ["RHO_STEPS", "L3Dual", "at_point", "lagrangian", "supergradient"]
