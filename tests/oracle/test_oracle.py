"""For every problem, as a test author would: a correct toy scheduler passes, and typical bugs
(capacity, timing, placement) are caught with a shrunk instance saved as JSON."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import schedopt
from schedopt.testing.plugin import Oracle

from .schedulers import BUGS, SIZE, correct

PROBLEMS = sorted(BUGS)
EXAMPLES = 8


@pytest.mark.parametrize("problem", PROBLEMS)
def test_correct_scheduler_passes(problem: str, schedopt_oracle: Oracle) -> None:
    schedopt_oracle.run(problem, correct(problem), max_examples=EXAMPLES)


#: 0.5-12 s a bug at load 3, 5-48 s at load 6-8 (the exact solves behind feasible=True while
#: shrinking): the slow stage.
SLOW = ("fairshare", "moe_placement", "cosched", "reconfig")
CASES = [
    pytest.param(p, f, marks=[pytest.mark.slow] if p in SLOW else [])
    for p in PROBLEMS
    for f in ("capacity", "timing", "placement")
]


@pytest.mark.parametrize(("problem", "family"), CASES)
def test_bug_is_caught_with_a_shrunk_instance(
    problem: str, family: str, schedopt_oracle: Oracle
) -> None:
    scheduler, rules = BUGS[problem][family]
    with pytest.raises(AssertionError) as caught:
        size = SIZE.get((problem, family), "tiny")
        schedopt_oracle.run(problem, scheduler, size=size, max_examples=60)
    message = str(caught.value)
    assert any(f"[{rule} " in message or f"[{rule}]" in message for rule in rules), message
    path = Path(re.search(r"minimal instance: (\S+)", message).group(1))  # type: ignore[union-attr]
    instance = schedopt.load(path)
    assert schedopt.get_problem(problem).validate(instance, scheduler(instance)), message
