"""B2L: a Lagrangian upper bound on L2 behind a solution's L1 (formulations/fairshare.md,
"B2L"), and the multipliers that give it, which guide the L2 repair's neighbourhoods. It is
B3L's Lagrangian (``l3_bound.py``) with no restart or host costs and the L2 row as the
objective."""

from __future__ import annotations

import math

import numpy as np

from schedopt.core.stopping import Deadline

from .data import ModelData
from .l3_bound import golden
from .l3_lagrangian import lagrangian
from .option_arrays import Arrays, arrays

#: Golden-section steps on each μ_g (each evaluation is a valid bound; the best is kept).
SCALE_STEPS = 6


def l2_prices(
    data: ModelData,
    need: np.ndarray,
    prices: np.ndarray,
    stop: Deadline,
    a: Arrays | None = None,
) -> tuple[float, np.ndarray, np.ndarray]:
    """B2L: an upper bound on L2 over the allocations at least as fair as a solution
    (``g_v ≥ m_v(t̂)``, ``need``), by relaxing those rows with ``ρ_v ≥ 0`` and C2 with
    ``μ_g ≥ 0``: ``Σ_g μ_g F_g − Σ_v ρ_v m_v + Σ_j max(0, max_o e_jo − (μ_g − ρ_v) n_o)``
    (formulations/fairshare.md, "B2L"), the least value met before ``stop`` (+inf with no
    time), and the multipliers ``(μ_g, ρ_v)`` that give it. It is B3L's Lagrangian with no
    restart or host costs and ``λ = 1`` (the L2 row as the objective), negated: ``μ`` from
    B2's ``prices`` (where ``ρ = 0`` gives B2 itself), then each ``μ_g`` alone by golden
    sections, ``ρ`` exactly enough at each point."""
    a = arrays(data) if a is None else a
    units = len(need)
    if not len(a.unit):
        return 0.0, np.zeros(len(a.capacity)), np.zeros(units)
    if len(prices) != len(a.capacity):
        prices = np.zeros(len(a.capacity))
    mu = np.asarray(prices, dtype=np.float64).copy()
    if stop.expired():
        return math.inf, mu, np.zeros(units)
    plain = Arrays(
        a.unit, a.n, a.eff, a.gtype, np.where(np.isfinite(a.base), 0.0, np.inf), a.capacity, 0.0
    )
    near: list[np.ndarray | None] = [None]
    found: dict[float, np.ndarray] = {}

    def at(mu: np.ndarray) -> float:
        # the lower bound on min −L2 at (1, μ, ρ): its negation bounds L2 from above
        value, rho = lagrangian(plain, need, 0.0, 1.0, mu, near[0])
        near[0] = found[value] = rho
        return value

    best = at(mu)
    best_rho = found[best]
    for g in range(len(mu)):
        if stop.expired():
            break

        def with_price(p: float, g: int = g) -> float:
            trial = mu.copy()
            trial[g] = p
            return at(trial)

        value, price = golden(with_price, 0.0, 2.0 * mu[g] + 1e-3, SCALE_STEPS, stop)
        if value > best:
            best, mu[g], best_rho = value, price, found[value]
    return -best, mu, best_rho


__all__ = ["l2_prices"]
