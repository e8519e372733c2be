"""Finish-time fairness by Dinkelbach's iteration over max-min LPs (formulations/timeshare.md,
"Finish-time fairness"): each step is the model of model.py with weights a_j = 1/q_j(r_k)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from schedopt.core.status import Status

from .codec import throughputs
from .columns import Columns
from .data import TimeshareData

#: Stop when the LP cannot raise every job's throughput by more than this factor.
SIGMA_TOL = 1e-9
#: Report OPTIMAL when the lower bound is this close (relative) to the value.
GAP_TOL = 1e-9
MAX_STEPS = 60


@dataclass(frozen=True)
class Step:
    """One max-min LP: its status, σ (its L1), and the fractions it found."""

    status: Status
    sigma: float | None
    x: np.ndarray | None


@dataclass(frozen=True)
class FtfResult:
    x: np.ndarray
    #: r(x), the largest finish-time ratio of ``x``.
    ratio: float
    #: A proven lower bound on the optimal ratio, or None.
    lower: float | None
    steps: int
    status: Status


def expected_isolated(data: TimeshareData) -> np.ndarray:
    """E_j = θ_j + R_j / i_j."""
    return data.isolated_time + data.remaining / data.isolated_throughput()


def ratios(data: TimeshareData, rho: np.ndarray) -> np.ndarray:
    """ρ^FTF_j (inf where the job does not run)."""
    with np.errstate(divide="ignore"):
        own = data.since_start + np.where(rho > 0, data.remaining / rho, np.inf)
    return own / expected_isolated(data)


def weights_at(data: TimeshareData, r: float) -> np.ndarray:
    """a_j = 1/q_j(r) = (r E_j − τ_j) / R_j (positive while r > τ_j/E_j for every j)."""
    return (r * expected_isolated(data) - data.since_start) / data.remaining


def start(data: TimeshareData) -> tuple[Columns, np.ndarray]:
    """The isolated split on the single-job columns: feasible, every job running."""
    cols = data.singles
    return cols, data.isolated_split()[cols.first, cols.type]


def solve_ftf(
    data: TimeshareData,
    columns: Columns,
    lp: Callable[[np.ndarray], Step],
    time_left: Callable[[], float],
) -> FtfResult:
    """Iterate from the isolated split; ``lp(weights)`` solves one max-min LP over ``columns``
    (singles first, as data.singles)."""
    x = np.zeros(len(columns))
    iso_cols, iso_x = start(data)
    x[: len(iso_cols)] = iso_x
    rho = throughputs(columns, x, data.num_jobs)
    r = float(np.max(ratios(data, rho)))
    lower: float | None = None
    status = Status.FEASIBLE
    E = expected_isolated(data)
    for k in range(1, MAX_STEPS + 1):
        if time_left() <= 0:
            return FtfResult(x, r, lower, k - 1, Status.FEASIBLE)
        step = lp(weights_at(data, r))
        if step.x is None or step.sigma is None:
            return FtfResult(x, r, lower, k, Status.FEASIBLE)
        if step.status is Status.OPTIMAL:
            # Every allocation with value r' has σ ≥ min_j q_j(r')/q_j(r): the bound below.
            sigma = max(step.sigma, 1.0)
            bound = float(np.min((data.since_start + (r * E - data.since_start) / sigma) / E))
            lower = bound if lower is None else max(lower, bound)
        new_rho = throughputs(columns, step.x, data.num_jobs)
        new_r = float(np.max(ratios(data, new_rho)))
        if new_r <= r:
            x, r = step.x, new_r
        if step.status is Status.OPTIMAL and step.sigma <= 1 + SIGMA_TOL:
            status = Status.OPTIMAL
        if lower is not None and r - lower <= GAP_TOL * max(1.0, r):
            status = Status.OPTIMAL
        if status is Status.OPTIMAL:
            return FtfResult(x, r, lower if lower is not None else r, k, Status.OPTIMAL)
    return FtfResult(x, r, lower, MAX_STEPS, Status.FEASIBLE)
