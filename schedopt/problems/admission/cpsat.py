"""Deadline admission as a CP-SAT model (formulations/admission.md, C1–C9, L1–L3)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

from ortools.sat.python import cp_model

from schedopt.backends import cpsat as backend
from schedopt.core.lexico import LEVEL_TIME_SHARE, Level
from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, Ticker

from .assemble import RawPlan, assemble, guaranteed_value, raw_from_solution
from .data import VALUE_SCALE, JobData, ModelData, build_data
from .explain import explain_infeasible
from .heuristics import refill_best_effort
from .instance import AdmissionInstance


class AdmissionCpsat:
    """The model over ``jobs`` (default: all). Variables are kept by (job, slot, option)."""

    def __init__(
        self,
        data: ModelData,
        jobs: Sequence[JobData] | None = None,
        deadline: Deadline | None = None,
    ):
        tick = Ticker(deadline, "building the CP-SAT model")
        self.data = data
        self.jobs = tuple(data.jobs if jobs is None else jobs)
        m = self.model = cp_model.CpModel()
        T = data.T
        self.x: dict[tuple[int, int, int], cp_model.IntVar] = {}
        self.z: dict[int, cp_model.IntVar] = {}
        self.y: dict[tuple[int, int], cp_model.IntVar] = {}
        self.p: dict[tuple[int, int], cp_model.IntVar] = {}
        self.c: dict[tuple[int, int], cp_model.IntVar] = {}
        gpus: dict[tuple[int, int], cp_model.LinearExpr] = {}
        l1, l2, l3 = [], [], []

        for job in self.jobs:
            tick()
            j = job.index
            # C1 gang, one size per slot; C2 nothing before arrival (no variable exists).
            for t in data.run_slots(job):
                xs = [m.new_bool_var(f"x[{job.id},{t},{o}]") for o in range(len(job.options))]
                for o, v in enumerate(xs):
                    self.x[j, t, o] = v
                m.add_at_most_one(xs)
                gpus[j, t] = sum(o.n * v for o, v in zip(job.options, xs, strict=True))

            if job.is_slo:
                z = self.z[j] = m.new_bool_var(f"z[{job.id}]")
                ys = [m.new_bool_var(f"y[{job.id},{k}]") for k in range(len(job.tiers))]
                for k, v in enumerate(ys):
                    self.y[j, k] = v
                m.add(sum(ys) == z)  # C4 one tier per admitted job
                if job.admitted_before:
                    m.add(z == 1)  # C5 earlier guarantees hold
                for k, tier in enumerate(job.tiers):  # C6 deadlines
                    done = sum(
                        opt.work * self.x[j, t, o]
                        for t in range(job.arrival, min(tier.slots_before, T))
                        for o, opt in enumerate(job.options)
                    )
                    m.add(done >= job.work * sum(ys[: k + 1]))
                for t in data.run_slots(job):  # C7 rejected jobs run nowhere
                    m.add(sum(self.x[j, t, o] for o in range(len(job.options))) <= z)
                l1.extend(tier.value_scaled * ys[k] for k, tier in enumerate(job.tiers))
            else:
                # C8 best-effort progress, capped by the work left.
                cap = min(job.work, max(o.work for o in job.options))
                ps = []
                for t in data.run_slots(job):
                    p = self.p[j, t] = m.new_int_var(0, cap, f"p[{job.id},{t}]")
                    m.add(p <= sum(o.work * self.x[j, t, i] for i, o in enumerate(job.options)))
                    ps.append(p)
                    l2.append(job.be_coef[t] * p)
                if ps:
                    m.add(sum(ps) <= job.work)

            # C9 GPU-count changes between consecutive slots (and from now to slot 0).
            prev: cp_model.LinearExprT = job.current_gpus
            top = max(max(o.n for o in job.options), job.current_gpus)
            for t in range(T):
                now = gpus.get((j, t), 0)
                c = self.c[j, t] = m.new_int_var(0, top, f"c[{job.id},{t}]")
                m.add(c >= now - prev)
                m.add(c >= prev - now)
                l3.append(c)
                prev = now

        # C3 capacity, packable: per slot, GPU type and size level.
        by_level: dict[tuple[str, int], list[tuple[JobData, int, int]]] = {}
        for job in self.jobs:
            for o, opt in enumerate(job.options):
                for s in data.levels[opt.gpu_type]:
                    if ModelData.usage(opt, s):
                        by_level.setdefault((opt.gpu_type, s), []).append(
                            (job, o, ModelData.usage(opt, s))
                        )
        for (g, s), entries in by_level.items():
            for t in range(T):
                live = [(self.x[job.index, t, o], u) for job, o, u in entries if t >= job.arrival]
                if live:
                    m.add(
                        cp_model.LinearExpr.weighted_sum([v for v, _ in live], [u for _, u in live])
                        <= data.chunk_capacity[g, s]
                    )

        self.levels = (
            Level("L1", sum(l1), maximize=True),
            Level("L2", sum(l2), maximize=True),
            Level("L3", sum(l3), maximize=False),
        )
        self._vars = [
            *self.x.values(),
            *self.z.values(),
            *self.y.values(),
            *self.p.values(),
            *self.c.values(),
        ]

    def hint(self, raw: Sequence[RawPlan]) -> None:
        """A complete hint (p and c derived as C8 and C9 define them), so CP-SAT starts from a
        feasible point instead of having to repair a partial one."""
        self.model.clear_hints()
        add = self.model.add_hint
        for job in self.jobs:
            j, r = job.index, raw[job.index]
            left, prev = job.work, job.current_gpus
            for t in range(self.data.T):
                o = r.run[t] if t >= job.arrival else None
                for i in range(len(job.options)):
                    if (j, t, i) in self.x:
                        add(self.x[j, t, i], int(o == i))
                n = 0 if o is None else job.options[o].n
                add(self.c[j, t], abs(n - prev))
                prev = n
                if (j, t) in self.p:
                    got = 0 if o is None else min(left, job.options[o].work)
                    got = min(got, self.p[j, t].proto.domain[-1])
                    add(self.p[j, t], got)
                    left -= got
            if job.is_slo:
                add(self.z[j], int(bool(r.admitted)))
                for k in range(len(job.tiers)):
                    add(self.y[j, k], int(bool(r.admitted) and r.tier == k))

    def hint_from(self, solver: cp_model.CpSolver) -> None:
        self.model.clear_hints()
        for v in self._vars:
            self.model.add_hint(v, solver.value(v))

    def extract(self, solver: cp_model.CpSolver) -> list[RawPlan]:
        raw = [RawPlan([None] * self.data.T) for _ in self.data.jobs]
        for (j, t, o), v in self.x.items():
            if solver.boolean_value(v):
                raw[j].run[t] = o
        for j, z in self.z.items():
            raw[j].admitted = solver.boolean_value(z)
            for k in range(len(self.data.jobs[j].tiers)):
                if solver.boolean_value(self.y[j, k]):
                    raw[j].tier = k
        return raw


def feasible_together(data: ModelData, jobs: Sequence[JobData], time_limit_s: float) -> bool | None:
    """Can all of ``jobs`` (as admitted SLO jobs) keep a guarantee together? None: unknown."""
    model = AdmissionCpsat(data, jobs)
    for job in jobs:
        model.model.add(model.z[job.index] == 1)
    solver = backend.make_solver(time_limit_s=time_limit_s)
    run = backend.run(model.model, solver)
    if run.status is Status.INFEASIBLE:
        return False
    return True if run.status.has_solution else None


def solve(inst: AdmissionInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
    t0 = time.perf_counter()
    data = build_data(inst, deadline=deadline)
    reason = data.too_big_for(
        options.time_limit_s if options.deterministic else deadline.remaining()
    )
    if reason:
        return Outcome(Status.NO_SOLUTION, explanation=reason)
    model = AdmissionCpsat(data, deadline=deadline)
    # The hint is a warm start as an *incumbent*, not as search guidance for L1: hinted,
    # single-worker CP-SAT kept the heuristic's value on every contended 256-GPU benchmark
    # instance, where the unhinted search reached within 1% of the bound (RESULTS.md). So L1
    # searches freely and the hint stands in wherever it is better; L2 and L3 are hinted.
    incumbent = raw_from_solution(data, options.hint) if options.hint is not None else None
    build_s = time.perf_counter() - t0
    solve_s = 0.0
    best_raw: list[RawPlan] | None = None
    bound: float | None = None
    proven = [False, False, False]
    stats: dict[str, float | str] = {}
    det_left = options.time_limit_s  # deterministic mode: fixed shares of the limit
    for i, level in enumerate(model.levels):
        if options.deterministic:
            budget = det_left * LEVEL_TIME_SHARE[i]
            det_left -= budget
        else:
            budget = deadline.share(LEVEL_TIME_SHARE[i])
        if budget <= 0.01 and best_raw is not None:
            break
        if level.maximize:
            model.model.maximize(level.expr)
        else:
            model.model.minimize(level.expr)
        solver = backend.make_solver(
            time_limit_s=max(budget, 0.01),
            mip_gap=options.mip_gap,
            threads=options.threads,
            seed=options.seed,
            verbose=options.verbose,
            # The full LP relaxation is what proves L3 once L2 is fixed (measured: small
            # instance L3 proven in 0.3 s instead of not at all in 5 s).
            linearization_level=2,
            deterministic=options.deterministic,
        )
        run = backend.run(model.model, solver)
        solve_s += float(run.stats["wall_s"])
        stats[f"{level.name}_status"] = run.status.value
        if i == 0:
            if run.status is Status.INFEASIBLE:
                return Outcome(
                    Status.INFEASIBLE,
                    build_s=build_s,
                    solve_s=solve_s,
                    explanation=explain_infeasible(data, deadline, feasible_together),
                    stats=stats,
                )
            bound = None if run.bound is None else run.bound / VALUE_SCALE
            found = round(solver.objective_value) if run.status.has_solution else None
            hinted = None if incumbent is None else guaranteed_value(data, incumbent)
            if hinted is not None and (found is None or hinted > found):
                # The hint is better: it is L1's incumbent, optimal if it meets the bound.
                met = run.bound is not None and run.bound <= hinted
                run = dataclasses.replace(run, status=Status.OPTIMAL if met else Status.FEASIBLE)
                best_raw, value = incumbent, hinted
                stats["L1_incumbent"] = "hint"
            elif found is None:
                return Outcome(
                    Status.NO_SOLUTION, bound=bound, build_s=build_s, solve_s=solve_s, stats=stats
                )
            else:
                best_raw, value = model.extract(solver), found
            proven[0] = run.status is Status.OPTIMAL
            # L2 starts from this solution with best-effort jobs re-planned greedily: a far
            # better start than the level-1 solution, whose best-effort part is arbitrary.
            best_raw = refill_best_effort(data, best_raw)
            model.model.add(level.expr >= value)  # fix L1 at what was achieved
            model.hint(best_raw)
            continue
        if not run.status.has_solution:
            break  # keep the previous level's solution
        proven[i] = run.status is Status.OPTIMAL
        best_raw = model.extract(solver)
        # Fix this level at what it achieved, then warm-start the next one from here.
        value = round(solver.objective_value)
        model.model.add(level.expr >= value if level.maximize else level.expr <= value)
        model.hint_from(solver)
    assert best_raw is not None
    solution = assemble(data, best_raw, optimal_admission=proven[0])
    return Outcome(
        Status.OPTIMAL if all(proven) else Status.FEASIBLE,
        solution=solution,
        bound=bound,
        build_s=build_s,
        solve_s=solve_s,
        stats=stats,
    )
