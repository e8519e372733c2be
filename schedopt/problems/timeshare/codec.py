"""Points of the model ↔ solutions: the only place that knows the column layout."""

from __future__ import annotations

import numpy as np

from .columns import Columns
from .data import TimeshareData
from .model import TimeshareModel
from .solution import Shares, TimeshareSolution

#: Fractions below this (3.6 µs of an hour round) are solver noise, not a decision. At 1e-7
#: (while CBC's values carried 8 digits) a dropped share moved level 2 by 4e-6 and level 1
#: past its stated tolerance (#16, tests/timeshare/test_backends_agree.py).
MIN_FRACTION = 1e-9


def shares_of(data: TimeshareData, columns: Columns, x: np.ndarray) -> TimeshareSolution:
    """The solution of fractions ``x`` over ``columns`` (clipped to [0, 1]), as arrays. A
    column of classes gives every job of its class (every job pair of its class pair) the
    fraction."""
    x = within_rows(data, columns, np.clip(x, 0.0, 1.0))
    kept = np.flatnonzero(x > MIN_FRACTION)
    first, second = columns.first[kept], columns.second[kept]
    types, fraction = columns.type[kept], x[kept]
    if data.row_of_job is not None:  # a row is a class of identical jobs (aggregate)
        first, second, picks = _combinations(data.members(), first, second)
        types, fraction = types[picks], fraction[picks]
    jobs = tuple(data.instance.job_index)  # every job's id, in the instance's order
    return TimeshareSolution.of_arrays(Shares(jobs, data.types, first, second, types, fraction))


def _combinations(
    members: list[np.ndarray], first: np.ndarray, second: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (job, partner) combinations of columns of rows, and the column of each: every job
    of the row alone, every job pair of a class pair, every two jobs of one class (-1: no
    partner)."""
    jobs, partners, picks = [], [], []
    for c, (a_row, b_row) in enumerate(zip(first.tolist(), second.tolist(), strict=True)):
        a = members[a_row]
        if b_row < 0:
            j, k = a, np.full(len(a), -1)
        elif b_row == a_row:
            i, m = np.triu_indices(len(a), k=1)
            j, k = a[i], a[m]
        else:
            b = members[b_row]
            j, k = np.repeat(a, len(b)), np.tile(b, len(a))
        jobs.append(j)
        partners.append(k)
        picks.append(np.full(len(j), c))
    if not jobs:
        none = np.zeros(0, dtype=np.int64)
        return none, none, none
    return np.concatenate(jobs), np.concatenate(partners), np.concatenate(picks)


def within_rows(data: TimeshareData, columns: Columns, x: np.ndarray) -> np.ndarray:
    """``x`` scaled down where a solver's point exceeds C1 or C2 by its tolerance: CBC's
    solution, read through PuLP with 8 significant digits, ran two jobs of a pair round
    1.6e-6 over the round (the fuzz run of benchmarks/fuzz_inputs.py). Scaling a column
    down keeps every other row; the objective moves by as little."""
    jobs, cols, time, _ = columns.member_terms()
    used = np.bincount(jobs, weights=time * x[cols], minlength=data.num_jobs)
    per_row = 1.0 / np.maximum(used, 1.0)  # C1: a row (job) over the round shrinks to it
    factor = per_row[columns.first]
    two = columns.second >= 0
    factor[two] = np.minimum(factor[two], per_row[columns.second[two]])
    x = x * factor
    used = np.bincount(columns.type, weights=columns.gpus * x, minlength=data.num_types)
    x = x * np.minimum(1.0, data.capacity / np.maximum(used, 1e-300))[columns.type]  # C2
    return x


def decode(tm: TimeshareModel, values: np.ndarray) -> TimeshareSolution:
    return shares_of(tm.data, tm.columns, values[tm.x.cols])


def throughputs(columns: Columns, x: np.ndarray, num_jobs: int) -> np.ndarray:
    """ρ_j of every job at fractions ``x`` over ``columns``."""
    jobs, cols, time, rates = columns.member_terms()
    return np.bincount(jobs, weights=time * rates * x[cols], minlength=num_jobs)


def encode(tm: TimeshareModel, sol: TimeshareSolution) -> np.ndarray:
    """A solution as a point of the model (t at the minimum it implies); shares on columns the
    model lacks are dropped."""
    data, cols = tm.data, tm.columns
    index = {w: k for k, w in enumerate(data.types)}
    jobs = data.instance.job_index
    where = {
        key: c
        for c, key in enumerate(
            zip(cols.first.tolist(), cols.second.tolist(), cols.type.tolist(), strict=True)
        )
    }
    x = np.zeros(len(cols))
    for s in sol.shares:
        first = jobs.get(s.job)
        second = -1 if s.with_job is None else jobs.get(s.with_job)
        if first is None or second is None or s.worker_type not in index:
            continue
        c = where.get((first, second, index[s.worker_type]))
        if c is None:
            c = where.get((second, first, index[s.worker_type]))
        if c is not None:
            x[c] = s.fraction
    point = np.zeros(tm.model.num_cols)
    point[tm.x.cols] = x
    point[tm.t[()]] = float(np.min(tm.weights * throughputs(cols, x, data.num_jobs)))
    return point
