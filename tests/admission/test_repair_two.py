"""The repair's second start (#17; formulations/admission.md, "LP rounding and repair", step
3): when the repair stalls on its start (steps in a row without a gain), the runner-up start is
repaired with the rest of the time and the better plan kept, never below the first's; where
it does not stall, no second start is made and the run is the repair's alone."""

from __future__ import annotations

import pytest

from schedopt.core.stopping import Deadline
from schedopt.problems.admission import generate_custom
from schedopt.problems.admission import repair as rep
from schedopt.problems.admission.assemble import assemble, guaranteed_value
from schedopt.problems.admission.data import build_data
from schedopt.problems.admission.heuristics import refill_best_effort
from schedopt.problems.admission.lpdecomp import greedy_plans
from schedopt.problems.admission.validate import validate


@pytest.fixture(scope="module")
def case():
    inst = generate_custom(hosts=32, jobs=800, slots=12, seed=1)
    data = build_data(inst)
    plans = sorted(greedy_plans(data, Deadline.after(600)), key=lambda r: guaranteed_value(data, r))
    assert len(plans) == 2 and guaranteed_value(data, plans[0]) < guaranteed_value(data, plans[1])
    return inst, data, plans[0], plans[1]


def _valid(inst, data, raw) -> bool:
    return validate(inst, assemble(data, refill_best_effort(data, raw), optimal_admission=False)) == []


@pytest.mark.parametrize("runner_up_better", [True, False])
def test_a_stalled_repair_repairs_the_runner_up_and_keeps_the_better(
    case, monkeypatch, runner_up_better: bool
) -> None:
    inst, data, low, high = case
    first, other = (low, high) if runner_up_better else (high, low)
    real = rep.improve_group
    phase = ["first"]

    def improve_group(sub, start, seconds, seed, deterministic=False):
        # the first start's steps find nothing: the repair stalls after STALL_STEPS of them
        return None if phase[0] == "first" else real(sub, start, seconds, seed, deterministic)

    asked: list[int] = []

    def runner_up(stop: Deadline):
        asked.append(1)
        phase[0] = "second"
        return other

    monkeypatch.setattr(rep, "improve_group", improve_group)
    raw, stats = rep.repair_two(
        data, first, runner_up, Deadline.after(600), 0, max_steps=rep.STALL_STEPS + 3,
        deterministic=True,
    )  # fmt: skip
    assert asked == [1]
    assert stats["repair_steps"] == rep.STALL_STEPS + 3
    assert stats["first_value"] * 1000 == guaranteed_value(data, first)
    assert stats["second_start"] * 1000 == guaranteed_value(data, other)
    value = guaranteed_value(data, raw)
    assert value == max(stats["first_value"], stats["second_value"]) * 1000
    assert value >= guaranteed_value(data, first)  # never below the first's
    if runner_up_better:
        assert value >= guaranteed_value(data, other) > guaranteed_value(data, first)
    else:
        assert value == guaranteed_value(data, first)  # the runner-up's 3 steps cannot catch up
    assert _valid(inst, data, raw)


def test_a_repair_that_does_not_stall_makes_no_second_start(case, monkeypatch) -> None:
    inst, data, low, _ = case
    real = rep.improve_group
    gains: list[bool] = []

    def improve_group(sub, start, seconds, seed, deterministic=False):
        found = real(sub, start, seconds, seed, deterministic)
        gains.append(found is not None)
        return found

    def runner_up(stop: Deadline):
        raise AssertionError("no second start where the repair does not stall")

    monkeypatch.setattr(rep, "improve_group", improve_group)
    steps = 8
    raw, stats = rep.repair_two(
        data, low, runner_up, Deadline.after(600), 0, max_steps=steps, deterministic=True
    )
    # never STALL_STEPS steps in a row without a gain from this start
    runs = "".join("g" if g else "." for g in gains)
    assert "." * rep.STALL_STEPS not in runs and stats["repair_improved"] >= 1
    assert "second_start" not in stats
    alone, _ = rep.repair(data, low, Deadline.after(600), 0, max_steps=steps, deterministic=True)
    assert raw == alone  # the same run as the repair alone
    assert _valid(inst, data, raw)


def test_a_stall_without_a_runner_up_goes_on_with_the_first(case, monkeypatch) -> None:
    inst, data, low, _ = case
    real = rep.improve_group
    calls = [0]

    def improve_group(sub, start, seconds, seed, deterministic=False):
        calls[0] += 1
        return None if calls[0] <= rep.STALL_STEPS else real(sub, start, seconds, seed, deterministic)

    monkeypatch.setattr(rep, "improve_group", improve_group)
    raw, stats = rep.repair_two(
        data, low, lambda stop: None, Deadline.after(600), 0, max_steps=rep.STALL_STEPS + 4,
        deterministic=True,
    )  # fmt: skip
    assert stats["repair_steps"] == rep.STALL_STEPS + 4 and "second_start" not in stats
    assert guaranteed_value(data, raw) >= guaranteed_value(data, low)
    assert _valid(inst, data, raw)
