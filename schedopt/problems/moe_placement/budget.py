"""The replica budget split over the layers exactly: a multiple-choice knapsack by dynamic
programming over whole replicas (the layer bound's curves; "Bounds" in the formulation).

``curves[l][k]`` is non-increasing in ``k`` (a lower bound on layer ``l``'s max load with ``k``
replicas beyond one copy of each expert); the table answers, for every budget ``b`` up to the
one given, ``min Σ_l curves[l][k_l]`` over ``Σ_l k_l ≤ b``, and one minimiser.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedopt.core.stopping import Deadline


@dataclass(frozen=True)
class BudgetTable:
    value: np.ndarray  # (budget + 1,) the minimum for each budget
    choice: np.ndarray  # (layers, budget + 1) k of each layer at the optimum of its prefix
    lengths: tuple[int, ...]

    def split(self, budget: int) -> np.ndarray:
        """The k of every layer at the optimum for ``budget``."""
        b = min(budget, len(self.value) - 1)
        ks = np.zeros(len(self.lengths), dtype=np.int64)
        for i in range(len(self.lengths) - 1, -1, -1):
            ks[i] = self.choice[i, b]
            b -= int(ks[i])
        return ks


def table_cells(curves: list[np.ndarray], budget: int) -> int:
    """Cells of the table: budgets × the points where the curves drop (its cost)."""
    budget = max(0, int(budget))
    return (budget + 1) * sum(int((np.diff(c[: budget + 1]) < 0).sum()) + 1 for c in curves)


def budget_table(
    curves: list[np.ndarray], budget: int, stop: Deadline | None = None
) -> BudgetTable | None:
    """The table (module docstring); its cost is :func:`table_cells` (70 M cells, 0.45 s at
    DeepSeek-V3's 58 layers on 256 GPUs). None when ``stop`` passes (checked between layers)."""
    budget = max(0, int(budget))
    lengths = tuple(min(len(c), budget + 1) for c in curves)
    value = np.zeros(budget + 1)
    choice = np.zeros((len(curves), budget + 1), dtype=np.int32)
    for i, c in enumerate(curves):
        if stop is not None and stop.expired():
            return None
        new = np.full(budget + 1, np.inf)
        pick = np.zeros(budget + 1, dtype=np.int32)
        # only where the curve drops: a plateau's later points cost more for the same value
        drops = np.flatnonzero(np.r_[True, np.diff(c[: lengths[i]]) < 0])
        for k in drops.tolist():
            cand = value[: budget + 1 - k] + float(c[k])
            better = cand < new[k:]
            new[k:][better] = cand[better]
            pick[k:][better] = k
        # value (a prefix's optimum) is non-increasing in the budget, so new is too
        value, choice[i] = new, pick
    return BudgetTable(value, choice, lengths)
