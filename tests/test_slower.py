"""The emulated slower machine (tests/slower.py) cuts a HiGHS limit as a slower machine would:
by the factor, counted from HiGHS's own run clock."""

from __future__ import annotations

import highspy

from tests.slower import slower_machine


def _limit(h: highspy.Highs) -> float:
    _, value = h.getOptionValue("time_limit")  # (status, value)
    return float(value)


def _ran_once() -> highspy.Highs:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.addVar(0.0, 1.0)
    h.changeColCost(0, -1.0)
    h.run()
    assert h.getRunTime() > 0.0
    return h


def test_a_limit_set_from_the_run_clock_is_cut_beyond_it() -> None:
    """``StagedLp`` sets ``time_limit`` to the run clock plus a stage's seconds: at 4x the
    stage gets a quarter of its seconds after the clock, not a quarter of the sum."""
    h = _ran_once()
    ran = h.getRunTime()
    with slower_machine(4.0):
        h.setOptionValue("time_limit", ran + 2.0)
    assert abs(_limit(h) - (ran + 0.5)) < 1e-12


def test_a_fresh_limit_is_cut_by_the_factor() -> None:
    h = highspy.Highs()
    with slower_machine(4.0):
        h.setOptionValue("time_limit", 2.0)
    assert _limit(h) == 0.5
