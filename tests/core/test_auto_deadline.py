"""``auto``'s exact phase works to ``solve``'s deadline: the finish reserve kept back once,
stretched once on a busy machine, and the whole call still within the limit."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

import schedopt
from schedopt.core import registry, stopping
from schedopt.core.registry import MethodKind, MethodSpec, Outcome
from schedopt.core.status import Status
from schedopt.problems.admission import generate
from tests.timing import promised_s

#: The finish reserve of the stand-in problem, and the slowdown of the stand-in busy machine
#: (MAX_SLOWDOWN: the reserve kept back MAX_SLOWDOWN / CALIBRATED_SLOWDOWN = 2 times).
RESERVE_S, LIMIT_S = 0.4, 3.0


def test_the_exact_phase_keeps_the_finish_reserve_back_once(monkeypatch) -> None:
    spec = registry.get_problem("admission")
    ends: list[float] = []

    def exact(inst, options, deadline):  # works to its deadline, then answers the hint
        ends.append(deadline._end())
        while not deadline.expired():
            time.sleep(0.01)
        return Outcome(Status.FEASIBLE, options.hint)

    factor = stopping.MAX_SLOWDOWN / stopping.CALIBRATED_SLOWDOWN

    def validate(inst, solution):  # validation as slow as the busy machine stretches it
        time.sleep(0.9 * RESERVE_S * factor)
        return spec.validate(inst, solution)

    fake = MethodSpec("exact:fake", MethodKind.EXACT, exact, "test double")
    monkeypatch.setitem(
        registry._PROBLEMS,
        "admission",
        replace(
            spec,
            methods={**spec.methods, fake.name: fake},
            auto_route=lambda inst: fake.name,
            auto_heuristics=("heuristic:edf",),
            finish_reserve_s=lambda inst: RESERVE_S,
            validate=validate,
        ),
    )
    monkeypatch.setattr(stopping, "slowdown", lambda *since: stopping.MAX_SLOWDOWN)
    inst = generate("small", 0)
    t0 = time.perf_counter()
    result = schedopt.solve(inst, time_limit_s=LIMIT_S)
    wall = time.perf_counter() - t0
    assert result.solution is not None and result.method == f"auto({fake.name})"
    # solve's deadline: the reserve kept back once, stretched once (before: 2 × that)
    assert ends[0] - t0 == pytest.approx(LIMIT_S - RESERVE_S * factor, abs=0.05)
    assert wall <= promised_s(LIMIT_S)
