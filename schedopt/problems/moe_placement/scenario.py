"""The scenario MILP: one placement that is good across sampled popularity scenarios.

Scenarios ``s = 1..S`` are draws of every layer's popularity from the Dirichlet–multinomial
posterior of the routing counts (``posterior.py``, seeded by ``options.seed``). The placement
``x`` and the token split ``f`` are shared by all scenarios (a deployment has one routing
table); each scenario has its own per-layer maximum load ``z[s,l]`` (C8 per scenario). The
objective (S1 in the formulation) is the expected layer time ``(1/S) Σ_s Σ_l z[s,l]``, or with
``risk="cvar"`` its conditional value at risk at level ``alpha`` (Rockafellar–Uryasev:
``t + 1/((1-alpha) S) Σ_s max(0, Σ_l z[s,l] - t)``).

It optimises a different objective than the problem's L1 (the point estimate), so it never
claims OPTIMAL for the problem; ``stats`` carry its own status, objective and bound.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields
from typing import Literal

import numpy as np
import pulp

from schedopt.backends.milp import MilpSolver, solve_pulp
from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline

from .data import ModelData, Plan
from .heuristics import EplbParams, run_eplb
from .instance import MoePlacementInstance
from .milp import PlacementMilp, _lin
from .posterior import scenario_popularity
from .warmstart import prologue


@dataclass(frozen=True)
class ScenarioParams:
    scenarios: int = 16
    risk: Literal["expected", "cvar"] = "expected"
    alpha: float = 0.9

    def __post_init__(self) -> None:
        if self.scenarios < 1:
            raise ValueError(f"scenarios must be >= 1 (got {self.scenarios})")
        if self.risk not in ("expected", "cvar"):
            raise ValueError(f"risk must be 'expected' or 'cvar' (got {self.risk!r})")
        if not 0.0 <= self.alpha < 1.0:
            raise ValueError(f"alpha must be in [0, 1) (got {self.alpha})")


class ScenarioMilp(PlacementMilp):
    def __init__(
        self, data: ModelData, pops: list[list[tuple[float, ...]]], params: ScenarioParams
    ):
        super().__init__(data, "moe_placement_scenarios")
        prob = self.prob
        S = len(pops)
        self.pops = pops
        self.z = [[prob.add_variable(f"z_{s}_{i}", 0) for i in range(data.L)] for s in range(S)]
        for s in range(S):  # C8 per scenario
            for i in range(data.L):
                w = np.array(pops[s][i]) * data.cpt[i]
                a = w[:, None] / data.speed[None, :]
                for g in range(data.G):
                    row = [
                        (self.f[i, e, g], float(a[e, g]))
                        for e in range(len(data.mem[i]))
                        if (i, e, g) in self.f and a[e, g] > 0
                    ]
                    if row:
                        prob += _lin([*row, (self.z[s][i], -1)]) <= 0, f"C8_{s}_{i}_{g}"
        totals = [_lin((z, 1) for z in self.z[s]) for s in range(S)]
        if params.risk == "expected":
            self.objective = _lin((z, 1.0 / S) for zs in self.z for z in zs)
        else:
            t = prob.add_variable("t")
            xi = [prob.add_variable(f"xi_{s}", 0) for s in range(S)]
            for s in range(S):
                prob += xi[s] - totals[s] + t >= 0, f"S1_cvar_{s}"
            k = 1.0 / ((1.0 - params.alpha) * S)
            self.objective = _lin([(t, 1.0), *((v, k) for v in xi)])
            self.t, self.xi = t, xi
        prob.setObjective(self.objective)

    def hint(self, plan: Plan) -> dict[pulp.LpVariable, float]:
        values = self.placement_hint(plan)
        totals = []
        for s, zs in enumerate(self.z):
            tot = 0.0
            for i, z in enumerate(zs):
                values[z] = float(self.data.layer_loads(plan, i, np.array(self.pops[s][i])).max())
                tot += values[z]
            totals.append(tot)
        if hasattr(self, "t"):
            t = float(np.quantile(totals, 0.9))
            values[self.t] = t
            for s, v in enumerate(self.xi):
                values[v] = max(0.0, totals[s] - t)
        return values


def _params(given: dict) -> ScenarioParams:
    known = {f.name for f in fields(ScenarioParams)}
    unknown = set(given) - known
    if unknown:
        raise ValueError(f"unknown parameters {sorted(unknown)} for milp:scenario; known {known}")
    return ScenarioParams(**given)


def solve(inst: MoePlacementInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
    t0 = time.perf_counter()
    params = _params(options.params)
    S = params.scenarios if inst.has_routing_counts else 1
    data, hint, early = prologue(inst, options, deadline, factor=1.0 + 0.5 * S)
    if early is not None:
        return early
    assert data is not None
    rng = np.random.default_rng(options.seed)
    pops = scenario_popularity(inst, S, rng)
    model = ScenarioMilp(data, pops, params)
    start = hint if hint is not None else run_eplb(data, EplbParams())
    values = model.hint(start) if start is not None else None
    build_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    run = solve_pulp(
        model.prob,
        MilpSolver.HIGHS,
        time_limit_s=max(deadline.remaining(), 0.01),
        mip_gap=options.mip_gap,
        threads=options.threads,
        seed=options.seed,
        hint=values,
        msg=options.verbose,
    )
    solve_s = time.perf_counter() - t1
    stats: dict[str, float | str] = {
        "scenarios": float(S),
        "risk": params.risk,
        "scenario_status": run.status.value,
    }
    if run.objective is not None:
        stats["scenario_objective_us"] = float(run.objective)
    if run.bound is not None:
        stats["scenario_bound_us"] = float(run.bound)
    if run.status is Status.INFEASIBLE:
        return Outcome(
            Status.INFEASIBLE,
            build_s=build_s,
            solve_s=solve_s,
            stats=stats,
            explanation="no placement satisfies C1, C2, C5, C6 and C7 together",
        )
    plan = model.extract() if run.status.has_solution else start
    if plan is None:
        return Outcome(
            Status.NO_SOLUTION,
            bound=data.lower_bound(),
            build_s=build_s,
            solve_s=solve_s,
            stats=stats,
        )
    return Outcome(
        Status.FEASIBLE,
        solution=data.to_solution(plan),
        bound=data.lower_bound(),
        build_s=build_s,
        solve_s=solve_s,
        stats=stats,
        explanation=f"placement minimising the {params.risk} layer time over {S} posterior "
        "scenarios (not the point-estimate objective, so never OPTIMAL for it)",
    )
