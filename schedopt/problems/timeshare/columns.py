"""Columns of the time-share LP: a combination on one GPU type (formulations/timeshare.md).

A column's members are rows of the model: jobs, or classes of identical jobs after
``data.aggregate``. ``time_first``/``time_second`` say how much of the round each job of the
member row spends in the column per unit of x (1 for a job alone or a pair of jobs; for a
class pair, the number of partners each job has in the other class), so C1, C3 and level 2
read the same arrays whether a row is a job or a class ("Identical jobs" in the formulation).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Columns:
    """``first``/``second`` are member rows (``second`` = -1 for a job alone, = ``first`` for
    pairs of two jobs of one class), ``type`` the GPU type index, ``gpus`` the GPUs the column
    holds per unit of x, ``rate_first``/``rate_second`` the members' throughputs T_{j,cw} (0
    for a missing second member), ``time_first``/``time_second`` the members' time per unit
    of x (0 for a missing second member)."""

    first: np.ndarray
    second: np.ndarray
    type: np.ndarray
    gpus: np.ndarray
    rate_first: np.ndarray
    rate_second: np.ndarray
    time_first: np.ndarray
    time_second: np.ndarray

    def __len__(self) -> int:
        return len(self.first)

    def take(self, idx: np.ndarray) -> Columns:
        return Columns(*(getattr(self, f)[idx] for f in _FIELDS))

    @staticmethod
    def concat(parts: list[Columns]) -> Columns:
        return Columns(*(np.concatenate([getattr(p, f) for p in parts]) for f in _FIELDS))

    @staticmethod
    def alone(rows: np.ndarray, types: np.ndarray, gpus: np.ndarray, rates: np.ndarray):
        """Jobs (or classes) alone: one member, time 1."""
        n = len(rows)
        return Columns(
            rows, np.full(n, -1), types, gpus, rates, np.zeros(n), np.ones(n), np.zeros(n)
        )

    @staticmethod
    def empty() -> Columns:
        none = np.zeros(0, dtype=np.int64)
        return Columns(none, none, none, *(np.zeros(0) for _ in range(5)))

    def member_terms(self, offset: int = 0):
        """(row, column, time, throughput) of every member entry (a class pair of one class
        has a single entry: its row's time counts both sides)."""
        idx = np.arange(len(self), dtype=np.int64) + offset
        two = self.time_second > 0
        rows = np.concatenate([self.first, self.second[two]])
        cols = np.concatenate([idx, idx[two]])
        time = np.concatenate([self.time_first, self.time_second[two]])
        rates = np.concatenate([self.rate_first, self.rate_second[two]])
        return rows, cols, time, rates


_FIELDS = (
    "first",
    "second",
    "type",
    "gpus",
    "rate_first",
    "rate_second",
    "time_first",
    "time_second",
)

#: (type index, type index) → (W × 2) rates of the first type's job and the second's.
ColocationTable = dict[tuple[int, int], np.ndarray]


def class_pair_columns(
    row_type: np.ndarray,
    counts: np.ndarray,
    order: np.ndarray,
    scale: np.ndarray,
    capacity: np.ndarray,
    table: ColocationTable,
    tick: Callable[[], None],
) -> Columns:
    """Every pair of rows whose types have an entry in ``table``, on every GPU type where both
    run and the gang fits (C4). ``order`` (each row's first job) orients a pair of one type:
    the earlier job takes the first rate. A class of m ≥ 2 jobs pairs with itself (m(m−1)/2
    pairs, each job with m − 1 partners; ``aggregate`` forms such classes only where the
    type's two rates are equal)."""
    by_type: dict[int, np.ndarray] = {}
    ranked = np.argsort(order, kind="stable")
    for t in np.unique(row_type[row_type >= 0]).tolist():
        by_type[t] = ranked[row_type[ranked] == t]
    firsts, seconds, rate_a, rate_b, pairs_n, time_a, time_b = [], [], [], [], [], [], []
    for (ta, tb), rates in table.items():
        a, b = by_type.get(ta), by_type.get(tb)
        if a is None or b is None:
            continue
        if ta == tb:
            i, j = np.triu_indices(len(a), k=1)
            k, m = a[i], a[j]
            twins = a[counts[a] >= 2]  # a class with itself
            k, m = np.concatenate([k, twins]), np.concatenate([m, twins])
        else:
            k, m = np.repeat(a, len(b)), np.tile(b, len(a))
        same = k == m
        firsts.append(k)
        seconds.append(m)
        rate_a.append(np.broadcast_to(rates[:, 0], (len(k), len(rates))))
        rate_b.append(np.broadcast_to(rates[:, 1], (len(k), len(rates))))
        # partners of each job of k among m's jobs, and the number of job pairs
        time_a.append(np.where(same, counts[k] - 1, counts[m]))
        time_b.append(np.where(same, 0.0, counts[k]))
        pairs_n.append(np.where(same, counts[k] * (counts[k] - 1) / 2, counts[k] * counts[m]))
        tick()
    if not firsts:
        return Columns.empty()
    k, m = np.concatenate(firsts), np.concatenate(seconds)
    ra, rb = np.concatenate(rate_a), np.concatenate(rate_b)
    n_pairs, ta_, tb_ = np.concatenate(pairs_n), np.concatenate(time_a), np.concatenate(time_b)
    fits = scale[k][:, None] <= capacity[None, :]
    pair, w = np.nonzero((ra > 0) & (rb > 0) & fits)
    return Columns(
        k[pair],
        m[pair],
        w,
        scale[k[pair]] * n_pairs[pair],
        ra[pair, w],
        rb[pair, w],
        ta_[pair].astype(np.float64),
        tb_[pair].astype(np.float64),
    )
