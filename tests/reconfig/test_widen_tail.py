"""``decomp:physical``'s widening ends by its deadline however slowly a plan is judged (#17):
beside a CPU burner at a quarter of a core, the starts' last plans (W3-W4) were judged after
the deadline had passed and the 10 s row at 1,024 GPUs ended 0.15-0.40 s past its limit."""

from __future__ import annotations

import time

import pytest

import schedopt
from schedopt.core.stopping import Deadline
from schedopt.problems.reconfig import physical
from schedopt.problems.reconfig.generate import generate_custom

#: How long judging one plan takes here (a machine that slow), and the widening's time.
JUDGE_S = 0.15
LIMIT_S = 1.5


@pytest.fixture
def slow_judging(monkeypatch):  # type: ignore[no-untyped-def]
    """(instance, a start plan, the real validator), ``physical.validate`` taking JUDGE_S."""
    inst = generate_custom(8, 8, "llama2-70b", 128, 4, 4, seed=0)
    start = schedopt.solve(inst, "heuristic:oobleck", time_limit_s=10).solution
    assert start is not None
    real = physical.validate

    def slow(inst, plan):  # type: ignore[no-untyped-def]
        time.sleep(JUDGE_S)
        return real(inst, plan)

    monkeypatch.setattr(physical, "validate", slow)
    return inst, start, real


def test_widening_judges_no_plan_past_its_deadline(slow_judging) -> None:
    inst, start, real = slow_judging
    deadline = Deadline.after(LIMIT_S)
    wide = physical.widen(inst, start, deadline)
    late = time.perf_counter() - deadline.end
    assert late <= 0.05, f"widening ended {late:.2f} s past its deadline"
    assert real(inst, wide) == []


def test_what_follows_w7_keeps_back_the_time_it_is_asked_to(slow_judging) -> None:
    # ``keep_s`` (decomp:physical: what follows widening, in evaluations timed at the load):
    # W6 and W3-W5 end that much before widening's deadline
    inst, start, _ = slow_judging
    keep_s = 0.6
    deadline = Deadline.after(2.5)
    physical.widen(inst, start, deadline, column_share=0.1, keep_s=keep_s)
    late = time.perf_counter() - (deadline.end - keep_s)
    assert late <= 0.05, f"widening ended {late:.2f} s past its deadline less keep_s"


def test_a_design_stops_within_a_depth_of_its_deadline() -> None:
    # W6: a pipeline's search is up to 32 designs at each depth (16 here); beside a CPU
    # burner at 256 GPUs one took 0.86 s and its design ended past the row's limit (#17)
    from schedopt.problems.reconfig.chains import idle_groups
    from schedopt.problems.reconfig.design import Designer, Partitioner

    inst = generate_custom(8, 8, "llama2-70b", 128, 4, 4, seed=0)
    designer = Designer(Partitioner(inst), idle_groups(inst, set(), False))
    real = designer.design

    def slow(*args):  # type: ignore[no-untyped-def]
        time.sleep(0.002)  # 16 depths of about 19 designs: 0.6 s for the one pipeline here
        return real(*args)

    designer.design = slow  # type: ignore[method-assign]
    deadline = Deadline.after(0.2)
    designer.plan(10**9, deadline)  # one pipeline would hold every micro-batch
    late = time.perf_counter() - deadline.end
    assert late <= 0.1, f"the design ended {late:.2f} s past its deadline"
