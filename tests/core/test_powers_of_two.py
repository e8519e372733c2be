"""The power-of-two arithmetic of GPU counts (schedopt.core.powers_of_two), against the
definitions it stands for, counted out one by one."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from schedopt.core.powers_of_two import (
    is_power_of_two,
    largest_power_of_two_at_most,
    powers_of_two_up_to,
    smallest_power_of_two_at_least,
)

#: 1, 2, 4, … far past any GPU count an instance may hold.
POWERS = tuple(2**k for k in range(40))


def _as_defined(n: int) -> None:
    # powers of two only from 1: no 0 or negative count (a GPU type with no GPUs on a host has
    # no size level)
    assert is_power_of_two(n) == (n in POWERS)
    assert powers_of_two_up_to(n) == tuple(p for p in POWERS if p <= n)
    if n >= 1:
        assert largest_power_of_two_at_most(n) == max(p for p in POWERS if p <= n)
        assert smallest_power_of_two_at_least(n) == min(p for p in POWERS if p >= n)


@settings(derandomize=True, deadline=None)
@given(st.integers(-5, 2**33))
def test_the_powers_of_two_are_those_of_their_definition(n: int) -> None:
    _as_defined(n)


def test_each_power_and_its_neighbours() -> None:
    # each power, one below and one above it (random draws rarely land on them)
    for p in POWERS[:34]:
        for n in (p - 1, p, p + 1):
            _as_defined(n)
    assert powers_of_two_up_to(8) == (1, 2, 4, 8)  # a DGX host's size levels
    assert smallest_power_of_two_at_least(12) == 16  # Philly's 12-GPU jobs: gangs of 16
    assert largest_power_of_two_at_most(12) == 8
