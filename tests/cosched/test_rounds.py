"""Column generation's rounds (formulations/cosched.md, "Deterministic mode" and "The stop
rule"): reproducible round by round in deterministic mode, and ended only by convergence, a
fixed point, the round budget or the deadline (#17)."""

from __future__ import annotations

import functools
from dataclasses import replace

import pytest

import schedopt
from schedopt.core.options import SolveOptions
from schedopt.core.stopping import Deadline
from schedopt.executor import make_executor
from schedopt.problems.cosched import colgen, decomp, generate_custom, pricing
from schedopt.problems.cosched.colgen import CONVERGED, Generated, Master
from schedopt.problems.cosched.farley import CASE_S
from schedopt.problems.cosched.heuristics import heuristic_data


@functools.cache
def _setup(seed: int):
    inst = generate_custom(12, 12, 16, 16, seed, (0, 1))
    hint = schedopt.solve(inst, "heuristic:packing", time_limit_s=5, deterministic=True).solution
    data = heuristic_data(inst)
    start, _ = decomp._start(inst, data, SolveOptions(hint=hint), Deadline.after(60))
    return data, start


def _rounds(seed: int, rounds: int) -> Generated:
    """Column generation in deterministic mode from the packing plan, far deadlines."""
    data, start = _setup(seed)
    with make_executor("inline") as ex:
        return colgen.generate(
            data, start, Deadline.after(600), ex, Deadline.after(600), rounds, True
        )


def test_deterministic_rounds_do_not_depend_on_the_machines_speed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Twice with a round budget, the second run on a machine emulated 20 times slower (every
    CP-SAT wall-clock limit cut 20 times): the same master value, exact bound and columns
    every round, and the same final bound. The case models' search phase stopped at 0.05 wall
    seconds in deterministic mode too: at 0.0025 the groups it found, and so the later rounds'
    columns and duals, differed (a loaded machine did the same at 4,096 GPUs x 200 jobs)."""
    from ortools.sat.python import cp_model

    first = _rounds(1, 8)
    solve = cp_model.CpSolver.solve

    def slower(self, *args, **kwargs):
        self.parameters.max_time_in_seconds = self.parameters.max_time_in_seconds / 20
        return solve(self, *args, **kwargs)

    monkeypatch.setattr(cp_model.CpSolver, "solve", slower)
    second = _rounds(1, 8)
    assert sum(b is not None for _, b, _ in first.trace) >= 3  # exact rounds ran
    assert first.trace == second.trace
    assert [Master.key(c) for c in first.columns] == [Master.key(c) for c in second.columns]
    assert [c.planned for c in first.columns] == [c.planned for c in second.columns]
    assert (first.bound, first.lp, first.rounds) == (second.bound, second.lp, second.rounds)


def test_rounds_end_only_when_converged_or_every_case_is_decided(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With every case model reported stopped on its time (and its bound a little weaker,
    still valid: a larger U), no round can prove convergence or a fixed point: the rounds
    run to the budget, and after a round at the master's duals that adds nothing the case
    models get more time. Unpatched, the rounds end early only when a proven bound is within
    CONVERGED of the master LP. (The old rule ended them at the first round at the master's
    duals that added no group, open cases or not.)"""
    budget = 20
    done = _rounds(0, budget)
    bounds = [b for _, b, _ in done.trace if b is not None]
    assert done.rounds == budget or max(bounds) >= (1 - CONVERGED) * done.trace[-1][0]
    work: list[float] = []
    real = pricing.case_bound

    def stopped(*args, **kwargs):
        got = real(*args, **kwargs)
        work.append(args[15])
        return replace(got, upper=got.upper + 1.0, decided=False)

    monkeypatch.setattr(pricing, "case_bound", stopped)
    open_ = _rounds(0, budget)
    assert open_.rounds == budget
    assert min(work) == CASE_S and max(work) > CASE_S


def test_exact_pricing_below_100_jobs_is_at_the_masters_own_duals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Below ``SMOOTH_FROM_JOBS`` jobs no Wentges smoothing (formulation, "Column generation
    with exact pricing"): every exact round prices at the duals of the master it just solved,
    also after a best bound set a centre; from 100 jobs the smoothing's α stays ½."""
    from types import SimpleNamespace

    masters: list = []
    priced: list = []
    solve, bound = Master.solve, colgen.farley_bound

    def solved(self, seconds):
        out = solve(self, seconds)
        masters.append(None if out is None else (out[1].copy(), out[2].copy()))
        return out

    def priced_at(data, pi, y, *args):
        if args[2] is not None:  # a round's exact pricing (it collects groups), not a bound
            priced.append((pi.copy(), y.copy(), masters[-1]))
        return bound(data, pi, y, *args)

    monkeypatch.setattr(Master, "solve", solved)
    monkeypatch.setattr(colgen, "farley_bound", priced_at)
    gen = _rounds(1, 10)
    assert sum(b is not None for _, b, _ in gen.trace) >= 3  # exact rounds ran, a centre set
    assert len(priced) >= 3
    for pi, y, master in priced:
        assert master is not None
        assert pi == pytest.approx(master[0]) and y == pytest.approx(master[1])
    assert colgen.smoothing(SimpleNamespace(jobs=[None] * 16)) == 0.0
    big = SimpleNamespace(jobs=[None] * colgen.SMOOTH_FROM_JOBS)
    assert colgen.smoothing(big) == colgen.SMOOTH == 0.5  # type: ignore[arg-type]
