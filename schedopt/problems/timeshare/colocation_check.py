"""The checks of space sharing by job type (``TimeshareInstance.colocation``).

Gavel's co-location table gives a pair's rates by the two jobs' types, so 1,024 jobs of 26
types carry 351 entries instead of 523,776 pairs. The checks name the field: a type pair
given twice, unequal scale factors, rates out of range, and more implied pairs than an
instance may hold. An entry may name a type no job of the round has (a
scheduler passes its whole table, and a session's jobs come and go): it implies no pair.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from schedopt.core import limits

if TYPE_CHECKING:
    from .instance import TimeshareInstance

#: At most this many pairs, given (``pairs``) or implied by job types (``colocation``).
MAX_PAIRS = 50_000_000
RATE_RANGE = f"throughput must be 0 or in [{limits.MIN_POSITIVE:g}, {limits.MAX_RATE:g}]"


def type_members(inst: TimeshareInstance) -> dict[str, list[int]]:
    """Job type → the indices of its jobs, in the order of ``jobs``."""
    out: dict[str, list[int]] = {}
    for i, job in enumerate(inst.jobs):
        if job.job_type is not None:
            out.setdefault(job.job_type, []).append(i)
    return out


def implied_pairs(inst: TimeshareInstance, members: dict[str, list[int]] | None = None) -> int:
    """How many job pairs ``colocation`` lets share GPUs."""
    members = type_members(inst) if members is None else members
    total = 0
    for entry in inst.colocation:
        a, b = entry.job_types
        na, nb = len(members.get(a, ())), len(members.get(b, ()))
        total += na * (na - 1) // 2 if a == b else na * nb
    return total


def check_colocation(inst: TimeshareInstance) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    members = type_members(inst)
    for t, idx in members.items():  # one scale factor per type (a pair shares s GPUs)
        first = inst.jobs[idx[0]].scale_factor
        for i in idx[1:]:
            if inst.jobs[i].scale_factor != first:
                out.append(
                    (
                        f"jobs[{i}].scale_factor",
                        f"job type {t!r} has scale factor {first} (jobs[{idx[0]}])",
                    )
                )
    if not inst.colocation:
        return out
    if inst.pairs:
        out.append(("colocation", "give pairs or colocation, not both"))
    if not inst.policy.takes_pairs:
        out.append(("colocation", f"policy {inst.policy.value} takes no pairs"))
    seen: dict[tuple[str, str], int] = {}
    for i, entry in enumerate(inst.colocation):
        where = f"colocation[{i}]"
        a, b = entry.job_types
        key = (a, b) if a <= b else (b, a)
        if key in seen:
            out.append(
                (f"{where}.job_types", f"types {a!r}, {b!r} given twice (colocation[{seen[key]}])")
            )
        seen.setdefault(key, i)
        if a in members and b in members:
            sa, sb = inst.jobs[members[a][0]].scale_factor, inst.jobs[members[b][0]].scale_factor
            if sa != sb:
                out.append(
                    (
                        f"{where}.job_types",
                        f"types with different scale factors ({sa}, {sb}) cannot share GPUs",
                    )
                )
        for w, rates in entry.throughput.items():
            if w not in inst.workers:
                out.append((f"{where}.throughput[{w!r}]", f"unknown GPU type {w!r}"))
            elif any(0 < r < limits.MIN_POSITIVE for r in rates):
                out.append((f"{where}.throughput[{w!r}]", RATE_RANGE))
    count = implied_pairs(inst, members)
    if count > MAX_PAIRS:
        out.append(("colocation", f"implies {count:,} job pairs; at most {MAX_PAIRS:,}"))
    return out
