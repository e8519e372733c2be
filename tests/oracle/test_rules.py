"""The rules schedopt.testing names in its messages are the formulations' own."""

from __future__ import annotations

from schedopt.testing.rules import RULES

from .formulation_rules import table


def test_rules_match_the_formulations() -> None:
    assert table() == RULES, "run python -m tests.oracle.formulation_rules and paste"
