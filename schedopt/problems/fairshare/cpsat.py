"""Fair share as a CP-SAT model (formulations/fairshare.md, C1–C7, L1–L3).

Integers come from ``data.py`` ("Integer scaling" in the formulation): ``t`` in units of
1/SHARE_SCALE, accounts in ``time_unit`` GPU-seconds, e in 1/EFF_SCALE, costs in 1/COST_SCALE s.
"""

from __future__ import annotations

import time

from ortools.sat.python import cp_model

from schedopt.backends import cpsat as backend
from schedopt.core.lexico import LEVEL_TIME_SHARE, Level
from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, Ticker

from .data import SHARE_SCALE, ModelData, build_data
from .explain import explain_infeasible, gavel_stats, trivial_outcome
from .heuristics import complete
from .instance import FairshareInstance
from .placement import Raw, assemble, raw_from_solution

#: Largest |coefficient × bound| allowed in one term (CP-SAT refuses models that may overflow).
_INT_BUDGET = 2**60


class FairshareCpsat:
    def __init__(self, data: ModelData, deadline: Deadline | None = None):
        tick = Ticker(deadline, "building the CP-SAT model")
        self.data = data
        m = self.model = cp_model.CpModel()
        self.x: dict[tuple[int, int], cp_model.IntVar] = {}
        self.k: dict[int, cp_model.IntVar] = {}
        self._chunks: list[cp_model.IntVar] = []
        gpus: dict[int, list[tuple[cp_model.IntVar, int]]] = {u.index: [] for u in data.tenants}
        by_type: dict[str, list[tuple[cp_model.IntVar, int]]] = {}
        l2: list[tuple[cp_model.IntVar, int]] = []
        l3: list[tuple[cp_model.IntVar, int]] = []
        for job in data.jobs:
            tick()
            j = job.index
            xs = []
            for o, opt in enumerate(job.options):
                v = self.x[j, o] = m.new_bool_var(f"x[{job.id},{o}]")
                xs.append(v)
                gpus[job.tenant].append((v, opt.n))
                by_type.setdefault(opt.gpu_type, []).append((v, opt.n))
                l2.append((v, opt.eff_scaled))
                if opt.extra_hosts:
                    l3.append((v, data.frag_scaled * opt.extra_hosts))
            if len(xs) > 1:
                m.add_at_most_one(xs)  # C1 gang, one type
            if job.keepable:
                k = self.k[j] = m.new_bool_var(f"k[{job.id}]")
                m.add_implication(k, self.x[j, job.prev_option])  # C4 keep = previous option
                if job.restart_scaled:
                    l3.append((k, -job.restart_scaled))
        for g, row in by_type.items():  # C2 capacity per type
            m.add(_wsum(row) <= data.type_capacity[g])
        kept_on: dict[str, list[tuple[cp_model.IntVar, int]]] = {}
        for h, entries in data.keep_hosts.items():
            kept_on[h] = [(self.k[j], n) for j, n in entries]
            if sum(n for _, n in entries) > data.free[h]:  # C4 kept allocations fit
                m.add(_wsum(kept_on[h]) <= data.free[h])
        if not data.multi_host:
            self._single_host(kept_on)
        for u in data.tenants:
            if u.guarantee:  # C5 hard guarantees
                m.add(_wsum(gpus[u.index]) >= u.guarantee)
        inst = data.instance
        running = sum(1 for j in data.jobs if j.was_running)
        if inst.max_preemptions is not None and running > inst.max_preemptions:  # C6 cap
            m.add(sum(self.k.values()) >= running - inst.max_preemptions)
        # C7 minimum share: t·D̃_u <= SHARE_SCALE·(Ũ_u + L̃·g_u), t in units of 1/SHARE_SCALE.
        included = data.included
        top = int(SHARE_SCALE * data.share_upper_bound()) + 1 if included else 0
        for u in included:
            top = min(top, _INT_BUDGET // max(1, u.deserved_units))
        self.t = m.new_int_var(0, max(0, top), "t")
        for u in included:
            row = [(v, SHARE_SCALE * data.round_units * n) for v, n in gpus[u.index]]
            m.add(u.deserved_units * self.t - _wsum(row) <= SHARE_SCALE * u.used_units)
        self.gpus = gpus
        restart = sum(j.restart_scaled for j in data.jobs if j.was_running)
        self.levels = (
            Level("L1", self.t + 0, maximize=True),
            Level("L2", _wsum(l2), maximize=True),
            Level("L3", _wsum(l3) + restart, maximize=False),
        )
        self._vars = [*self.x.values(), *self.k.values(), self.t, *self._chunks]

    def _single_host(self, kept_on) -> None:
        data, m = self.data, self.model
        for g, levels in data.levels.items():
            hosts = [h for h, hg in data.host_type.items() if hg == g]
            for s in levels:
                row = []
                for job in data.jobs:
                    for o, opt in enumerate(job.options):
                        if opt.gpu_type == g and opt.n >= s:
                            row.append((self.x[job.index, o], opt.n))
                            if o == job.prev_option:
                                row.append((self.k[job.index], -opt.n))
                if not row:
                    continue
                const = 0
                for h in hosts:
                    if h in kept_on:
                        c = m.new_int_var(0, data.free[h] // s, f"c[{h},{s}]")
                        self._chunks.append(c)
                        m.add(s * c + _wsum(kept_on[h]) <= data.free[h])
                        row.append((c, -s))
                    else:
                        const += s * (data.free[h] // s)
                m.add(_wsum(row) <= const)  # C3 capacity per host, placeable

    def hint(self, raw: list[Raw]) -> None:
        m, data = self.model, self.data
        m.clear_hints()
        for job, r in zip(data.jobs, raw, strict=True):
            for o in range(len(job.options)):
                m.add_hint(self.x[job.index, o], int(r.option == o))
            if job.index in self.k:
                m.add_hint(self.k[job.index], int(r.keep and r.option == job.prev_option))

    def hint_from(self, solver: cp_model.CpSolver) -> None:
        self.model.clear_hints()
        for v in self._vars:
            self.model.add_hint(v, solver.value(v))

    def extract(self, solver: cp_model.CpSolver) -> list[Raw]:
        raw = [Raw() for _ in self.data.jobs]
        for (j, o), v in self.x.items():
            if solver.boolean_value(v):
                raw[j].option = o
        for j, k in self.k.items():
            raw[j].keep = solver.boolean_value(k) and raw[j].option == self.data.jobs[j].prev_option
        return raw

    def fix_min_share(self, raw: list[Raw]) -> None:
        g = [0.0] * len(self.data.tenants)
        for job, r in zip(self.data.jobs, raw, strict=True):
            if r.option is not None:
                g[job.tenant] += job.options[r.option].n
        share = self.data.min_share(g)
        for u in self.data.included:
            need = self.data.min_gpus(u, share)
            if need:
                self.model.add(_wsum(self.gpus[u.index]) >= need)


def _wsum(pairs) -> cp_model.LinearExpr:
    pairs = list(pairs)
    if not pairs:
        return cp_model.LinearExpr.constant(0)
    return cp_model.LinearExpr.weighted_sum([v for v, _ in pairs], [c for _, c in pairs])


def solve(inst: FairshareInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
    t0 = time.perf_counter()
    data = build_data(inst, deadline=deadline)
    reason = data.too_big_for(deadline.remaining())
    if reason:
        return Outcome(Status.NO_SOLUTION, explanation=reason)
    trivial = trivial_outcome(data)
    if trivial is not None:
        return trivial
    model = FairshareCpsat(data, deadline)
    if options.hint is not None:
        model.hint(raw_from_solution(data, options.hint))
    build_s = time.perf_counter() - t0
    solve_s = 0.0
    best: list[Raw] | None = None
    bound: float | None = None
    proven = [False, False, False]
    stats: dict[str, float | str] = {}
    for i, level in enumerate(model.levels):
        budget = deadline.share(LEVEL_TIME_SHARE[i])
        if budget <= 0.01 and best is not None:
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
            # The full LP relaxation proves L2 and L3 (measured on the 1,024-GPU benchmark:
            # all levels OPTIMAL in 2.3 s instead of L2 unproven after 10 s).
            linearization_level=2,
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
                    explanation=explain_infeasible(data),
                    stats=stats,
                )
            if run.bound is not None:
                # t is floor(SHARE_SCALE · share): the real optimum is below (t_bound + 1)/S.
                bound = min((run.bound + 1) / SHARE_SCALE, data.share_upper_bound())
            if not run.status.has_solution:
                return Outcome(
                    Status.NO_SOLUTION,
                    bound=bound,
                    build_s=build_s,
                    solve_s=solve_s,
                    stats=stats,
                    explanation=f"no allocation found within the {budget:.3g} s given to L1",
                )
        if not run.status.has_solution:
            break
        proven[i] = run.status is Status.OPTIMAL
        best = model.extract(solver)
        if i == 0:
            model.fix_min_share(best)
            best = complete(data, best)  # a better start for L2, same L1
            model.hint(best)
        else:
            value = round(solver.objective_value)
            model.model.add(level.expr >= value if level.maximize else level.expr <= value)
            model.hint_from(solver)
    assert best is not None
    lp_metrics = gavel_stats(data, deadline)
    return Outcome(
        Status.OPTIMAL if all(proven) else Status.FEASIBLE,
        solution=assemble(data, best),
        bound=bound,
        build_s=build_s,
        solve_s=solve_s,
        stats=stats,
        metrics=lp_metrics,
    )
