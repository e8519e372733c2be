"""Polishing the master MIP's plan (formulations/cosched.md, "Polishing the plan").

The restricted master MIP picks the best plan over the groups column generation scheduled; the
groups that plan *almost* uses are often missing. :func:`neighbours` lists the groups one step
from the plan — two groups merged, a member moved to another group or dropped, two members of
two groups swapped — and :func:`polish` schedules each (the heuristics' scheduler, fewest
hosts; a group it cannot schedule is left out) for the master MIP to run again with them. A
plan that uses them is a plan of scheduled groups like any other (validated as every answer).
"""

from __future__ import annotations

from collections.abc import Iterator

from schedopt.core.stopping import Deadline

from .colgen import Column, Master
from .greedy import Members
from .heuristics import build


def neighbours(plan: list[Column]) -> Iterator[Members]:
    """The groups one step from ``plan``: each group less one member; for each ordered pair
    of groups (A, B), A with one member of B added, A with one of its members swapped for one
    of B's; and each pair merged. Cheapest to check first (small groups)."""
    groups = [c.members for c in plan]
    for a in groups:
        if len(a) > 1:
            for i in range(len(a)):
                yield a[:i] + a[i + 1 :]
    for x, a in enumerate(groups):
        for y, b in enumerate(groups):
            if x == y:
                continue
            for m in b:
                yield (*a, m)
            for i in range(len(a)):
                for m in b:
                    yield a[:i] + a[i + 1 :] + (m,)
    for x, a in enumerate(groups):
        for b in groups[x + 1 :]:
            yield a + b


def polish(master: Master, plan: list[Column], deadline: Deadline, limit: int | None = None) -> int:
    """Adds to ``master`` each neighbour of ``plan`` the heuristics' scheduler schedules whole,
    until ``deadline`` or after the first ``limit`` neighbours (a budget of work: deterministic
    mode); the number of new columns."""
    data = master.data
    added = 0
    for n, members in enumerate(neighbours(plan)):
        if deadline.expired() or (limit is not None and n >= limit):
            break
        built = build(data, [(data.jobs[j], opts) for j, opts in members], deadline)
        if built is not None:
            added += master.add(Column(members, tuple(built.hosts), built.planned))
    return added
