"""MoE expert placement as a CP-SAT model (formulations/moe_placement.md, C1–C9, L1–L4).

Token shares are integers ``q[l,e,g]`` in ``0..Q`` (``Q = data.SHARE_RESOLUTION``), loads and
transfer times integer multiples of the units in ``data.py``. The model is exact for shares on
that grid; the continuous optimum can be lower by at most ``data.cpsat_tolerance_us``, which is
subtracted from the bound this back-end reports (so the bound is valid for the real problem).
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
from ortools.sat.python import cp_model

from schedopt.backends import cpsat as backend
from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline

from .data import (
    LEVEL_TIME_SHARE,
    SHARE_RESOLUTION,
    ModelData,
    Plan,
    symmetry_classes,
    symmetry_weights,
)
from .instance import MoePlacementInstance
from .validate import evaluate
from .warmstart import better_of, plan_values, prologue

Q = SHARE_RESOLUTION
#: Resolution of the weighted objective: each term's coefficients are scaled so that the
#: weighted sum is resolved to 1e-6 of the level-1 unit (see "Integer scaling").
WEIGHT_RESOLUTION = 1_000_000


class MoeCpsat:
    def __init__(self, data: ModelData):
        self.data = data
        m = self.model = cp_model.CpModel()
        self.x: dict[tuple[int, int, int], cp_model.IntVar] = {}
        self.q: dict[tuple[int, int, int], cp_model.IntVar] = {}
        self.u: dict[int, cp_model.IntVar] = {}
        self.w: dict[tuple[int, int], cp_model.IntVar] = {}
        self.z: list[cp_model.IntVar] = []
        mem_rows: list[list[tuple[cp_model.IntVar, int]]] = [[] for _ in range(data.G)]
        # Memory in integer units of 1/MEM_SCALE GiB, rounded *up* for items and *down* for
        # capacities so that every integer-feasible placement is feasible in GiB.
        mem_scale = 1_000_000
        extra: list[tuple[cp_model.IntVar, int]] = []
        single = 0
        comm_terms: list[tuple[cp_model.IntVar, int]] = []
        for i in range(data.L):
            A = data.int_load(i)
            C = data.int_comm(i)
            top = int(A.sum(axis=0).max()) * Q
            z = m.new_int_var(0, max(top, 0), f"z[{i}]")
            self.z.append(z)
            per_gpu: list[list[tuple[cp_model.IntVar, int]]] = [[] for _ in range(data.G)]
            for e in range(len(data.mem[i])):
                mi = math.ceil(float(data.mem[i][e]) * mem_scale - 1e-6)
                single += mi
                gs = np.flatnonzero(data.eligible[i][e])
                xs, qs = [], []
                for g in gs:
                    x = self.x[i, e, g] = m.new_bool_var(f"x[{i},{e},{g}]")
                    q = self.q[i, e, g] = m.new_int_var(0, Q, f"q[{i},{e},{g}]")
                    m.add(q <= Q * x)  # C4 tokens only to replicas
                    xs.append(x)
                    qs.append(q)
                    mem_rows[g].append((x, mi))
                    extra.append((x, mi))
                    if A[e, g]:
                        per_gpu[g].append((q, int(A[e, g])))
                    if C[e, g]:
                        comm_terms.append((q, int(C[e, g])))
                m.add_bool_or(xs)  # C2 at least one replica
                m.add(sum(qs) == Q)  # C3 shares sum to one
                if data.replica_cap < len(gs):
                    m.add(sum(xs) <= data.replica_cap)  # C5
            for g in range(data.G):  # C8 load below the layer's max
                if per_gpu[g]:
                    vs, cs = zip(*per_gpu[g], strict=True)
                    m.add(cp_model.LinearExpr.weighted_sum(vs, cs) <= z)
        for g in range(data.G):  # C1 memory per GPU
            if mem_rows[g]:
                vs, cs = zip(*mem_rows[g], strict=True)
                cap = math.floor(float(data.cap[g]) * mem_scale + 1e-6)
                m.add(cp_model.LinearExpr.weighted_sum(vs, cs) <= cap)
        if np.isfinite(data.extra_memory_gib):  # C6
            vs, cs = zip(*extra, strict=True)
            budget = single + math.floor(data.extra_memory_gib * mem_scale + 1e-6)
            m.add(cp_model.LinearExpr.weighted_sum(vs, cs) <= budget)
        if data.hierarchical:  # C7
            for i in range(data.L):
                ws = [m.new_bool_var(f"w[{i},{k}]") for k in range(data.n_groups)]
                for k, v in enumerate(ws):
                    self.w[i, k] = v
                m.add_exactly_one(ws)
                for (li, _, g), x in self.x.items():
                    if li == i:
                        m.add_implication(x, ws[int(data.group[g])])
        r = symmetry_weights(data)  # C10 symmetry, integer weights 1000·r
        for cls in symmetry_classes(data):
            for a, b in itertools.pairwise(cls):
                terms = []
                for (i, e, g), x in self.x.items():
                    if g in (a, b):
                        terms.append((x, round(1000 * r[i][e]) * (1 if g == a else -1)))
                vs, cs = zip(*terms, strict=True)
                m.add(cp_model.LinearExpr.weighted_sum(vs, cs) >= 0)
        by_gpu: list[list[cp_model.IntVar]] = [[] for _ in range(data.G)]
        for (_, _, g), x in self.x.items():
            by_gpu[g].append(x)
        for g in range(data.G):  # C9 GPU used
            if by_gpu[g]:
                u = self.u[g] = m.new_bool_var(f"u[{g}]")
                m.add_max_equality(u, by_gpu[g])
        l1 = sum(self.z)
        l2 = cp_model.LinearExpr.weighted_sum(*zip(*comm_terms, strict=True)) if comm_terms else 0
        l3 = sum(self.u.values())
        cur = data.current
        l4 = sum(x for (i, e, g), x in self.x.items() if cur is not None and not cur[i][e, g])
        self.units = (data.load_unit_us / Q, data.comm_unit_us / Q, 1.0, 1.0)
        exprs = [l1, l2, l3, l4]
        if data.weights is not None:
            # One integer objective: term t in units of units[t]; scale every coefficient to a
            # common unit (the smallest weighted unit / WEIGHT_RESOLUTION... bounded below by 1).
            scaled = [w * u for w, u in zip(data.weights, self.units, strict=True)]
            base = min(s for s in scaled if s > 0) / 1000.0
            mult = [round(s / base) for s in scaled]
            first = sum(k * ex for k, ex in zip(mult, exprs, strict=True) if k)
            self.first_unit = base
        else:
            first = l1
            self.first_unit = self.units[0]
        self.levels = [("W" if data.weights else "L1", first), ("L2", l2), ("L3", l3), ("L4", l4)]
        self._vars = [*self.x.values(), *self.q.values(), *self.u.values(), *self.w.values()]
        self._vars += self.z

    def hint(self, plan: Plan) -> None:
        """A complete hint: shares rounded to the grid by largest remainder (sum kept at Q)."""
        d = self.data
        m = self.model
        m.clear_hints()
        q_of: dict[tuple[int, int, int], int] = {}
        for i in range(d.L):
            for e in range(len(d.mem[i])):
                on = [g for g in np.flatnonzero(plan.x[i][e]) if (i, e, g) in self.x]
                if not on:
                    continue
                raw = np.array([plan.f[i][e, g] for g in on])
                raw = raw / raw.sum() * Q if raw.sum() > 0 else np.full(len(on), Q / len(on))
                base = np.floor(raw).astype(int)
                for k in np.argsort(-(raw - base))[: Q - int(base.sum())]:
                    base[k] += 1
                for g, v in zip(on, base, strict=True):
                    q_of[i, e, g] = int(v)
        for key, x in self.x.items():
            m.add_hint(x, int(plan.x[key[0]][key[1], key[2]]))
            m.add_hint(self.q[key], q_of.get(key, 0))
        pv = plan_values(d, plan)
        for g, u in self.u.items():
            m.add_hint(u, int(pv["used"][g]))
        for (i, k), w in self.w.items():
            m.add_hint(w, int(pv["groups"][i] == k))
        for i, z in enumerate(self.z):
            A = d.int_load(i)
            loads = [
                sum(int(A[e, g]) * q_of.get((i, e, g), 0) for e in range(len(d.mem[i])))
                for g in range(d.G)
            ]
            m.add_hint(z, max(loads))

    def hint_from(self, solver: cp_model.CpSolver) -> None:
        self.model.clear_hints()
        for v in self._vars:
            self.model.add_hint(v, solver.value(v))

    def extract(self, solver: cp_model.CpSolver) -> Plan:
        plan = self.data.empty_plan()
        for (i, e, g), x in self.x.items():
            if solver.boolean_value(x):
                plan.x[i][e, g] = True
                plan.f[i][e, g] = solver.value(self.q[i, e, g]) / Q
        return plan


def solve(inst: MoePlacementInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
    t0 = time.perf_counter()
    data, hint, early = prologue(inst, options, deadline)
    if early is not None:
        return early
    assert data is not None
    model = MoeCpsat(data)
    if hint is not None:
        model.hint(hint)
    build_s = time.perf_counter() - t0
    solve_s = 0.0
    best: Plan | None = None
    analytic = data.lower_bound()
    bound = analytic
    proven = [False] * 4
    stats: dict[str, float | str] = {"solver": "cpsat"}
    for i, (name, expr) in enumerate(model.levels):
        if i and isinstance(expr, int):  # constant level
            proven[i] = True
            continue
        budget = deadline.share(LEVEL_TIME_SHARE[i])
        if budget <= 0.01 and best is not None:
            break
        model.model.minimize(expr)
        gap = options.mip_gap
        if i == 0 and data.weights is None and analytic > 0:
            # The grid model is only accurate to δ: level 1 stops once proven within δ.
            gap = min(0.5, max(gap, data.cpsat_tolerance_us / (analytic + data.cpsat_tolerance_us)))
        solver = backend.make_solver(
            time_limit_s=max(budget, 0.01),
            mip_gap=gap,
            linearization_level=2,
            threads=options.threads,
            seed=options.seed,
            verbose=options.verbose,
        )
        run = backend.run(model.model, solver)
        solve_s += float(run.stats["wall_s"])
        stats[f"{name}_status"] = run.status.value
        if i == 0:
            if run.status is Status.INFEASIBLE:
                return Outcome(
                    Status.INFEASIBLE,
                    build_s=build_s,
                    solve_s=solve_s,
                    stats=stats,
                    explanation="no placement satisfies memory (C1), coverage (C2), the replica "
                    "caps (C5, C6) and the group rule (C7) together",
                )
            if run.bound is not None and data.weights is None:
                # A bound of the grid model; minus δ it is a bound of the continuous problem.
                bound = max(analytic, run.bound * model.first_unit - data.cpsat_tolerance_us)
        if not run.status.has_solution:
            break
        proven[i] = run.status is Status.OPTIMAL
        best = model.extract(solver)
        model.model.add(expr <= round(solver.objective_value))
        model.hint_from(solver)
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
    stats["grid_optimal"] = "yes" if all(proven) else "no"
    if hint_won:
        stats["hint_returned"] = "yes"
    # OPTIMAL needs a proof for the real (continuous-share) problem: the grid optimum plus
    # the gap to the valid bound must be within mip_gap.
    value = evaluate(inst, solution)[0]
    gap_ok = value - bound <= options.mip_gap * max(abs(value), 1e-9) + 1e-9 * max(1.0, value)
    status = Status.OPTIMAL if all(proven) and gap_ok else Status.FEASIBLE
    explanation = None
    if all(proven) and status is not Status.OPTIMAL:
        explanation = (
            f"optimal for token shares in 1/{Q} (every level proven); the continuous optimum "
            f"may be up to {data.cpsat_tolerance_us:.4g} µs lower (bound reported)"
        )
    return Outcome(
        status,
        solution=solution,
        bound=bound,
        build_s=build_s,
        solve_s=solve_s,
        stats=stats,
        explanation=explanation,
    )
