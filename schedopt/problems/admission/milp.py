"""Deadline admission as a MILP in PuLP, solved by HiGHS or CBC (formulations/admission.md)."""

from __future__ import annotations

import time

import pulp

from schedopt.backends.milp import MilpSolver, solve_pulp, var_value, write_model
from schedopt.core.lexico import LEVEL_TIME_SHARE, Level, no_time_to_hand_over
from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, Ticker

from .assemble import RawPlan, assemble, raw_from_solution
from .cpsat import feasible_together
from .data import VALUE_SCALE, ModelData, build_data
from .explain import explain_infeasible
from .heuristics import refill_best_effort
from .instance import AdmissionInstance


def _lin(pairs) -> pulp.LpAffineExpression:
    return pulp.LpAffineExpression(list(pairs))


class AdmissionMilp:
    def __init__(self, data: ModelData, deadline: Deadline | None = None):
        tick = Ticker(deadline, "building the MILP")
        self.data = data
        T = data.T
        prob = self.prob = pulp.LpProblem("admission", pulp.LpMaximize)
        self.x: dict[tuple[int, int, int], pulp.LpVariable] = {}
        self.z: dict[int, pulp.LpVariable] = {}
        self.y: dict[tuple[int, int], pulp.LpVariable] = {}
        self.p: dict[tuple[int, int], pulp.LpVariable] = {}
        self.c: dict[tuple[int, int], pulp.LpVariable] = {}
        l1, l2, l3 = [], [], []
        for job in data.jobs:
            tick()
            j = job.index
            # C1 gang, one size per slot; C2 nothing before arrival (no variable exists).
            for t in data.run_slots(job):
                for o in range(len(job.options)):
                    self.x[j, t, o] = prob.add_variable(f"x_{j}_{t}_{o}", cat=pulp.LpBinary)
                prob += (
                    _lin((self.x[j, t, o], 1) for o in range(len(job.options))) <= 1,
                    f"C1_{j}_{t}",
                )
            if job.is_slo:
                z = self.z[j] = prob.add_variable(f"z_{j}", cat=pulp.LpBinary)
                for k in range(len(job.tiers)):
                    self.y[j, k] = prob.add_variable(f"y_{j}_{k}", cat=pulp.LpBinary)
                ys = [self.y[j, k] for k in range(len(job.tiers))]
                prob += _lin([(v, 1) for v in ys] + [(z, -1)]) == 0, f"C4_{j}"
                if job.admitted_before:
                    prob += _lin([(z, 1)]) == 1, f"C5_{j}"
                for k, tier in enumerate(job.tiers):
                    done = [
                        (self.x[j, t, o], opt.work)
                        for t in range(job.arrival, min(tier.slots_before, T))
                        for o, opt in enumerate(job.options)
                    ]
                    need = [(v, -job.work) for v in ys[: k + 1]]
                    prob += _lin(done + need) >= 0, f"C6_{j}_{k}"
                for t in data.run_slots(job):
                    row = [(self.x[j, t, o], 1) for o in range(len(job.options))] + [(z, -1)]
                    prob += _lin(row) <= 0, f"C7_{j}_{t}"
                l1.extend((ys[k], tier.value_scaled) for k, tier in enumerate(job.tiers))
            else:
                cap = min(job.work, max(o.work for o in job.options))
                for t in data.run_slots(job):
                    p = self.p[j, t] = prob.add_variable(f"p_{j}_{t}", 0, cap, cat=pulp.LpInteger)
                    row = [(p, 1)] + [(self.x[j, t, i], -o.work) for i, o in enumerate(job.options)]
                    prob += _lin(row) <= 0, f"C8a_{j}_{t}"
                    l2.append((p, job.be_coef[t]))
                ps = [self.p[j, t] for t in data.run_slots(job)]
                if ps:
                    prob += _lin((p, 1) for p in ps) <= job.work, f"C8b_{j}"
            # C9 GPU-count changes.
            prev: list[tuple[pulp.LpVariable, float]] = []
            prev_const = float(job.current_gpus)
            for t in range(T):
                now = [
                    (self.x[j, t, o], opt.n)
                    for o, opt in enumerate(job.options)
                    if (j, t, o) in self.x
                ]
                c = self.c[j, t] = prob.add_variable(f"c_{j}_{t}", 0)
                diff_up = _lin([(c, 1)] + [(v, -a) for v, a in now] + prev)
                diff_dn = _lin([(c, 1)] + [(v, a) for v, a in now] + [(v, -a) for v, a in prev])
                prob += diff_up >= -prev_const, f"C9a_{j}_{t}"
                prob += diff_dn >= prev_const, f"C9b_{j}_{t}"
                l3.append((c, 1))
                prev, prev_const = now, 0.0
        # C3 capacity, packable.
        for t in range(T):
            for g, levels in data.levels.items():
                for s in levels:
                    row = [
                        (self.x[job.index, t, o], ModelData.usage(opt, s))
                        for job in data.jobs
                        if t >= job.arrival
                        for o, opt in enumerate(job.options)
                        if opt.gpu_type == g and ModelData.usage(opt, s)
                    ]
                    if row:
                        prob += _lin(row) <= data.chunk_capacity[g, s], f"C3_{t}_{g}_{s}"
        self.levels = (
            Level("L1", _lin(l1), maximize=True),
            Level("L2", _lin(l2), maximize=True),
            Level("L3", _lin(l3), maximize=False),
        )
        prob.setObjective(self.levels[0].expr)

    def hint(self, raw: list[RawPlan]) -> dict[pulp.LpVariable, float]:
        """A complete MIP start from a raw plan (p and c derived as the model defines them)."""
        data, values = self.data, {}
        for job in data.jobs:
            j, r = job.index, raw[job.index]
            left, prev = job.work, job.current_gpus
            for t in range(data.T):
                o = r.run[t] if t >= job.arrival else None
                for i in range(len(job.options)):
                    if (j, t, i) in self.x:
                        values[self.x[j, t, i]] = float(o == i)
                n = 0 if o is None else job.options[o].n
                values[self.c[j, t]] = abs(n - prev)
                prev = n
                if (j, t) in self.p:
                    got = 0 if o is None else min(left, job.options[o].work, self.p[j, t].upBound)
                    values[self.p[j, t]] = got
                    left -= got
            if job.is_slo:
                values[self.z[j]] = float(bool(r.admitted))
                for k in range(len(job.tiers)):
                    values[self.y[j, k]] = float(bool(r.admitted) and r.tier == k)
        return values

    def current_values(self) -> dict[pulp.LpVariable, float]:
        return {v: var_value(v) for v in self.prob.variables()}

    def extract(self) -> list[RawPlan]:
        raw = [RawPlan([None] * self.data.T) for _ in self.data.jobs]
        for (j, t, o), v in self.x.items():
            if var_value(v) > 0.5:
                raw[j].run[t] = o
        for j, z in self.z.items():
            raw[j].admitted = var_value(z) > 0.5
            for k in range(len(self.data.jobs[j].tiers)):
                if var_value(self.y[j, k]) > 0.5:
                    raw[j].tier = k
        return raw


def make_solver(solver: MilpSolver):
    def solve(inst: AdmissionInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
        t0 = time.perf_counter()
        data = build_data(inst, deadline=deadline)
        reason = data.too_big_for(deadline.remaining())
        if reason:
            return Outcome(Status.NO_SOLUTION, explanation=reason)
        model = AdmissionMilp(data, deadline)
        hint = model.hint(raw_from_solution(data, options.hint)) if options.hint else None
        build_s = time.perf_counter() - t0
        late = no_time_to_hand_over(deadline, build_s)
        if late:
            return Outcome(Status.NO_SOLUTION, build_s=build_s, explanation=late)
        solve_s = 0.0
        best_raw: list[RawPlan] | None = None
        bound: float | None = None
        proven = [False, False, False]
        stats: dict[str, float | str] = {}
        handover_s = 0.0  # measured cost of handing the model to the solver and back
        for i, level in enumerate(model.levels):
            # Keep back the measured hand-over: reading the values back and assembling cost
            # about as much again after the last level (contested 1,024 GPUs × 3,200 jobs
            # overran a 10 s limit by 1.0 s without it).
            budget = deadline.share(LEVEL_TIME_SHARE[i], reserve_s=handover_s)
            if best_raw is not None and budget <= 1.5 * handover_s + 0.05:
                break  # the next level could not even be handed over within its share
            model.prob.sense = pulp.LpMaximize if level.maximize else pulp.LpMinimize
            model.prob.setObjective(level.expr)
            t1 = time.perf_counter()
            run = solve_pulp(
                model.prob,
                solver,
                time_limit_s=max(budget, 0.01),
                mip_gap=options.mip_gap,
                threads=options.threads,
                seed=options.seed,
                hint=hint,
                msg=options.verbose,
            )
            handover_s = float(run.stats.get("handover_s", handover_s))
            solve_s += time.perf_counter() - t1
            stats[f"{level.name}_status"] = run.status.value
            stats.update(run.surfaced(level.name))  # how CBC ended, if not normally
            if i == 0:
                if run.status is Status.INFEASIBLE:
                    return Outcome(
                        Status.INFEASIBLE,
                        build_s=build_s,
                        solve_s=solve_s,
                        stats=stats,
                        explanation=explain_infeasible(data, deadline, feasible_together),
                    )
                bound = None if run.bound is None else run.bound / VALUE_SCALE
                if not run.status.has_solution:
                    return Outcome(
                        Status.NO_SOLUTION,
                        bound=bound,
                        build_s=build_s,
                        solve_s=solve_s,
                        stats=stats,
                    )
            if not run.status.has_solution:
                break
            proven[i] = run.status is Status.OPTIMAL
            best_raw = model.extract()
            hint = model.current_values()
            if i == 0:  # as in cpsat.py: start L2 from a greedy best-effort re-plan
                best_raw = refill_best_effort(data, best_raw)
                hint = model.hint(best_raw)
            # Fix the level at its (integer) value; a half unit absorbs solver tolerances.
            value = round(run.objective or 0.0)
            if level.maximize:
                model.prob += level.expr >= value - 0.5, f"fix_{level.name}"
            else:
                model.prob += level.expr <= value + 0.5, f"fix_{level.name}"
        assert best_raw is not None
        return Outcome(
            Status.OPTIMAL if all(proven) else Status.FEASIBLE,
            solution=assemble(data, best_raw, optimal_admission=proven[0]),
            bound=bound,
            build_s=build_s,
            solve_s=solve_s,
            stats=stats,
        )

    return solve


def export(inst: AdmissionInstance, path: str, fmt: str) -> None:
    """Write the level-1 model (maximise guaranteed value) as MPS or LP."""
    write_model(
        AdmissionMilp(build_data(inst)).prob,
        path,
        fmt,
        level="L1 of 3, maximise the guaranteed deadline value (sum of admitted tiers' values)",
        notes=(
            f"objective scale: {VALUE_SCALE} (schedopt's guaranteed value = this file's "
            f"objective / {VALUE_SCALE}; tier values are resolved to 1/{VALUE_SCALE})",
            "L2 (best-effort progress) and L3 (GPU-count changes) are solved after L1 is "
            "fixed at its optimum; they are not in this file",
        ),
    )
