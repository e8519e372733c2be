"""Random cases of exact pricing and their brute force (tests only), from the case model's
rows as formulations/cosched.md states them ("R' and exact pricing"), sharing no code with
the package's case model."""

from __future__ import annotations

import itertools
import math

import numpy as np


def random_case(
    seed: int,
    universal: bool = False,
    *,
    jobs: int,
    pools: int,
    slo_span: tuple[int, int],
    pi_least: float,
):
    """A random case of ``jobs`` jobs × 3 combinations on ``pools`` pools, with repeated and
    dominated combinations likely (small whole numbers); SLOs in ``level - slo_span[0]`` to
    ``level + slo_span[1]`` (exclusive), π from ``pi_least`` to 5; ``universal``: every
    combination uses pool 1 (as the generator's train phase uses H800)."""
    rng = np.random.default_rng(seed)
    n, K, P = jobs, 3, pools
    items = np.arange(n)
    duration = rng.integers(0, 4, (n, K, P)) * 10
    if universal:
        duration[..., 1] = rng.integers(1, 4, (n, K)) * 10
    switch = rng.integers(0, 3, n) * 5
    load = duration + np.where(duration > 0, switch[:, None, None], 0)
    mem = rng.integers(0, 3, (n, K, P)) * 100
    chain = duration.sum(axis=2) + rng.integers(0, 2, (n, K)) * 10
    ok = rng.random((n, K)) < 0.85
    level = int(rng.integers(40, 90))
    slo = rng.integers(level - slo_span[0], level + slo_span[1], n)
    factor = 1 + rng.integers(0, 2, n)
    pi = rng.uniform(pi_least, 5.0, n)
    room = rng.integers(1, 4, P) * 150
    return pi, items, ok, duration, load, mem, chain, slo, factor, switch, level, room


def fits(pi, items, ok, duration, load, mem, chain, slo, factor, switch, level, room, chosen):
    """Whether the items' combinations ``chosen`` ((item, combination) pairs) form a group of
    the case, from the rows as the formulation states them: a cycle T ≤ ℓ within every
    member's SLO (R4), the step chains (R5), each pool's phases within T and, with two users,
    their switches too (R3'; one user may exceed T by the largest switch, its own not being
    paid), memory (R2)."""
    s_bar = int(switch[items].max())
    if any(not ok[i, c] for i, c in chosen):
        return False
    hi = min([level] + [int(slo[items[i]]) for i, _ in chosen])
    lo = max([0] + [math.ceil(chain[i, c] / factor[items[i]]) for i, c in chosen])
    fit = True
    for p in range(duration.shape[2]):
        users = sum(load[i, c, p] > 0 for i, c in chosen)
        d = sum(int(duration[i, c, p]) for i, c in chosen)
        ld = sum(int(load[i, c, p]) for i, c in chosen)
        lo = max(lo, d, ld if users >= 2 else ld - s_bar)
        fit &= sum(int(mem[i, c, p]) for i, c in chosen) <= room[p]
    return bool(fit and lo <= hi)


def best_group(case, members: int = 0) -> float:
    """The case's most Σ π over groups of at least ``members`` members, by enumeration of
    every job's combination (or none) (:func:`fits`); 0 if none."""
    pi, items, ok = case[:3]
    best = 0.0
    for pick in itertools.product(range(-1, ok.shape[1]), repeat=len(items)):
        chosen = [(i, c) for i, c in enumerate(pick) if c >= 0]
        if len(chosen) >= members and fits(*case, chosen):
            best = max(best, float(sum(pi[items[i]] for i, _ in chosen)))
    return best
