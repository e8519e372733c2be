"""MoE expert placement as a MILP in PuLP, solved by HiGHS or CBC (formulations/moe_placement.md,
C1–C9, levels L1–L4). Binary placement ``x[l,e,g]``, continuous token fractions ``f[l,e,g]``."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

import numpy as np
import pulp

from schedopt.backends.milp import MilpSolver, solve_pulp, var_value, write_model
from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline

from .data import (
    LEVEL_TIME_SHARE,
    LEX_REL_TOL,
    ModelData,
    Plan,
    build_data,
    symmetry_classes,
    symmetry_weights,
)
from .instance import MoePlacementInstance
from .warmstart import better_of, plan_values, prologue


def _lin(pairs) -> pulp.LpAffineExpression:
    return pulp.LpAffineExpression(list(pairs))


@dataclass(frozen=True)
class MilpLevel:
    name: str
    expr: pulp.LpAffineExpression
    integral: bool  # integer-valued (fixed with a half unit of slack) or continuous


class PlacementMilp:
    """C1–C7 and C9 (what every MILP of this problem shares); the load rows C8 are added by
    :class:`MoeMilp` (point estimate) or ``scenario.ScenarioMilp`` (one set per scenario)."""

    def __init__(self, data: ModelData, name: str = "moe_placement"):
        self.data = data
        prob = self.prob = pulp.LpProblem(name, pulp.LpMinimize)
        self.x: dict[tuple[int, int, int], pulp.LpVariable] = {}
        self.f: dict[tuple[int, int, int], pulp.LpVariable] = {}
        self.u: dict[int, pulp.LpVariable] = {}
        self.w: dict[tuple[int, int], pulp.LpVariable] = {}
        mem_rows: list[list[tuple[pulp.LpVariable, float]]] = [[] for _ in range(data.G)]
        extra_row: list[tuple[pulp.LpVariable, float]] = []
        single = 0.0
        for i in range(data.L):
            for e in range(len(data.mem[i])):
                m = float(data.mem[i][e])
                single += m
                gs = np.flatnonzero(data.eligible[i][e])
                for g in gs:
                    self.x[i, e, g] = prob.add_variable(f"x_{i}_{e}_{g}", cat=pulp.LpBinary)
                    self.f[i, e, g] = prob.add_variable(f"f_{i}_{e}_{g}", 0, 1)
                    mem_rows[g].append((self.x[i, e, g], m))
                    extra_row.append((self.x[i, e, g], m))
                    # C4 tokens only to GPUs holding a replica
                    prob += (
                        _lin([(self.f[i, e, g], 1), (self.x[i, e, g], -1)]) <= 0,
                        (f"C4_{i}_{e}_{g}"),
                    )
                xs = [(self.x[i, e, g], 1) for g in gs]
                prob += _lin(xs) >= 1, f"C2_{i}_{e}"  # C2 at least one replica
                prob += _lin((self.f[i, e, g], 1) for g in gs) == 1, f"C3_{i}_{e}"  # C3
                if data.replica_cap < len(gs):  # C5 replicas per expert
                    prob += _lin(xs) <= data.replica_cap, f"C5_{i}_{e}"
        for g in range(data.G):  # C1 memory per GPU
            if mem_rows[g]:
                prob += _lin(mem_rows[g]) <= float(data.cap[g]), f"C1_{g}"
        if np.isfinite(data.extra_memory_gib):  # C6 extra memory for replicas
            prob += _lin(extra_row) <= single + data.extra_memory_gib, "C6"
        if data.hierarchical:  # C7 a layer's experts inside one group
            for i in range(data.L):
                for k in range(data.n_groups):
                    self.w[i, k] = prob.add_variable(f"w_{i}_{k}", cat=pulp.LpBinary)
                prob += _lin((self.w[i, k], 1) for k in range(data.n_groups)) == 1, f"C7a_{i}"
                for g in range(data.G):
                    row = [
                        (self.x[i, e, g], 1) for e in range(len(data.mem[i])) if (i, e, g) in self.x
                    ]
                    if row:
                        k = int(data.group[g])
                        prob += _lin([*row, (self.w[i, k], -len(row))]) <= 0, f"C7b_{i}_{g}"
        # C10 symmetry: interchangeable GPUs ordered by a weighted count of their replicas.
        r = symmetry_weights(data)
        for cls in symmetry_classes(data):
            for a, b in itertools.pairwise(cls):
                row = []
                for i in range(data.L):
                    for e in range(len(data.mem[i])):
                        if (i, e, a) in self.x:
                            row.append((self.x[i, e, a], float(r[i][e])))
                            row.append((self.x[i, e, b], -float(r[i][e])))
                prob += _lin(row) >= 0, f"C10_{a}_{b}"
        by_gpu: list[list[pulp.LpVariable]] = [[] for _ in range(data.G)]
        for (_, _, g), v in self.x.items():
            by_gpu[g].append(v)
        for g in range(data.G):  # C9 GPU used
            if by_gpu[g]:
                u = self.u[g] = prob.add_variable(f"u_{g}", cat=pulp.LpBinary)
                prob += _lin([*((v, 1) for v in by_gpu[g]), (u, -len(by_gpu[g]))]) <= 0, f"C9_{g}"

    # --- level expressions ----------------------------------------------------------------
    def comm_expr(self) -> pulp.LpAffineExpression:
        d = self.data
        return _lin(
            (v, float(d.pop[i][e] * d.comm[g])) for (i, e, g), v in self.f.items() if d.comm[g]
        )

    def used_expr(self) -> pulp.LpAffineExpression:
        return _lin((u, 1) for u in self.u.values())

    def moved_expr(self) -> pulp.LpAffineExpression:
        cur = self.data.current
        if cur is None:
            return _lin([])
        return _lin((v, 1) for (i, e, g), v in self.x.items() if not cur[i][e, g])

    # --- hints and answers ----------------------------------------------------------------
    def placement_hint(self, plan: Plan) -> dict[pulp.LpVariable, float]:
        d = self.data
        values: dict[pulp.LpVariable, float] = {}
        for (i, e, g), v in self.x.items():
            values[v] = float(plan.x[i][e, g])
            values[self.f[i, e, g]] = float(plan.f[i][e, g]) if plan.x[i][e, g] else 0.0
        pv = plan_values(d, plan)
        for g, u in self.u.items():
            values[u] = float(pv["used"][g])
        for (i, k), v in self.w.items():
            values[v] = float(pv["groups"][i] == k)
        return values

    def extract(self) -> Plan:
        plan = self.data.empty_plan()
        for (i, e, g), v in self.x.items():
            if var_value(v) > 0.5:
                plan.x[i][e, g] = True
                plan.f[i][e, g] = max(0.0, var_value(self.f[i, e, g]))
        return plan

    def current_values(self) -> dict[pulp.LpVariable, float]:
        """The solver's values as the next level's warm start, clipped into the variables'
        bounds (solvers return values a tolerance outside them; CBC refuses such a start)."""
        out = {}
        for v in self.prob.variables():
            x = var_value(v)
            if v.lowBound is not None:
                x = max(x, v.lowBound)
            if v.upBound is not None:
                x = min(x, v.upBound)
            if v.cat == pulp.LpInteger:
                x = float(round(x))
            out[v] = x
        return out


class MoeMilp(PlacementMilp):
    """The point-estimate model: C8 per-layer max load z_l, levels L1–L4."""

    def __init__(self, data: ModelData):
        super().__init__(data)
        prob = self.prob
        self.z = [prob.add_variable(f"z_{i}", 0) for i in range(data.L)]
        for i in range(data.L):  # C8 load of every GPU below the layer's max
            a = data.work(i)[:, None] / data.speed[None, :]
            for g in range(data.G):
                row = [
                    (self.f[i, e, g], float(a[e, g]))
                    for e in range(len(data.mem[i]))
                    if (i, e, g) in self.f and a[e, g] > 0
                ]
                if row:
                    prob += _lin([*row, (self.z[i], -1)]) <= 0, f"C8_{i}_{g}"
        l1 = _lin((z, 1) for z in self.z)
        l2, l3, l4 = self.comm_expr(), self.used_expr(), self.moved_expr()
        if data.weights is not None:
            wl, wc, wg, wm = data.weights
            first = MilpLevel("W", wl * l1 + wc * l2 + wg * l3 + wm * l4, False)
        else:
            first = MilpLevel("L1", l1, False)
        self.levels = (
            first,
            MilpLevel("L2", l2, False),
            MilpLevel("L3", l3, True),
            MilpLevel("L4", l4, True),
        )

    def hint(self, plan: Plan) -> dict[pulp.LpVariable, float]:
        values = self.placement_hint(plan)
        for i, z in enumerate(self.z):
            values[z] = float(self.data.layer_loads(plan, i).max())
        return values


def fix_level(prob: pulp.LpProblem, level: MilpLevel, value: float) -> None:
    """Keep a solved level at what it achieved ("How the order is kept")."""
    slack = 0.5 if level.integral else LEX_REL_TOL * max(1.0, abs(value))
    prob += level.expr <= value + slack, f"fix_{level.name}"


def make_solver(solver: MilpSolver):
    def solve(inst: MoePlacementInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
        t0 = time.perf_counter()
        data, hint, early = prologue(inst, options, deadline)
        if early is not None:
            return early
        assert data is not None
        model = MoeMilp(data)
        values = model.hint(hint) if hint is not None else None
        build_s = time.perf_counter() - t0
        return lexicographic(model, solver, options, deadline, hint, values, build_s)

    return solve


def lexicographic(
    model: MoeMilp,
    solver: MilpSolver,
    options: SolveOptions,
    deadline: Deadline,
    hint: Plan | None,
    values: dict | None,
    build_s: float,
) -> Outcome:
    data = model.data
    solve_s = 0.0
    best: Plan | None = None
    bound = data.lower_bound()
    proven = [False] * len(model.levels)
    stats: dict[str, float | str] = {"solver": solver.value}
    for i, level in enumerate(model.levels):
        if i and not level.expr.keys():  # a constant level (no current placement, ...)
            proven[i] = True
            continue
        budget = deadline.share(LEVEL_TIME_SHARE[i])
        if budget <= 0.01 and best is not None:
            break
        model.prob.setObjective(level.expr)
        t1 = time.perf_counter()
        run = solve_pulp(
            model.prob,
            solver,
            time_limit_s=max(budget, 0.01),
            mip_gap=options.mip_gap,
            threads=options.threads,
            seed=options.seed,
            hint=values,
            msg=options.verbose,
        )
        solve_s += time.perf_counter() - t1
        stats[f"{level.name}_status"] = run.status.value
        stats.update(run.surfaced(level.name))  # how CBC ended, if not normally
        if i == 0:
            if run.bound is not None:
                bound = max(bound, run.bound)
            if run.status is Status.INFEASIBLE:
                return Outcome(
                    Status.INFEASIBLE,
                    build_s=build_s,
                    solve_s=solve_s,
                    stats=stats,
                    explanation="no placement satisfies memory (C1), coverage (C2), the replica "
                    "caps (C5, C6) and the group rule (C7) together",
                )
        if not run.status.has_solution:
            break
        candidate = model.extract()
        if not all(x.any(axis=1).all() for x in candidate.x):
            # CBC answered "optimal" with every x at 0 on two fuzzed instances (its f > x
            # rows broken too; HiGHS right on the same model): a point that breaks C2 is not
            # trusted, and the levels solved so far stand (unproven).
            stats[f"{level.name}_status"] = "rejected: the solver's point breaks C2"
            break
        proven[i] = run.status is Status.OPTIMAL
        best = candidate
        values = model.current_values()
        fix_level(model.prob, level, float(run.objective or 0.0))
    solution = data.to_solution(best) if best is not None else None
    solution, hint_won = better_of(data, solution, hint)
    if solution is None:
        return Outcome(
            Status.NO_SOLUTION,
            bound=bound,
            build_s=build_s,
            solve_s=solve_s,
            stats=stats,
            explanation="the solver found no placement within the time limit (pass a hint, "
            "e.g. from heuristic:eplb, or use method='auto')",
        )
    if hint_won:
        stats["hint_returned"] = "yes"
    # A hint that beats a solution proven optimal at every level is optimal too (the proof
    # bounds every feasible vector, the hint's included); it only won within solver tolerance.
    status = Status.OPTIMAL if all(proven) else Status.FEASIBLE
    return Outcome(
        status, solution=solution, bound=bound, build_s=build_s, solve_s=solve_s, stats=stats
    )


def export(inst: MoePlacementInstance, path: str, fmt: str) -> None:
    """Write the level-1 model (minimise Σ_l max load, or the weighted sum) as MPS or LP."""
    model = MoeMilp(build_data(inst))
    first = model.levels[0]
    model.prob.setObjective(first.expr)
    if first.name == "W":
        level = "W, minimise the weighted sum of the four levels (objective.weights)"
    else:
        level = "L1 of 4, minimise the sum over layers of the layer's max GPU load (µs)"
    write_model(
        model.prob,
        path,
        fmt,
        level=level,
        notes=(
            "objective scale: 1 (no scaling: the optimum is schedopt's first objective)",
            "later levels are solved after the first is fixed; they are not in this file",
        ),
    )
