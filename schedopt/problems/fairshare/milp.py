"""Fair share as a MILP in PuLP, solved by HiGHS or CBC (formulations/fairshare.md, C1–C7).

The MILP uses the real coefficients (no scaling): it is the reference for the golden optima.
"""

from __future__ import annotations

import time

import pulp

from schedopt.backends.milp import MilpSolver, solve_pulp, var_value, write_model
from schedopt.core.lexico import LEVEL_TIME_SHARE, Level, no_time_to_hand_over
from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, Ticker

from .data import ModelData, build_data
from .explain import explain_infeasible, gavel_stats, trivial_outcome
from .heuristics import complete
from .instance import FairshareInstance
from .placement import Raw, assemble, raw_from_solution

#: L2 is fixed at its value minus this fraction (solver tolerances).
L2_REL_TOL = 1e-6
#: Time kept back per model variable for a solver's overrun of its limit (see ``solve``).
SOLVER_OVERRUN_S_PER_VARIABLE = 3e-5


def _lin(pairs) -> pulp.LpAffineExpression:
    return pulp.LpAffineExpression(list(pairs))


class FairshareMilp:
    def __init__(self, data: ModelData, deadline: Deadline | None = None):
        tick = Ticker(deadline, "building the MILP")
        self.data = data
        prob = self.prob = pulp.LpProblem("fairshare", pulp.LpMaximize)
        self.x: dict[tuple[int, int], pulp.LpVariable] = {}
        self.k: dict[int, pulp.LpVariable] = {}
        top = data.share_upper_bound()
        # t <= the share with every demand met, as a row (CBC rejects columns fixed by bounds)
        self.t = prob.add_variable("t", 0)
        prob += _lin([(self.t, 1.0)]) <= max(top, 0.0), "t_top"
        self.t_top = max(top, 0.0)
        gpus: dict[int, list[tuple[pulp.LpVariable, float]]] = {u.index: [] for u in data.tenants}
        by_type: dict[str, list[tuple[pulp.LpVariable, float]]] = {}
        l2, l3 = [], []
        for job in data.jobs:
            tick()
            j = job.index
            xs = []
            for o, opt in enumerate(job.options):
                v = self.x[j, o] = prob.add_variable(f"x_{j}_{o}", cat=pulp.LpBinary)
                xs.append(v)
                gpus[job.tenant].append((v, opt.n))
                by_type.setdefault(opt.gpu_type, []).append((v, opt.n))
                l2.append((v, opt.eff))
                if opt.extra_hosts:
                    l3.append((v, data.frag_cost * opt.extra_hosts))
            if len(xs) > 1:
                prob += _lin((v, 1) for v in xs) <= 1, f"C1_{j}"  # C1 gang, one type
            if job.keepable:
                k = self.k[j] = prob.add_variable(f"k_{j}", cat=pulp.LpBinary)
                prob += _lin([(k, 1), (self.x[j, job.prev_option], -1)]) <= 0, f"C4a_{j}"
                if job.restart_cost:
                    l3.append((k, -job.restart_cost))
        for g, row in by_type.items():  # C2 capacity per type
            prob += _lin(row) <= data.type_capacity[g], f"C2_{g}"
        kept_on: dict[str, list[tuple[pulp.LpVariable, float]]] = {}
        for h, entries in data.keep_hosts.items():
            kept_on[h] = [(self.k[j], n) for j, n in entries]
            if sum(n for _, n in entries) > data.free[h]:  # C4 kept allocations fit
                prob += _lin(kept_on[h]) <= data.free[h], f"C4b_{h}"
        if not data.multi_host:
            self._single_host(kept_on)
        for u in data.tenants:
            if u.guarantee:  # C5 hard guarantees
                prob += _lin(gpus[u.index]) >= u.guarantee, f"C5_{u.index}"
        inst = data.instance
        running = sum(1 for j in data.jobs if j.was_running)
        if inst.max_preemptions is not None and running > inst.max_preemptions:  # C6 cap
            prob += (
                _lin((k, 1) for k in self.k.values()) >= running - inst.max_preemptions,
                "C6",
            )
        for u in data.included:  # C7 minimum share, divided through by D'_u
            row = [(self.t, 1.0)] + [
                (v, -data.round_s * n / u.deserved_after_s) for v, n in gpus[u.index]
            ]
            prob += _lin(row) <= u.used_s / u.deserved_after_s, f"C7_{u.index}"
        self.gpus = gpus
        l3_expr = _lin(l3) + data.restart_constant
        self.levels = (
            Level("L1", _lin([(self.t, 1.0)]), maximize=True),
            Level("L2", _lin(l2), maximize=True),
            Level("L3", l3_expr, maximize=False),
        )
        prob.setObjective(self.levels[0].expr)

    def _single_host(self, kept_on) -> None:
        """C3 per size level; chunks left on hosts with kept jobs are variables."""
        data, prob = self.data, self.prob
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
                        c = prob.add_variable(
                            f"c_{h}_{s}", 0, data.free[h] // s, cat=pulp.LpInteger
                        )
                        prob += _lin([(c, s)] + kept_on[h]) <= data.free[h], f"C3c_{h}_{s}"
                        row.append((c, -s))
                    else:
                        const += s * (data.free[h] // s)
                prob += _lin(row) <= const, f"C3_{g}_{s}"

    def hint(self, raw: list[Raw]) -> dict[pulp.LpVariable, float]:
        data, values = self.data, {}
        g = [0.0] * len(data.tenants)
        for job, r in zip(data.jobs, raw, strict=True):
            for o in range(len(job.options)):
                values[self.x[job.index, o]] = float(r.option == o)
            if r.option is not None:
                g[job.tenant] += job.options[r.option].n
            if job.index in self.k:
                values[self.k[job.index]] = float(r.keep and r.option == job.prev_option)
        values[self.t] = min(max(0.0, data.min_share(g)), self.t_top)
        return values

    def current_values(self) -> dict[pulp.LpVariable, float]:
        """The incumbent as a MIP start: integers rounded, values clamped to their bounds."""
        out = {}
        for v in self.prob.variables():
            x = var_value(v)
            if v.cat == pulp.LpInteger:
                x = float(round(x))
            if v.upBound is not None:
                x = min(x, v.upBound)
            if v.lowBound is not None:
                x = max(x, v.lowBound)
            out[v] = x
        return out

    def extract(self) -> list[Raw]:
        raw = [Raw() for _ in self.data.jobs]
        for (j, o), v in self.x.items():
            if var_value(v) > 0.5:
                raw[j].option = o
        for j, k in self.k.items():
            raw[j].keep = var_value(k) > 0.5 and raw[j].option == self.data.jobs[j].prev_option
        return raw

    def tenant_gpus(self, raw: list[Raw]) -> list[float]:
        g = [0.0] * len(self.data.tenants)
        for job, r in zip(self.data.jobs, raw, strict=True):
            if r.option is not None:
                g[job.tenant] += job.options[r.option].n
        return g

    def fix_min_share(self, raw: list[Raw]) -> None:
        """Fix L1 exactly: every counted tenant keeps the whole GPUs the minimum needs."""
        share = self.data.min_share(self.tenant_gpus(raw))
        for u in self.data.included:
            m = self.data.min_gpus(u, share)
            if m:
                self.prob += _lin(self.gpus[u.index]) >= m, f"fix_L1_{u.index}"


def make_solver(solver: MilpSolver):
    def solve(inst: FairshareInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
        t0 = time.perf_counter()
        data = build_data(inst, deadline=deadline)
        reason = data.too_big_for(deadline.remaining())
        if reason:
            return Outcome(Status.NO_SOLUTION, explanation=reason)
        trivial = trivial_outcome(data)
        if trivial is not None:
            return trivial
        model = FairshareMilp(data, deadline)
        hint = model.hint(raw_from_solution(data, options.hint)) if options.hint else None
        build_s = time.perf_counter() - t0
        late = no_time_to_hand_over(deadline, build_s)
        if late:
            return Outcome(Status.NO_SOLUTION, build_s=build_s, explanation=late)
        solve_s = 0.0
        best: list[Raw] | None = None
        bound: float | None = None
        proven = [False, False, False]
        stats: dict[str, float | str] = {}
        # HiGHS overruns its limit by its set-up of the model (measured 0.25–1.0 s at 18k
        # variables, even with a start): keep that much back on every level after the first,
        # and skip a later level whose share would be smaller than that.
        reserve = data.num_variables * SOLVER_OVERRUN_S_PER_VARIABLE
        for i, level in enumerate(model.levels):
            budget = deadline.share(LEVEL_TIME_SHARE[i], reserve_s=reserve if i else 0.0)
            if best is not None and (budget <= 0.01 or budget < reserve):
                break  # too little time to improve a later level: keep what we have
            if i > 0 and not level.expr.keys():  # a constant level: nothing to decide
                proven[i] = True
                continue
            model.prob.sense = pulp.LpMaximize if level.maximize else pulp.LpMinimize
            model.prob.setObjective(level.expr)
            if hint:  # CBC refuses a start naming a variable the model no longer has
                present = {v.name for v in model.prob.variables()}
                hint = {v: x for v, x in hint.items() if v.name in present}
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
                        explanation=explain_infeasible(data),
                    )
                bound = run.bound
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
            best = model.extract()
            hint = model.current_values()
            if i == 0:
                model.fix_min_share(best)
                best = complete(data, best)  # a better start for L2, same L1
                hint = model.hint(best)
            elif i == 1:
                value = run.objective or 0.0
                model.prob += level.expr >= value - L2_REL_TOL * max(1.0, abs(value)), "fix_L2"
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

    return solve


def export(inst: FairshareInstance, path: str, fmt: str) -> None:
    """Write the level-1 model (maximise the minimum LTGF) as MPS or LP."""
    write_model(
        FairshareMilp(build_data(inst)).prob,
        path,
        fmt,
        level="L1 of 3, maximise t, the minimum long-term GPU fair share (LTGF) of a tenant",
        notes=(
            "objective scale: 1 (no scaling: the optimum is schedopt's minimum LTGF)",
            "L2 (effective throughput) and L3 (restart + fragmentation cost) are solved after "
            "L1 is fixed; they are not in this file",
        ),
    )
