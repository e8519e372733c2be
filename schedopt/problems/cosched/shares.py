"""Farley's bound at duals made of the aggregate bound's shares (formulations/cosched.md,
"Farley at the aggregate shares"): the shares scaled (:func:`scaled_aggregate`), and mixed
with a master's duals (:func:`best_farley`). Each is valid (Farley holds for any duals)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from schedopt.core.stopping import Deadline
from schedopt.executor import Executor

from .data import ModelData, aggregate_shares
from .farley import CaseState, Combos, farley_bound

#: The scaled aggregate bound is tried when no round's bound is this many times the
#: aggregate one (θ* = 1.26 at 656 GPUs × 40 jobs, where the rounds reach 860–880 against 649,
#: and 1.0325 at 4,096 × 200, where they reach 2,800–2,830 against 2,797 and it gives 2,888).
AGG_FLOOR = 1.1
#: The aggregate shares are scaled by this before Farley's θ (capped at 1) is taken over R':
#: above θ's own value at the shares (1.26 at 656 GPUs x 40 jobs, 1.03 at 4,096 x 200, #17).
AGG_SCALE = 1.5


def scaled_aggregate(
    data: ModelData,
    deadline: Deadline,
    combos: list[Combos] | None = None,
    state: CaseState | None = None,
    executor: Executor | None = None,
) -> float | None:
    """Farley's bound at the duals ``(s π_agg, 0)``, ``s`` = :data:`AGG_SCALE`: at least the
    aggregate bound when ``θ`` at ``(π_agg, 0)`` is 1 (its shares are dual feasible over R'),
    and ``min(s, θ_1)`` times it in general (formulation); None if out of time. ``executor``:
    the case models on its workers (:func:`.refine.parallel`)."""
    shares = aggregate_shares(data)
    if shares is None or sum(shares) <= 0:
        return None
    pi = AGG_SCALE * np.array(shares)
    return farley_bound(
        data, pi, np.zeros(len(data.pools)), deadline, deadline, None, combos, state, executor
    )


def could_raise(
    data: ModelData,
    bound: float | None,
    lp: float,
    groups: Iterable[tuple[float, Iterable[int]]] = (),
) -> bool:
    """The scaled aggregate bound could be above ``bound``. It is ``min(s, θ*)`` times the
    aggregate bound, at most ``z_R'`` (at most a restricted master's LP value ``lp``, formulation
    "The stop rule"), and ``θ* ≤ c(S) / Σ_{j∈S} π^agg_j`` for every group ``S`` of R' (``θ*`` is
    the least such ratio): ``groups``, (cost, member jobs) of scheduled groups, so of R'
    (formulation, "Farley at the aggregate shares")."""
    shares = aggregate_shares(data)
    if shares is None or sum(shares) <= 0:
        return False
    theta = AGG_SCALE
    for cost, members in groups:
        share = sum(shares[j] for j in members)
        if share > 1e-12:
            theta = min(theta, cost / share)
    top = min(theta * sum(shares), lp)
    return bound is None or bound < (1 - 1e-4) * top


#: Weights α of the master's duals in the duals the Farley bound is tried with, the rest on
#: the aggregate bound's shares (which alone give back the aggregate bound); first found best
#: on 656 GPUs × 40 jobs (benchmarks/RESULTS.md, #17).
MIXES = (0.25, 0.1, 0.5)


def best_farley(data: ModelData, pi: np.ndarray, y: np.ndarray, deadline: Deadline) -> float | None:
    """The best Farley bound over the duals ``α (π, y) + (1 − α) (π_agg, 0)`` of :data:`MIXES`
    (each one is valid: Farley holds for any duals), tried while ``deadline`` allows."""
    shares = aggregate_shares(data)
    if shares is None:
        return None
    agg = np.array(shares)
    best = None
    for a in MIXES:
        b = farley_bound(data, a * pi + (1 - a) * agg, a * y, deadline)
        if b is not None and (best is None or b > best):
            best = b
    return best
