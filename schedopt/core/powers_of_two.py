"""GPU counts that are powers of two: admission's gang sizes (formulations/admission.md,
restrictions), the size levels of a GPU type (``L_g`` there, ``S_g`` in
formulations/fairshare.md: 1, 2, 4, … ≤ σ_g, the most GPUs on a host of the type), and the trace
loaders' rounding of a count up to a gang size. Here, in core, because problem packages never
import one another."""

from __future__ import annotations


def is_power_of_two(n: int) -> bool:
    """Whether ``n`` is 1, 2, 4, 8, … (0 and negative counts are not)."""
    return n >= 1 and n & (n - 1) == 0


def powers_of_two_up_to(n: int) -> tuple[int, ...]:
    """1, 2, 4, … up to ``n`` inclusive, ascending (none below 1)."""
    return tuple(1 << b for b in range(max(n, 0).bit_length()))


def largest_power_of_two_at_most(n: int) -> int:
    """The largest power of two ≤ ``n`` (``n`` ≥ 1)."""
    return 1 << (n.bit_length() - 1)


def smallest_power_of_two_at_least(n: int) -> int:
    """The smallest power of two ≥ ``n`` (``n`` ≥ 1)."""
    return 1 << (n - 1).bit_length()
