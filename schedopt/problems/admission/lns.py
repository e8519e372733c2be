"""Large-neighbourhood search on the CP-SAT model: the method for instances too big to solve.

Measured (benchmarks/RESULTS.md): past about 250 GPUs and 800 contested jobs, the monolithic
exact models find no solution in 10 s, and the heuristics stay 10–20% under the bound. LNS
keeps a solution (the better heuristic's) and repeatedly frees a random part of it: the SLO
jobs whose plans are freed are re-decided by CP-SAT, with every other SLO job fixed to its
current plan and best-effort jobs left out (they are re-planned greedily at the end). An
improvement of the guaranteed value (L1) is kept. Every step is a feasible plan, so the method
can stop at any time; it proves nothing and says so (FEASIBLE).
"""

from __future__ import annotations

import contextlib
import math
import sys
import time
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from schedopt.backends.first_import import CPSAT
from schedopt.core.gates import gate_slowdown
from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, DeadlineReached

from .assemble import assemble, guaranteed_value, raw_from_solution
from .codec import decode, encode
from .data import MAX_MODEL_VARIABLES, VALUE_SCALE, build_data
from .exact import AdmissionHooks
from .heuristics import (
    EdfParams,
    SlackParams,
    assemble_reserve_s,
    refill_best_effort,
    run_edf,
    run_slack,
    tuned_or_shipped,
)
from .instance import AdmissionInstance
from .model import build_model

#: A step is started only with more than this left of the limit (the model's hand-over and a
#: step's own minimum).
MIN_STEP_LEFT_S = 0.2


def _cpsat_import_s() -> float:
    """What importing CP-SAT will take here now (0 once imported): its CPU seconds times the
    slowdown now (:func:`~schedopt.core.gates.gate_slowdown`)."""
    if CPSAT.module in sys.modules:
        return 0.0
    return CPSAT.quiet_cpu_s * gate_slowdown()


@dataclass(frozen=True)
class LnsParams:
    """``free_fraction`` of the SLO jobs is re-decided per step, in ``step_s`` seconds each;
    the search stops after ``patience`` steps in a row without improvement. Defaults measured
    on a contested 256-GPU instance (10 s): free 0.3 → +11% over the best heuristic, 0.15 →
    +9%, 0.08 → +7%."""

    free_fraction: float = 0.3
    step_s: float = 1.0
    patience: int = 5

    SPACE: ClassVar[dict[str, tuple[float, float]]] = {
        "free_fraction": (0.05, 0.6),
        "step_s": (0.3, 3.0),
        "patience": (2, 10),
    }


def solve(inst: AdmissionInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
    t0 = time.perf_counter()
    params = LnsParams(**options.params)
    data = build_data(inst, check_size=False, deadline=deadline)
    stop = deadline.earlier(assemble_reserve_s(time.perf_counter() - t0))
    # start from the greedy heuristics at their tuned settings (solve(..., tuned=) included)
    tuned = tuned_or_shipped(options.tuned)
    greedy_stop = None if options.deterministic else stop  # deterministic: fixed work
    t1 = time.perf_counter()
    starts = [run_edf(data, EdfParams(**tuned.get("heuristic:edf", {})), greedy_stop)]
    # The second start only when it can run as long as the first did: on 100,000 jobs the two
    # greedies alone overran a 10 s limit by 4 s.
    if greedy_stop is None or stop.remaining() > time.perf_counter() - t1:
        with contextlib.suppress(DeadlineReached):  # if so, the first start stands
            starts.append(
                run_slack(data, SlackParams(**tuned.get("heuristic:slack", {})), greedy_stop)
            )
    if options.hint is not None:
        starts.append((raw_from_solution(data, options.hint), []))
    kept = [raw for raw, broken in starts if not broken]
    if not kept:
        return Outcome(
            Status.NO_SOLUTION,
            explanation="no starting plan keeps every earlier "
            "guarantee (not a proof of infeasibility; try an exact method)",
        )
    current = max(kept, key=lambda raw: guaranteed_value(data, raw))
    value = guaranteed_value(data, current)
    reason = data.too_big_for(options.time_limit_s if options.deterministic else stop.remaining())
    if data.num_variables > MAX_MODEL_VARIABLES:
        reason = (
            f"the CP-SAT model would have {data.num_variables:,} variables (limit "
            f"{MAX_MODEL_VARIABLES:,}): no LNS steps, the best greedy plan is returned"
        )
    steps = improved = 0
    bound: float | None = None
    slo = [j for j in data.jobs if j.is_slo and not j.admitted_before]
    # deterministic mode: a fixed number of steps of fixed deterministic time (work limit)
    max_steps = math.floor(options.time_limit_s / params.step_s) if options.deterministic else -1

    def another_step(before_s: float = 0.0) -> bool:
        """Time (or, deterministic, work) for a step, after ``before_s`` of other work."""
        if max_steps >= 0:
            return steps < max_steps
        return stop.remaining() > MIN_STEP_LEFT_S + before_s

    # No model and no solver when not one step can run after importing the solver: OR-Tools'
    # CP-SAT (with the pandas it imports) is 0.2-0.3 CPU s, more than a short limit leaves
    # after the greedy starts (0.3 s on the shipped example: the import, a session, 0 steps;
    # under load the import alone ran past the limit, #17).
    first_step_s = 0.0 if max_steps >= 0 or not slo or reason else _cpsat_import_s()
    if reason is None and slo and another_step(first_step_s):
        am = build_model(data)
        from schedopt.model.emit_cpsat import CpsatSession  # on first use

        session = CpsatSession(am.model, AdmissionHooks.cpsat_linearization_level)
        session.set_level(am.model.levels[0])
        rng = np.random.default_rng(options.seed)
        idle = 0
        while another_step() and idle < params.patience:
            free = set(
                rng.choice(
                    len(slo), size=max(1, round(params.free_fraction * len(slo))), replace=False
                ).tolist()
            )
            freed = {slo[i].index for i in free}
            for (j, t, o), col in am.x.items():
                job = data.jobs[j]
                if job.is_slo and j in freed:
                    _set_domain(session.var(col), 0, 1)
                else:  # fixed to the current plan; best-effort jobs left out for now
                    on = int(job.is_slo and current[j].run[t] == o)
                    _set_domain(session.var(col), on, on)
            session.set_hint(encode(am, current))
            limit = (
                params.step_s
                if options.deterministic
                else min(params.step_s, stop.remaining() - 0.1)
            )
            # LNS derives a seed per step; SolveOptions holds seeds below 2**31.
            step = replace(options, seed=(options.seed + steps) % 2**31, mip_gap=0.0, threads=1)
            run = session.run(limit, step)
            steps += 1
            found = None if run.objective is None else round(run.objective * VALUE_SCALE)
            if run.values is not None and found is not None and found > value:
                current, value, improved = decode(am, run.values), found, improved + 1
                idle = 0
            else:
                idle += 1
            if run.status is Status.OPTIMAL and len(freed) == len(slo):
                break  # the whole problem was free and is solved: nothing left to improve
    solution = assemble(
        data, refill_best_effort(data, current, greedy_stop), optimal_admission=False
    )
    stats = {"lns_steps": float(steps), "lns_improvements": float(improved)}
    return Outcome(
        Status.FEASIBLE,
        solution=solution,
        bound=bound,
        build_s=0.0,
        solve_s=time.perf_counter() - t0,
        stats=stats,
        explanation=reason,
    )


def _set_domain(var, low: int, high: int) -> None:
    """Fix or free a Boolean in place (the model is reused across steps, not rebuilt)."""
    domain = var.proto.domain
    domain[0], domain[1] = low, high
