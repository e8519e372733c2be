"""``decomp:rate``: the fixed-time decomposition of the template model (formulations/
reconfig.md, R1–R4; #17). Where the monolithic MILP's bound is weak (the product pipelines ×
micro-batches), this method bisects on the pipe time: each step a small packing MILP or LP, its
bound proven step by step, its plan the best fixed-time plan found (or the start's, if better).
``auto`` runs it past a size (``route``)."""

from __future__ import annotations

import time

from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline

from .data import build_data
from .exact import finish, refuse, warm_start
from .instance import ReconfigInstance
from .plan import first_level_us, realise
from .rate import search

NAME = "decomp:rate"
#: ``auto`` runs ``decomp:rate`` rather than the monolithic MILP from this many surviving
#: GPUs on (measured in benchmarks/RESULTS.md, #17: the MILP's gap at 256 GPUs was 49%).
ROUTE_GPUS = 128


def route(inst: ReconfigInstance) -> str:
    """The exact method ``auto`` runs for ``inst`` (ProblemSpec.auto_route), by size alone."""
    usable = inst.cluster.num_gpus - len(inst.failed_gpus)
    return NAME if usable >= ROUTE_GPUS else "milp:highs"


def solve(inst: ReconfigInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
    t0 = time.perf_counter()
    data = build_data(inst, deadline)
    early = refuse(data)
    if early is not None:
        return early
    start = warm_start(data, options.hint, deadline)
    build_s = time.perf_counter() - t0
    raw, bound_us, counts = search(data, start, deadline)
    solve_s = time.perf_counter() - t0 - build_s
    stats = {**counts, "templates": float(len(data.templates)), "kept_kinds": float(len(data.kept))}
    sol = None if raw is None else realise(data, raw)
    bound = None if bound_us is None else bound_us / 1e6
    if sol is None:
        return finish(
            inst,
            Outcome(
                Status.NO_SOLUTION,
                bound=bound,
                build_s=build_s,
                solve_s=solve_s,
                stats=stats,
                explanation="no fixed-time plan found in time (not a proof)",
            ),
        )
    assert raw is not None
    if bound_us is not None and bound_us >= first_level_us(data, raw):
        stats["first_level_proven"] = 1.0  # L1 optimal over the templates; L2, L3 not solved
    return finish(
        inst,
        Outcome(
            Status.FEASIBLE,
            sol,
            bound=bound,
            build_s=build_s,
            solve_s=solve_s,
            stats=stats,
            from_hint=raw is start and options.hint is not None,
        ),
    )
