"""Gavel's throughput-sum policies as one exact LP (formulations/timeshare.md, "Throughput
sum"): ``ThroughputSumWithPerf``, ``ThroughputNormalizedByCostSum_Perf`` and ``..._PerfSLOs``.

maximise Σ_j Σ_w (T_jw / c_w) x_jw over Gavel's base polytope (C1 time, C2 capacity with
s_j GPUs per unit, 0 ≤ x ≤ 1), with ρ_j ≥ R_j / SLO_j for the jobs given an SLO. Arrays in,
arrays out: the dicts are the drop-in's business (schedopt.integrations.gavel).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedopt.core.options import SolveOptions
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.model import ExactBackend, Expr, Hooks, Level, Model, Sense, VarKind, solve_levels
from schedopt.model.method import emit

from .columns import Columns
from .model import csr

#: Rows of the answer are checked against the polytope to this (absolute) tolerance.
ROW_TOL = 1e-6


@dataclass(frozen=True)
class SumResult:
    status: Status
    #: x[j, w], or None without a proven optimum.
    x: np.ndarray | None
    objective: float | None
    #: False when the SLO rows made the LP infeasible and were dropped (as Gavel does).
    slos_kept: bool = True


def build(
    rates: np.ndarray,
    scale: np.ndarray,
    capacity: np.ndarray,
    costs: np.ndarray,
    min_rate: np.ndarray | None,
    deadline: Deadline | None = None,
) -> Model:
    """The LP of ``rates`` (jobs × types), ``scale`` s_j, ``capacity`` N_w, ``costs`` c_w and
    ``min_rate`` (R_j/SLO_j, NaN: no SLO)."""
    m, n = rates.shape
    model = Model("throughput_sum", deadline)
    x = model.add_vars("x", [(j, w) for j in range(m) for w in range(n)], VarKind.CONTINUOUS, 0, 1)
    cols = np.arange(m * n, dtype=np.int64) + x.start
    job = np.repeat(np.arange(m), n)
    kind = np.tile(np.arange(n), m)
    # C1 time: Σ_w x_jw ≤ 1
    starts, c1, v1 = csr(job, cols, np.ones(m * n), m)
    model.add_rows("C1", starts, c1, v1, -np.inf, 1.0)
    # C2 capacity: Σ_j s_j x_jw ≤ N_w
    starts, c2, v2 = csr(kind, cols, scale[job].astype(float), n)
    model.add_rows("C2", starts, c2, v2, -np.inf, capacity.astype(float))
    if min_rate is not None:
        slo = np.flatnonzero(~np.isnan(min_rate))
        if len(slo):
            # SLO: ρ_j = Σ_w T_jw x_jw ≥ R_j / SLO_j
            sel = np.isin(job, slo)
            rank = np.searchsorted(slo, job[sel])
            starts, c3, v3 = csr(rank, cols[sel], rates.reshape(-1)[sel], len(slo))
            model.add_rows("SLO", starts, c3, v3, min_rate[slo], np.inf)
    gain = (rates / costs[None, :]).reshape(-1)
    model.add_level(Level("L1", Expr.of(cols, gain), Sense.MAXIMIZE, 0.0, 1e-9))
    return model


def solve_sum(
    rates: np.ndarray,
    scale: np.ndarray,
    capacity: np.ndarray,
    costs: np.ndarray | None = None,
    min_rate: np.ndarray | None = None,
    time_limit_s: float = 60.0,
) -> SumResult:
    """The exact optimum on HiGHS; with SLOs that no allocation meets, the optimum without
    them (Gavel's fallback), with ``slos_kept`` False."""
    deadline = Deadline.after(time_limit_s)
    costs = np.ones(rates.shape[1]) if costs is None else costs
    gain = rates / costs[None, :]
    out = _run(build(rates, scale, capacity, costs, min_rate, deadline), rates.shape, deadline)
    kept = True
    if out.status is Status.INFEASIBLE and min_rate is not None:
        model = build(rates, scale, capacity, costs, None, deadline)
        out, kept = _run(model, rates.shape, deadline), False
    value = None if out.x is None else float((gain * out.x).sum())
    return SumResult(out.status, out.x, value, slos_kept=kept)


def _run(model: Model, shape: tuple[int, int], deadline: Deadline) -> SumResult:
    left = deadline.remaining()
    if left <= 0:
        return SumResult(Status.NO_SOLUTION, None, None)
    options = SolveOptions(time_limit_s=left)
    session = emit(model, ExactBackend.HIGHS, options, Hooks(), deadline)
    try:
        lex = solve_levels(model, session, options, deadline, Hooks())
    finally:
        session.close()
    if lex.values is None or lex.status is not Status.OPTIMAL:
        return SumResult(lex.status, None, None)
    x = np.clip(np.asarray(lex.values[: shape[0] * shape[1]]), 0.0, 1.0).reshape(shape)
    return SumResult(Status.OPTIMAL, x, None)


def build_packed(
    columns: Columns,
    num_jobs: int,
    capacity: np.ndarray,
    costs: np.ndarray,
    min_rate: np.ndarray | None,
    deadline: Deadline | None = None,
) -> Model:
    """The same LP over combinations (jobs alone and pairs, ``columns`` of data.py): C1 and
    C2 of model.py, the SLO rows on each job's throughput summed over its columns."""
    model = Model("throughput_sum_packed", deadline)
    x = model.add_vars("x", [(c,) for c in range(len(columns))], VarKind.CONTINUOUS, 0, 1)
    jobs, cols, time, rates = columns.member_terms(x.start)
    starts, c1, v1 = csr(jobs, cols, time, num_jobs)
    model.add_rows("C1", starts, c1, v1, -np.inf, 1.0)
    own = np.arange(len(columns), dtype=np.int64) + x.start
    starts, c2, v2 = csr(columns.type, own, columns.gpus.astype(float), len(capacity))
    model.add_rows("C2", starts, c2, v2, -np.inf, capacity.astype(float))
    if min_rate is not None:
        slo = np.flatnonzero(~np.isnan(min_rate))
        sel = np.isin(jobs, slo)
        if len(slo):
            rank = np.searchsorted(slo, jobs[sel])
            starts, c3, v3 = csr(rank, cols[sel], (time * rates)[sel], len(slo))
            model.add_rows("SLO", starts, c3, v3, min_rate[slo], np.inf)
    # a pair's two members' rates, summed per column (a level's expression has one term each)
    per_column = np.bincount(cols - x.start, weights=time * rates, minlength=len(columns))
    gain = per_column.astype(np.float64) / costs[columns.type]
    model.add_level(Level("L1", Expr.of(own, gain), Sense.MAXIMIZE, 0.0, 1e-9))
    return model


def solve_packed(
    columns: Columns,
    num_jobs: int,
    capacity: np.ndarray,
    costs: np.ndarray,
    min_rate: np.ndarray | None,
    time_limit_s: float,
) -> SumResult:
    """:func:`solve_sum` over combinations; ``x`` is one value per column."""
    deadline = Deadline.after(time_limit_s)
    shape = (len(columns), 1)
    out = _run(
        build_packed(columns, num_jobs, capacity, costs, min_rate, deadline), shape, deadline
    )
    kept = True
    if out.status is Status.INFEASIBLE and min_rate is not None:
        model = build_packed(columns, num_jobs, capacity, costs, None, deadline)
        out, kept = _run(model, shape, deadline), False
    x = None if out.x is None else out.x[:, 0]
    return SumResult(out.status, x, None, slos_kept=kept)


def violations(
    x: np.ndarray,
    rates: np.ndarray,
    scale: np.ndarray,
    capacity: np.ndarray,
    min_rate: np.ndarray | None,
) -> list[str]:
    """The rows the allocation breaks (an independent check in array form): empty if none."""
    broken = []
    if np.any(x < -ROW_TOL) or np.any(x > 1 + ROW_TOL):
        broken.append("bounds")
    if np.any(x.sum(axis=1) > 1 + ROW_TOL):
        broken.append("C1 time")
    if np.any((scale[:, None] * x).sum(axis=0) > capacity + ROW_TOL * np.maximum(1, capacity)):
        broken.append("C2 capacity")
    if min_rate is not None:
        need = ~np.isnan(min_rate)
        got = (rates * x).sum(axis=1)
        if np.any(got[need] < min_rate[need] - ROW_TOL * np.maximum(1, min_rate[need])):
            broken.append("SLO")
    return broken
