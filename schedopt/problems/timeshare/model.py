"""The time-share LP, written once (formulations/timeshare.md, C1–C3, levels 1–2).

Variables: x[c] the fraction of the round column c (a combination on one GPU type) runs, and
t the policy's level-1 value. Rows go over as CSR arrays built with numpy: a model of 2,048
jobs × 3 types is built in milliseconds, with no per-term Python object.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedopt.core.stopping import Deadline
from schedopt.model import Built, Expr, Level, Model, Sense, VarKind, Vars

from .columns import Columns
from .data import TimeshareData

#: Level 2 keeps t within this much (relative) of level 1's optimum: CBC's text solution
#: carries 8 significant digits, so 1e-9 made L2 infeasible there (CBC's values are now read
#: at full precision, backends/cbc.py; the tolerance, and so every golden's level 2, stays).
L1_REL_TOL = 1e-7
#: HiGHS and CBC agree on every level within this (relative, max(1, |value|)): both read
#: level 1 at full precision, so level 2 is optimised under the same fixing row (#16;
#: measured: 7.5e-12 on the goldens, 5e-12 on 300 generated rounds).
BACKENDS_AGREE = 1e-9


@dataclass(frozen=True)
class TimeshareModel(Built):
    x: Vars
    t: Vars
    columns: Columns
    #: a_j, the policy's weight of each job in C3.
    weights: np.ndarray


def csr(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n: int):
    """Row starts, columns and values of the triplets, grouped by row (0..n-1)."""
    order = np.argsort(rows, kind="stable")
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=starts[1:])
    return starts, cols[order], vals[order]


def build_model(
    data: TimeshareData,
    weights: np.ndarray,
    columns: Columns | None = None,
    deadline: Deadline | None = None,
    levels: int = 2,
) -> TimeshareModel:
    cols = data.singles if columns is None else columns
    m = Model("timeshare", deadline)
    x = m.add_vars(
        "x",
        zip(cols.first.tolist(), cols.second.tolist(), cols.type.tolist(), strict=True),
        VarKind.CONTINUOUS,
        0.0,
        1.0,
    )
    t = m.add_vars("t", [()], VarKind.CONTINUOUS, 0.0, np.inf)
    n_jobs, t_col = data.num_jobs, t[()]
    # a row is a job or a class of identical jobs; ``time`` is a job's time in the column per
    # unit of x (1, or its partners in a class pair: formulations/timeshare.md, C1')
    jobs, member_cols, time, rates = cols.member_terms(x.start)

    # C1 time: a job runs at most the whole round, alone or sharing.
    starts, c1_cols, c1_vals = csr(jobs, member_cols, time, n_jobs)
    m.add_rows("C1", starts, c1_cols, c1_vals, -np.inf, 1.0)
    # C2 capacity: s_c GPUs of the type per column; a pair counts once.
    starts, c2_cols, c2_vals = csr(
        cols.type, np.arange(len(cols), dtype=np.int64) + x.start, cols.gpus, data.num_types
    )
    m.add_rows("C2", starts, c2_cols, c2_vals, -np.inf, data.capacity)
    # C3 level: t − a_j Σ T_{j,c} x_c ≤ 0 (t is the minimum of the weighted throughputs).
    starts, c3_cols, c3_vals = csr(jobs, member_cols, -weights[jobs] * time * rates, n_jobs)
    with_t = np.insert(c3_cols, starts[1:], t_col)  # t last in every row
    with_t_vals = np.insert(c3_vals, starts[1:], 1.0)
    m.add_rows("C3", starts + np.arange(n_jobs + 1), with_t, with_t_vals, -np.inf, 0.0)

    # L1: the policy's value; L2: the mean weighted throughput among L1's optima (the
    # throughput-blind policy: the mean perf-normalised throughput, data.level2_terms).
    m.add_level(Level("L1", Expr.of([t_col], [1.0]), Sense.MAXIMIZE, 0.0, L1_REL_TOL))
    if levels < 2:
        return TimeshareModel(m, data, x, t, cols, weights)
    l2 = np.zeros(len(cols))
    # m_j jobs per row after aggregation (data.aggregate): the mean is over every job
    k = member_cols - x.start
    np.add.at(
        l2, k, data.counts[jobs] * time * data.level2_terms(weights, jobs, cols.type[k], rates)
    )
    l2 /= max(1, data.total_jobs)
    m.add_level(Level("L2", Expr.of(np.arange(len(cols)) + x.start, l2), Sense.MAXIMIZE, 0.0, 1e-9))
    return TimeshareModel(m, data, x, t, cols, weights)
