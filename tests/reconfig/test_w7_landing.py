"""W7's landing against its first target (#17): where the packings' search lands must not
hinge on where its targets started. Deterministic: the columns are a stand-in whose plans
depend on the target alone, the way the real MILP's do at 1,024 GPUs (a target above the best
plan gave a plan below it: 5.0935 s -> 5.078 s, where the bisection between the bound and
5.086 s found nothing)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from schedopt.problems.reconfig.design import Partitioner

from .test_widen import _small

BEST = 1_000_000  # the best plan the stand-in has (µs)
LOWERS = [int(BEST * (0.9 + 0.005 * k)) for k in range(0, 20, 2)]


@dataclass(frozen=True)
class _Plan:
    value: int
    gpus: tuple[str, ...] = ()


def _landing(monkeypatch: pytest.MonkeyPatch, lower: int) -> int:
    from schedopt.problems.reconfig import columns, targets

    class Fake:
        """Plans by target, not monotone in it: below 1.01 x BEST nothing holds; up to 1.02 x
        BEST (or with each column's own all-reduce) a plan of 1.015 x BEST; up to 1.03 x BEST,
        BEST itself; above, a plan just under the target."""

        def __init__(self, sd, part, groups, seqs=None) -> None:  # type: ignore[no-untyped-def]
            self.packed, self.seqs, self.start = groups is None, seqs, None
            self.level: int | None = None
            self.own = False

        def seq(self, ch):  # type: ignore[no-untyped-def]
            return None

        def packings_of(self, chains):  # type: ignore[no-untyped-def]
            return None

        def plan(self, lam, deadline):  # type: ignore[no-untyped-def]
            if not self.packed or lam < BEST * 1.01:
                return None
            if lam < BEST * 1.02 or self.own:
                return [_Plan(int(BEST * 1.015))]
            if lam < BEST * 1.03:
                return [_Plan(BEST)]
            return [_Plan(lam - 100)]

    monkeypatch.setattr(columns, "Columns", Fake)
    monkeypatch.setattr(targets, "_plan", lambda inst, chains: chains[0])
    monkeypatch.setattr(targets, "validate", lambda inst, plan: [])
    monkeypatch.setattr(targets, "evaluate", lambda inst, plan: (plan.value / 1e6,))
    inst, _ = _small()
    part = Partitioner(inst)
    monkeypatch.setattr(part.c, "sync_us", lambda gpus: 0)
    found = targets.columned(inst, part, 2 * BEST, None, lower)
    assert found
    return found[0][0].value


@pytest.mark.parametrize("lower", LOWERS)
def test_w7_lands_on_the_best_plan_from_any_first_target(monkeypatch, lower) -> None:
    # the first pass climbs from 1% above ``lower`` by 3% until a plan holds, then bisects
    # between the bound and it: from half of these starts (on the old code) it lands on
    # 1.015 x BEST, and the passes from the bound never try a target above that plan again
    # (only "own" does, whose plans are worse); the pass from the second start, between the
    # best plan and COLUMN_STEP above it, finds BEST from every start
    assert _landing(monkeypatch, lower) == BEST
