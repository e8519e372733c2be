"""The scenario MILP: one placement that is good across sampled popularity scenarios.

Scenarios ``s = 1..S`` are draws of every layer's popularity from the Dirichlet–multinomial
posterior of the routing counts (``posterior.py``, seeded by ``options.seed``). The placement
``x`` and the token split ``f`` are shared by all scenarios (a deployment has one routing
table); each scenario has its own per-layer maximum load ``z[s,l]`` (C8 per scenario). The
objective (S1 in the formulation) is the expected layer time ``(1/S) Σ_s Σ_l z[s,l]``, or with
``risk="cvar"`` its conditional value at risk at level ``alpha`` (Rockafellar–Uryasev:
``t + 1/((1-alpha) S) Σ_s max(0, Σ_l z[s,l] - t)``).

Written on the model layer (MILP only, solved by HiGHS): the placement part is model.py's
(``placement_columns``/``placement_rows``, C1–C7, C9, C10), the scenario C8 rows and S1 are
this module's, S1 the model's single level.

It optimises a different objective than the problem's L1 (the point estimate), so it never
claims OPTIMAL for the problem; ``stats`` carry its own status, objective and bound.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields
from typing import Literal

import numpy as np

from schedopt.backends.first_import import HIGHS, import_solver
from schedopt.core.gates import first_import_deadline
from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, DeadlineReached
from schedopt.model import MILP_ONLY, Expr, Level, Model, Sense, VarKind, Vars

from .codec import decode_placement, encode_placement
from .data import ModelData, Plan
from .heuristics import EplbParams, run_eplb
from .instance import MoePlacementInstance
from .model import layer_load_rows, placement_columns, placement_rows
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


@dataclass(frozen=True)
class ScenarioModel:
    model: Model
    data: ModelData
    pops: list[list[tuple[float, ...]]]
    x: Vars
    f: Vars
    u: Vars
    w: Vars
    #: z[s, l]: layer l's max GPU load in scenario s (µs).
    z: Vars
    #: CVaR only: the value-at-risk t and the excess xi[s] = max(0, Σ_l z[s,l] − t).
    t: Vars | None
    xi: Vars | None


def build_scenario_model(
    data: ModelData,
    pops: list[list[tuple[float, ...]]],
    params: ScenarioParams,
    deadline: Deadline | None = None,
) -> ScenarioModel:
    m = Model("moe_placement_scenarios", deadline)
    S, L = len(pops), data.L
    x, f = placement_columns(m, data)
    u, w = placement_rows(m, data, x, f)
    z = m.add_vars(
        "z", [(s, i) for s in range(S) for i in range(L)], VarKind.CONTINUOUS, 0.0, np.inf
    )
    with m.rows("C8", backends=MILP_ONLY) as c8:  # C8 per scenario
        for s in range(S):
            for i in range(L):
                m.tick()
                a = (np.array(pops[s][i]) * data.cpt[i])[:, None] / data.speed[None, :]
                layer_load_rows(c8, data, f, i, a, z[s, i])
    t = xi = None
    if params.risk == "expected":
        objective = Expr.of(z.cols, np.full(len(z), 1.0 / S))
    else:
        t = m.add_vars("t", [("t",)], VarKind.CONTINUOUS, -np.inf, np.inf)
        xi = m.add_vars("xi", [(s,) for s in range(S)], VarKind.CONTINUOUS, 0.0, np.inf)
        with m.rows("S1", backends=MILP_ONLY) as cvar:  # xi_s ≥ Σ_l z[s,l] − t
            for s in range(S):
                zs = [z[s, i] for i in range(L)]
                cvar.add([xi[s,], *zs, t["t",]], [1.0, *([-1.0] * L), 1.0], lo=0.0)
        k = 1.0 / ((1.0 - params.alpha) * S)
        objective = Expr.of([t["t",], *xi.cols], [1.0, *([k] * S)])
    m.add_level(Level("S1", objective, Sense.MINIMIZE))
    return ScenarioModel(m, data, pops, x, f, u, w, z, t, xi)


def encode(sm: ScenarioModel, plan: Plan) -> np.ndarray:
    """A complete point from a plan: the placement (its own shares, the model is MILP only),
    z[s, l] the plan's layer loads under scenario s, and for CVaR t at the 0.9 quantile of the
    scenario totals and xi their excess over it."""
    d = sm.data
    values = np.zeros(sm.model.num_cols)
    encode_placement(d, (sm.x, sm.f, sm.u, sm.w), plan, values, on_grid=False)
    totals = []
    for s, pop in enumerate(sm.pops):
        tot = 0.0
        for i in range(d.L):
            load = float(d.layer_loads(plan, i, np.array(pop[i])).max())
            values[sm.z[s, i]] = load
            tot += load
        totals.append(tot)
    if sm.t is not None and sm.xi is not None:
        t = float(np.quantile(totals, 0.9))
        values[sm.t["t",]] = t
        for s, tot in enumerate(totals):
            values[sm.xi[s,]] = max(0.0, tot - t)
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
    sm = build_scenario_model(data, pops, params, deadline)
    start = hint if hint is not None else run_eplb(data, EplbParams())
    try:  # HiGHS's first import gated (deterministic mode: not)
        import_solver(HIGHS, first_import_deadline(deadline, options.deterministic))
    except DeadlineReached as stop:  # the start stands, if there is one
        kept = None if start is None else data.to_solution(start)
        status = Status.NO_SOLUTION if kept is None else Status.FEASIBLE
        return Outcome(status, solution=kept, bound=data.lower_bound(), explanation=str(stop))
    from schedopt.model.emit_highs import HighsSession  # on first use

    session = HighsSession(sm.model, options.verbose)
    session.set_level(sm.model.levels[0])
    session.set_hint(encode(sm, start) if start is not None else None)
    build_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    # deterministic mode: HiGHS's node budget is sized by the limit, not by the time the clock
    # says is left (the run's wall time is only capped by the runaway cap, emit_highs.py)
    seconds = options.time_limit_s if options.deterministic else deadline.remaining()
    try:
        run = session.run(max(seconds, 0.01), options)
    finally:
        session.close()
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
    plan = (
        decode_placement(data, sm.x, sm.f, run.values)
        if run.status.has_solution and run.values is not None
        else start
    )
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
