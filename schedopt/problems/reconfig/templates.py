"""Pipeline templates (formulations/reconfig.md, "The plan space"): for each (stages p, TP t,
slow factor κ, slow position j) the contiguous layer partition with the smallest max stage time
that fits memory (C3, C4, C5). Layers are uniform, so a partition is a list of stage sizes and
the search is over one number, the target stage time: stage i can take at most ``n_i(τ)``
layers; τ is feasible when every ``n_i(τ) ≥ 1`` and ``Σ n_i(τ) ≥ L``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .cost import CostModel

#: Called once per stage bound computed (data.build_data passes a deadline Ticker).
Tick = Callable[[], None]


def _no_tick() -> None:
    return None


@dataclass(frozen=True)
class Template:
    p: int
    t: int
    kappa: float  # 1.0: every stage healthy
    slow_at: int | None  # the stage holding the slow GPU
    sizes: tuple[int, ...]  # layers per stage
    tau: int  # µs, max stage time per micro-batch (C5)
    sync: int  # µs, the DP all-reduce (C8)

    @property
    def gpus(self) -> int:
        return self.p * self.t

    def ranges(self) -> list[tuple[int, int]]:
        out, at = [], 0
        for n in self.sizes:
            out.append((at, at + n))
            at += n
        return out


def _max_layers(cost: CostModel, i: int, p: int, t: int, kappa: float, tau: int) -> int:
    """Most layers stage ``i`` of ``p`` can hold within ``tau`` µs and its memory (C4, C5)."""
    return cost.max_layers(i == 0, i == p - 1, t, p, kappa, tau, p - i)


def best_partition(
    cost: CostModel, p: int, t: int, kappa: float = 1.0, slow_at: int | None = None
) -> tuple[tuple[int, ...], int] | None:
    """(stage sizes, max stage time) of the best partition with the slow stage at ``slow_at``
    (None: all healthy), or None if no partition fits."""
    found = _search(cost, p, t, kappa, [slow_at], _no_tick)
    return None if found is None else found[:2]


def _search(
    cost: CostModel, p: int, t: int, kappa: float, positions: list[int | None], tick: Tick
) -> tuple[tuple[int, ...], int, int | None] | None:
    """The smallest target time τ for which some slow position admits a partition (every stage
    ≥ 1 layer, ``Σ n_i(τ) ≥ L``), by bisection over integer τ; then the first such position
    and its partition (layers given back from the first stages, the most loaded in memory)."""
    L = cost.layers
    if p > L:
        return None

    def caps(tau: int, kap: float) -> list[int]:
        out = []
        for i in range(p):
            tick()
            out.append(_max_layers(cost, i, p, t, kap, tau))
        return out

    def position(tau: int) -> tuple[int | None, list[int]] | None:
        healthy = caps(tau, 1.0)
        slow = caps(tau, kappa) if kappa < 1.0 else healthy
        total = sum(healthy)
        for j in positions:
            tick()
            c = healthy if j is None else [*healthy[:j], slow[j], *healthy[j + 1 :]]
            if min(c) >= 1 and (total if j is None else total - healthy[j] + slow[j]) >= L:
                return j, c
        return None

    # no stage is slower than every layer on the last stage (output layer) at the slow factor:
    # an upper end for the bisection, O(1) rather than O(p²) stage times
    slowest = kappa if any(j is not None for j in positions) else 1.0
    hi = cost.stage_us(L, True, True, t, p, slowest)
    if position(hi) is None:
        return None  # memory: no target time helps
    lo = 1
    while lo < hi:
        mid = (lo + hi) // 2
        if position(mid) is None:
            lo = mid + 1
        else:
            hi = mid
    found = position(lo)
    assert found is not None
    j, sizes = found
    extra = sum(sizes) - L
    for i in range(p):
        give = min(extra, sizes[i] - 1)
        sizes[i] -= give
        extra -= give
    tau = max(
        cost.stage_us(n, i == 0, i == p - 1, t, p, kappa if i == j else 1.0)
        for i, n in enumerate(sizes)
    )
    return tuple(sizes), tau, j


def make_template(
    cost: CostModel, p: int, t: int, kappa: float = 1.0, tick: Tick = _no_tick
) -> Template | None:
    """The template (p, t, κ): for κ < 1 the best slow position (smallest τ, then first).
    ``tick`` is called in every loop (a deadline check)."""
    positions: list[int | None] = [None] if kappa >= 1.0 else list(range(p))
    found = _search(cost, p, t, kappa, positions, tick)
    if found is None:
        return None
    sizes, tau, j = found
    return Template(p, t, kappa, j, sizes, tau, cost.sync_us(p * t))
