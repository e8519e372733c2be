"""schedopt as a test oracle for your own scheduler (needs the dev extra: hypothesis).

The same API for every problem (docs/testing-your-scheduler.md)::

    from hypothesis import given
    from schedopt.testing import instances, assert_valid, optimality_ratio

    @given(instances("admission"))
    def test_my_scheduler(inst):
        decision = my_scheduler(inst)
        assert_valid(inst, decision)
        assert optimality_ratio(inst, decision).ratio >= 0.5

- :func:`instances`: a hypothesis strategy of instances that have a valid decision.
- :func:`check` / :func:`assert_valid`: the broken rules, with the formulation's ids; claims
  a decision makes (a rejection marked proven, "infeasible") are checked by the exact model.
- :func:`optimality_ratio`: against the proven optimum, or the best bound with its gap.
- :func:`decision` (any problem, the solution type's fields), :func:`admission_decision`,
  :func:`fairshare_decision`, :func:`timeshare_decision`, :func:`moe_decision`: build a
  decision from plain values.
- the pytest plugin's ``schedopt_oracle`` fixture (:mod:`schedopt.testing.plugin`), and
  :func:`ci_settings`, the hypothesis profile ``schedopt-ci`` for CI.

The strategies for broken input (:func:`mutations`, :func:`corrupted_texts`...) live in
:mod:`schedopt.core.fuzz`, where every problem's ``strategies`` module reaches them.
"""

from __future__ import annotations

from schedopt.core.fuzz import (
    BAD_VALUES,
    EXTREME_NUMBERS,
    HOSTILE_NUMBERS,
    HOSTILE_TOKENS,
    corrupt_text,
    corrupted_texts,
    mutate,
    mutations,
)

from .decisions import admission as admission_decision
from .decisions import decision
from .decisions import fairshare as fairshare_decision
from .decisions import moe_placement as moe_decision
from .decisions import timeshare as timeshare_decision
from .instances import BY_CONSTRUCTION, SIZES, instances
from .oracle import Ratio, assert_valid, check, optimality_ratio
from .profile import PROFILE, ci_settings, register_profile
from .reference import CHECK_LIMIT_S, reference

__all__ = [
    "BAD_VALUES",
    "BY_CONSTRUCTION",
    "CHECK_LIMIT_S",
    "EXTREME_NUMBERS",
    "HOSTILE_NUMBERS",
    "HOSTILE_TOKENS",
    "PROFILE",
    "SIZES",
    "Ratio",
    "admission_decision",
    "assert_valid",
    "check",
    "ci_settings",
    "corrupt_text",
    "corrupted_texts",
    "decision",
    "fairshare_decision",
    "instances",
    "moe_decision",
    "mutate",
    "mutations",
    "optimality_ratio",
    "reference",
    "register_profile",
    "timeshare_decision",
]
