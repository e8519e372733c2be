"""The deletion filter behind every "a smallest conflicting set" explanation."""

from __future__ import annotations

from schedopt.core.stopping import Deadline
from schedopt.model.explain import MAX_CHECKS, CheckBudget, deletion_filter


def test_the_filter_keeps_exactly_a_minimal_conflicting_set() -> None:
    # infeasible whenever 2 and 4 are both in: the only minimal conflict is {2, 4}
    found = deletion_filter(
        [1, 2, 3, 4, 5], lambda rest: not {2, 4} <= set(rest), CheckBudget(Deadline.after(60))
    )
    assert found.items == [2, 4] and found.minimal and found.checks == 5


def test_out_of_checks_or_time_the_set_is_not_called_minimal() -> None:
    budget = CheckBudget(Deadline.after(60), checks=MAX_CHECKS - 2)
    found = deletion_filter([1, 2, 3, 4, 5], lambda rest: not {2, 4} <= set(rest), budget)
    assert found.items == [2, 3, 4, 5] and not found.minimal
    late = deletion_filter([1, 2], lambda rest: False, CheckBudget(Deadline.after(0.5)))
    assert late.items == [1, 2] and not late.minimal and late.checks == 0


def test_an_undecided_check_keeps_the_item_and_the_set_is_not_called_minimal() -> None:
    found = deletion_filter([1, 2, 3], lambda rest: None, CheckBudget(Deadline.after(60)))
    assert found.items == [1, 2, 3] and not found.minimal
