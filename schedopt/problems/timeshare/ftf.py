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


def lower_bound(data: TimeshareData, r: float, sigma: float) -> float:
    """r* ≥ min_j (τ_j + (r E_j − τ_j)/σ(r)) / E_j, from one LP at any r (see the formulation)."""
    E = expected_isolated(data)
    return float(np.min((data.since_start + (r * E - data.since_start) / sigma) / E))


def next_target(
    lo: float,
    hi: float,
    below: tuple[float, float] | None,
    above: tuple[float, float],
    bisect: bool = False,
) -> float:
    """The next r to try: the secant root of σ(r) = 1 between the last points evaluated
    below (σ < 1) and above (σ ≥ 1) the optimum, kept inside the bracket (lo, hi); the
    bracket's lower end first when nothing below is known yet; the middle of what is left
    when ``bisect`` (the secant kept one end twice: it may creep)."""
    if below is None:
        return lo
    (ra, sa), (rb, sb) = below, above
    left, right = max(lo, ra), min(hi, rb)
    if bisect or not sb > sa:
        return 0.5 * (left + right)
    r = ra + (1.0 - sa) * (rb - ra) / (sb - sa)
    width = hi - lo
    # nearly at an end: step a little inside, so that the bracket shrinks from that side
    return min(max(r, lo + 1e-3 * width), hi - 1e-3 * width)


def solve_ftf(
    data: TimeshareData,
    columns: Columns,
    lp: Callable[[np.ndarray], Step],
    time_left: Callable[[], float],
    gap_tol: float = GAP_TOL,
) -> FtfResult:
    """Root of σ(r) = 1 by a safeguarded secant (formulations/timeshare.md, "Finish-time
    fairness"): from the isolated split, each LP at a target r either finds an allocation of
    value ≤ r (the upper end) or proves r* > r (the lower end); ``lp(weights)`` solves one
    max-min LP over ``columns`` (singles first, as data.singles)."""
    x = np.zeros(len(columns))
    iso_cols, iso_x = start(data)
    x[: len(iso_cols)] = iso_x
    rho = throughputs(columns, x, data.num_jobs)
    hi = float(np.max(ratios(data, rho)))
    lo: float | None = None
    below: tuple[float, float] | None = None
    above: tuple[float, float] | None = None
    same_side = 0
    target = hi  # first a Dinkelbach step from the isolated split: an allocation and a bound
    for k in range(1, MAX_STEPS + 1):
        if time_left() <= 0:
            return FtfResult(x, hi, lo, k - 1, Status.FEASIBLE)
        step = lp(weights_at(data, target))
        if step.x is None or step.sigma is None or step.status is not Status.OPTIMAL:
            return FtfResult(x, hi, lo, k, Status.FEASIBLE)
        bound = lower_bound(data, target, max(step.sigma, 1e-300))
        lo = bound if lo is None else max(lo, bound)
        new_r = float(np.max(ratios(data, throughputs(columns, step.x, data.num_jobs))))
        if new_r <= hi:
            x, hi = step.x, new_r
        side = 1 if step.sigma >= 1.0 else -1
        same_side = same_side + side if same_side * side > 0 else side
        if side > 0:
            above = (target, step.sigma)
        else:
            below = (target, step.sigma)
        if hi - lo <= gap_tol * max(1.0, hi):
            return FtfResult(x, hi, min(lo, hi), k, Status.OPTIMAL)
        if above is None:  # σ(hi) ≥ 1 in exact arithmetic: the best allocation is there
            above = (hi, 1.0)
        target = next_target(lo, hi, below, above, bisect=abs(same_side) >= 2)
    return FtfResult(x, hi, lo, MAX_STEPS, Status.FEASIBLE)
