"""A decomposition part's LP guide (formulations/fairshare.md, "Decomposition"): the LP
relaxation of the part's model, level by level, for gavel-round's rounding and for the running
jobs it keeps."""

from __future__ import annotations

import numpy as np

from schedopt.backends.first_import import HIGHS, solver_in_time
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.model.lp_bound import StagedLp

from .data import ModelData
from .gavel import STAGE1_TOL, GavelAllocation, JobFractions
from .lp_rows import Linear, part_lp

#: The part's L3 LP holds L2 at the L2 LP's value less this fraction of it.
L2_HOLD = 1e-6


def lp_guide(
    part: ModelData, time_limit_s: float, need_l2: bool = False
) -> tuple[GavelAllocation, list[int]]:
    """The part's time fractions for gavel-round's rounding, and the running jobs the LP keeps
    (``k_j ≥ 1/2``): the LP relaxation of the model (C1–C7), L1, then L2 with L1 held, then
    L3 with both held (so that the LP keeps running jobs where L2 does not need them moved),
    solved by HiGHS without PuLP (its build took 2/3 of a part's time, measured on 2,500-job
    parts), as one LP whose later stages start from the last basis (``StagedLp``). The LP is
    built straight into arrays (``lp_rows.part_lp``), not relaxed from the whole model.
    ``need_l2``: without the L2 stage's point there is no guide (the caller has another
    rounding for that case, ``price_round.py``); else the L1 stage's point is one."""
    deadline = Deadline.after(time_limit_s)
    none = GavelAllocation(Status.NO_SOLUTION, 0.0, 0.0, (), {}, {})
    p = part_lp(part)
    deadline.check("building the part's LP")
    if not solver_in_time(HIGHS, deadline):  # HiGHS's first import would not end in time
        return none, []
    n = len(p.relaxation.c)
    lp = StagedLp(p.relaxation)

    def hold(expr: Linear, value: float, tol: float) -> None:
        lo = value - expr.constant - tol * max(1.0, abs(value))
        lp.hold(expr.cols, expr.coefs, lo, np.inf)

    x = lp.maximise(p.l1.objective(n, True), deadline.share(0.5))
    if x is None:
        return none, []
    best = p.l1.value(x)
    hold(p.l1, best, STAGE1_TOL)
    # (L2 first: the L3 stage only gets what L2 leaves, and a tenth when L2 is slow)
    second = lp.maximise(p.l2.objective(n, True), deadline.share(0.9))
    if second is None and need_l2:
        return none, []
    if second is not None:
        x = second
        hold(p.l2, p.l2.value(x), L2_HOLD)
        # (L2's point satisfies both held rows: the primal simplex starts feasible from it)
        third = lp.maximise(p.l3.objective(n, False), deadline.remaining(), primal=True)
        if third is not None:
            x = third
    keep = [j.index for j in part.jobs if j.keepable and x[p.k_col[j.index]] >= 0.5]
    # x's columns are one block, job by job and option by option: read them as one list
    xs = x[: len(p.l2.cols)].tolist()
    jobs, at = [], 0
    for job in part.jobs:
        ends = at + len(job.options)
        taken = [(opt, f) for opt, f in zip(job.options, xs[at:ends], strict=True) if f > 1e-9]
        at = ends
        fr = tuple((opt.gpu_type, opt.n, f) for opt, f in taken)
        jobs.append(JobFractions(job.id, fr, sum(opt.eff * f for opt, f in taken)))
    return GavelAllocation(Status.FEASIBLE, best, 0.0, tuple(jobs), {}, {}), keep


__all__ = ["L2_HOLD", "lp_guide"]
