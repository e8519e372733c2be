"""A stand-in for W7's columns whose plans depend on the target alone (``test_w7_landing.py``,
``test_w7_stop.py``): a test subclasses :class:`StandInColumns` with its own ``plan`` and runs
W7 over it with :func:`run_columned`."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from schedopt.core.stopping import Deadline
from schedopt.problems.reconfig.design import Partitioner

from .test_widen import _small

BEST = 1_000_000  # the best plan the stand-in has (µs)


@dataclass(frozen=True)
class StandInPlan:
    value: int
    gpus: tuple[str, ...] = ()


class StandInColumns:
    """``columns.Columns`` with no packings or sequences of its own; ``plan(lam, deadline, nodes)``
    is the test's."""

    def __init__(self, sd, part, groups, seqs=None) -> None:  # type: ignore[no-untyped-def]
        self.packed, self.seqs, self.start = groups is None, seqs, None
        self.level: int | None = None
        self.own = False
        self.cut = False  # a ``plan`` stopped by its time share (``Columns.cut``)

    def seq(self, ch):  # type: ignore[no-untyped-def]
        return None

    def packings_of(self, chains):  # type: ignore[no-untyped-def]
        return None


def run_columned(
    monkeypatch: pytest.MonkeyPatch,
    fake: type,
    lower: int,
    deadline: Deadline | None,
    hard: Deadline | None = None,
):  # type: ignore[no-untyped-def]
    """W7 (``targets.columned``) over ``fake`` from a start of 2 x BEST, plans valid and
    valued at their ``value`` µs, on a small instance with free all-reduces (``hard``:
    ``columned``'s)."""
    from schedopt.problems.reconfig import columns, targets

    monkeypatch.setattr(columns, "Columns", fake)
    monkeypatch.setattr(targets, "_plan", lambda inst, chains: chains[0])
    monkeypatch.setattr(targets, "validate", lambda inst, plan: [])
    monkeypatch.setattr(targets, "evaluate", lambda inst, plan: (plan.value / 1e6,))
    inst, _ = _small()
    part = Partitioner(inst)
    monkeypatch.setattr(part.c, "sync_us", lambda gpus: 0)
    return targets.columned(inst, part, 2 * BEST, deadline, lower, None, hard)
