"""The continuous, Gavel-style max-min LP over time fractions (Gavel, OSDI'20), solved by HiGHS.

Variables ``X[j, o] ∈ [0, 1]``: the fraction of the round job ``j`` runs on option ``o`` (a GPU
type and gang size). Constraints: a job's fractions sum to at most 1 (C1 relaxed), GPUs per type
``Σ n X ≤ F_g`` (C2), hard guarantees (C5), and the minimum LTGF ``t`` over the counted fairness
units (tenants, or jobs in per-job mode: F1–F3) with the *expected* GPUs ``Σ n X`` (C7). Stage 1
maximises ``t``; stage 2 fixes it and maximises the effective throughput ``Σ e X`` (L2), as
Gavel's max-min fairness followed by efficiency. Host shapes (C3), kept allocations (C4) and
the preemption cap (C6) are left out, so the LP's minimum share is an upper bound on L1 of every
whole-GPU allocation.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, DeadlineReached, Ticker

from .data import ModelData, build_data
from .instance import FairshareInstance

if TYPE_CHECKING:
    import pulp

#: Stage 2 keeps the minimum share within this much of stage 1's optimum.
STAGE1_TOL = 1e-7


@dataclass(frozen=True)
class JobFractions:
    job_id: str
    #: (GPU type, GPU count, fraction of the round) for every option with a positive fraction.
    fractions: tuple[tuple[str, int, float], ...]
    #: Σ e·X: the job's effective throughput over its best (Gavel's normalised throughput).
    effective_throughput: float

    @property
    def expected_gpus(self) -> float:
        return sum(n * x for _, n, x in self.fractions)


@dataclass(frozen=True)
class GavelAllocation:
    """The fractional allocation; ``status`` is the LP's (OPTIMAL, or FEASIBLE on a limit).
    ``tenant_gpus``: expected GPUs of every tenant; ``tenant_shares``: the share of every counted
    fairness unit by id (the tenants, or the jobs with ``fairness_unit`` 'job')."""

    status: Status
    min_share: float
    effective_throughput: float
    jobs: tuple[JobFractions, ...]
    tenant_gpus: dict[str, float]
    tenant_shares: dict[str, float]
    #: Stage 1's proven optimum (an upper bound on L1 of every whole-GPU allocation), or None.
    bound: float | None = None

    def job(self, job_id: str) -> JobFractions:
        for j in self.jobs:
            if j.job_id == job_id:
                return j
        raise KeyError(job_id)


def solve_gavel_lp(
    instance: FairshareInstance, *, time_limit_s: float = 10.0, efficiency: bool = True
) -> GavelAllocation:
    """Solve the Gavel-style LP of ``instance``; ``efficiency`` adds stage 2 (throughput)."""
    return solve_data(build_data(instance, check_size=False), time_limit_s, efficiency)


def _lin(pairs) -> pulp.LpAffineExpression:
    import pulp

    return pulp.LpAffineExpression(list(pairs))


def solve_data(data: ModelData, time_limit_s: float, efficiency: bool = True) -> GavelAllocation:
    """Both stages together within ``time_limit_s`` (stage 2 gets what stage 1 left)."""
    import pulp  # PuLP and HiGHS, imported on first use (start-up)

    from schedopt.backends.milp import MilpSolver, solve_pulp, var_value

    started = time.perf_counter()
    stop = started + time_limit_s
    tick = Ticker(Deadline(stop), "building the Gavel LP")
    nothing = GavelAllocation(Status.NO_SOLUTION, 0.0, 0.0, (), {}, {})
    prob = pulp.LpProblem("gavel", pulp.LpMaximize)
    X: dict[tuple[int, int], pulp.LpVariable] = {}
    gpus: dict[int, list] = {u.index: [] for u in data.tenants}
    unit_gpus: dict[int, list] = {v.index: [] for v in data.units}
    by_type: dict[str, list] = {}
    eff = []
    for job in data.jobs:
        try:
            tick()
        except DeadlineReached:
            return nothing
        row = []
        for o, opt in enumerate(job.options):
            v = X[job.index, o] = prob.add_variable(f"X_{job.index}_{o}", 0, 1)
            row.append((v, 1))
            gpus[job.tenant].append((v, opt.n))
            unit_gpus[job.unit].append((v, opt.n))
            by_type.setdefault(opt.gpu_type, []).append((v, opt.n))
            eff.append((v, opt.eff))
        if len(row) > 1:
            prob += _lin(row) <= 1, f"C1_{job.index}"
    for g, row in by_type.items():
        prob += _lin(row) <= data.type_capacity[g], f"C2_{g}"
    for u in data.tenants:
        if u.guarantee:
            prob += _lin(gpus[u.index]) >= u.guarantee, f"C5_{u.index}"
    t = prob.add_variable("t", 0)
    prob += _lin([(t, 1.0)]) <= max(0.0, data.share_upper_bound()), "t_top"
    for unit in data.included:
        d = unit.deserved_after_s
        row = [(t, 1.0)] + [(v, -data.round_s * n / d) for v, n in unit_gpus[unit.index]]
        prob += _lin(row) <= unit.used_s / d, f"C7_{unit.index}"
    prob.setObjective(_lin([(t, 1.0)]))
    # Handing PuLP's model to HiGHS (variable by variable, unchecked) is taken to cost what
    # building it did: not started without that time (gavel-round at 16,384 GPUs × 20,000
    # jobs, load 14: 16.5 s in the LP on a 10 s limit, #16).
    now = time.perf_counter()
    built_s = now - started
    if stop - now < built_s:
        return nothing
    run = solve_pulp(prob, MilpSolver.HIGHS, time_limit_s=max(0.01, stop - time.perf_counter()))
    status = run.status
    if not status.has_solution:
        return replace(nothing, status=status)
    bound = var_value(t) if status is Status.OPTIMAL else None
    if efficiency and status is Status.OPTIMAL:
        best = var_value(t)
        prob += _lin([(t, 1.0)]) >= best - STAGE1_TOL * max(1.0, best), "fix_t"
        prob.setObjective(_lin(eff))
        values = {v: var_value(v) for v in X.values()}
        left = stop - time.perf_counter()
        enough = left > max(0.02, built_s)  # PuLP hands the model over again
        second = solve_pulp(prob, MilpSolver.HIGHS, time_limit_s=left) if enough else None
        if second is None or not second.status.has_solution:  # keep stage 1's solution
            for v, x in values.items():
                v.varValue = x
        elif second.status is not Status.OPTIMAL:
            status = Status.FEASIBLE
    jobs = []
    total_eff = 0.0
    tenant_gpus = {u.id: 0.0 for u in data.tenants}
    by_unit = [0.0] * len(data.units)
    for job in data.jobs:
        fr = []
        e = 0.0
        for o, opt in enumerate(job.options):
            x = min(1.0, max(0.0, var_value(X[job.index, o])))
            if x > 1e-9:
                fr.append((opt.gpu_type, opt.n, x))
                e += opt.eff * x
                tenant_gpus[data.tenants[job.tenant].id] += opt.n * x
                by_unit[job.unit] += opt.n * x
        total_eff += e
        jobs.append(JobFractions(job.id, tuple(fr), e))
    shares = {v.id: v.share(by_unit[v.index], data.round_s) for v in data.included}
    return GavelAllocation(
        status=status,
        min_share=min(shares.values(), default=0.0),
        effective_throughput=total_eff,
        jobs=tuple(jobs),
        tenant_gpus=tenant_gpus,
        tenant_shares=shares,
        bound=bound,
    )
