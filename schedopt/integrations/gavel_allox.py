"""Gavel's ``AlloXPolicy`` (``allox.py``, AlloX of Le et al., EuroSys'20) as a drop-in: each
round, the jobs not yet running are assigned to the free GPUs by a minimum-cost assignment
(exact: scipy's ``linear_sum_assignment``, as Gavel), and the first job of each GPU's queue
starts there and keeps it until it finishes (formulations/timeshare.md, "AlloX")."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from schedopt.core.errors import InvalidInstanceError

Key = Hashable
#: Gavel's stand-in for a rate of 0 (a job on a type it cannot use takes "forever").
ZERO_RATE = 1e-10


def assign(steps: np.ndarray, rates: np.ndarray, waited: np.ndarray) -> list[list[tuple[int, int]]]:
    """The minimum of Σ_i (k_i · R_i / T_{i,g_i} + τ_i) over placements of each job i on a GPU
    g_i at position k_i from the end of that GPU's queue (k = 1: last), ``rates`` jobs × GPUs:
    for each GPU, its (job, position from the front) in running order."""
    from scipy.optimize import linear_sum_assignment  # on first use: SciPy takes 0.2 s to load

    m, n = rates.shape
    if m == 0 or n == 0:
        return [[] for _ in range(n)]
    base = steps[:, None] / np.where(rates == 0.0, ZERO_RATE, rates)
    cost = np.concatenate([k * base for k in range(1, m + 1)], axis=1) + waited[:, None]
    rows, cols = linear_sum_assignment(cost)
    queues: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for i, c in zip(rows.tolist(), cols.tolist(), strict=True):
        queues[c % n].append((i, c // n))
    # the job with the most jobs after it (the largest multiplier) runs first
    return [[(i, len(q) - 1 - k) for i, k in sorted(q, key=lambda e: -e[1])] for q in queues]


class AlloX:
    """``AlloXPolicy`` (``AlloX_Perf``): ``alpha`` limits the jobs considered to the
    ``max(alpha · waiting, free GPUs)`` that have waited longest. Scale factors must be 1."""

    name = "AlloX_Perf"

    def __init__(self, alpha: float = 1.0):
        self.alpha = float(alpha)
        self._previous: dict[Key, dict[str, float]] = {}

    def get_allocation(
        self,
        throughputs: Mapping[Key, Mapping[str, Any]],
        scale_factors: Mapping[Key, int],
        times_since_start: Mapping[Key, float],
        num_steps_remaining: Mapping[Key, float],
        cluster_spec: Mapping[str, int],
    ) -> dict[Key, dict[str, float]] | None:
        if not throughputs:
            return None
        bad = [k for k in throughputs if int(scale_factors[k]) != 1]
        if bad:
            raise InvalidInstanceError(
                "scale_factors", f"AlloX runs one-GPU jobs only; job {bad[0]!r} has more"
            )
        types = sorted(next(iter(throughputs.values())))
        running = [k for k in throughputs if sum(self._previous.get(k, {}).values()) == 1.0]
        waiting = [k for k in throughputs if k not in set(running)]
        gpus: list[str] = []
        for w in types:
            busy = sum(1 for k in running if self._previous[k].get(w) == 1.0)
            gpus += [w] * (int(cluster_spec[w]) - busy)
        waiting.sort(key=lambda k: -float(times_since_start[k]))  # longest waiting first
        waiting = waiting[: max(int(self.alpha * len(waiting)), len(gpus))]
        rates = np.array([[float(throughputs[k][w]) for w in gpus] for k in waiting])
        queues = assign(
            np.array([float(num_steps_remaining[k]) for k in waiting]),
            rates.reshape(len(waiting), len(gpus)),
            np.array([float(times_since_start[k]) for k in waiting]),
        )
        out = {k: dict.fromkeys(cluster_spec, 0.0) for k in throughputs}
        for k in throughputs:
            if k in self._previous:
                out[k] = dict(self._previous[k])
        for g, queue in enumerate(queues):
            if queue:
                out[waiting[queue[0][0]]][gpus[g]] = 1.0
        self._previous = out
        return {k: dict(v) for k, v in out.items()}


AlloXPolicy = AlloX
