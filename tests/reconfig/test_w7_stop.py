"""W7 stops where it cannot gain (#17): once the best plan meets the proven bound within its
tolerance, and when the pass from the second start finds no better plan (columns alone no
longer send the cycle of modes round again). Deterministic: the columns are a stand-in whose
plans depend on the target alone (as in ``test_w7_landing.py``)."""

from __future__ import annotations

import pytest

from schedopt.core.stopping import Deadline

from .w7_stand_in import BEST, StandInColumns, run_columned
from .w7_stand_in import StandInPlan as _Plan


def _columned(
    monkeypatch: pytest.MonkeyPatch, lower: int, deadline: Deadline | None, own_column=False
):
    """W7 over the stand-in from a start of 2 x BEST: (plans found, the targets it tried, as
    (target, each column's own all-reduce)); ``own_column``: the first target of the
    packings' "own" pass adds a column too."""
    tried: list[tuple[int, bool]] = []
    seconds: list[int] = []  # the second start's targets
    extra: list[int] = []

    class Fake(StandInColumns):
        """BEST at every target from BEST on, nothing below; a target above the best plan
        with the best plan's level (the second start's) adds a new column, and so does the
        first "free" target after it (the cycle then comes back to a second start that is
        not the same pass again)."""

        def plan(self, lam, deadline, nodes=None):  # type: ignore[no-untyped-def]
            if not self.packed:
                return None
            tried.append((lam, self.own))
            if lam >= BEST and not self.own and self.level is not None:
                self.seqs.add((len(tried),))  # a new column, no better plan
                seconds.append(lam)
            elif not extra and (
                (own_column and self.own)  # the first "own" target's
                or (seconds and self.level is None)  # or a "free" one after the second start
            ):
                extra.append(lam)
                self.seqs.add((-len(tried),))
            return [_Plan(BEST)] if lam >= BEST else None

    return run_columned(monkeypatch, Fake, lower, deadline), tried


def test_w7_stops_once_its_plan_meets_the_bound(monkeypatch) -> None:
    from schedopt.problems.reconfig.targets import COLUMN_TOL

    lower = int(BEST * (1 - COLUMN_TOL / 2))  # BEST is within W7's tolerance of the bound
    found, tried = _columned(monkeypatch, lower, Deadline.after(30.0))
    assert found and found[0][0].value == BEST
    # the first target of the packings holds BEST, and nothing after it is tried
    assert len(tried) == 1


def test_w7_tries_below_a_plan_the_bound_is_far_from(monkeypatch) -> None:
    found, tried = _columned(monkeypatch, int(BEST * 0.9), Deadline.after(30.0))
    assert found and found[0][0].value == BEST
    assert min(lam for lam, _ in tried) < BEST * 0.95  # the passes from the bound ran


def test_w7_ends_when_the_second_start_finds_no_better_plan(monkeypatch) -> None:
    # the second start's pass adds columns and no better plan: it ends W7 (before, the cycle
    # of modes went round again for the columns, and again, until the deadline)
    found, tried = _columned(monkeypatch, int(BEST * 0.9), Deadline.after(30.0))
    assert found and found[0][0].value == BEST
    above = [lam for lam, own in tried if lam > BEST * 1.001 and not own]
    assert above and len(above) == len(set(above))  # one pass from the second start


def test_w7_skips_a_pass_that_would_repeat_itself(monkeypatch) -> None:
    # "own" adds a column, then "best" and "free" find nothing: "own" from the state its
    # pass ended in would try the same targets with the same columns and level; skipped
    found, tried = _columned(monkeypatch, int(BEST * 0.9), Deadline.after(30.0), True)
    assert found and found[0][0].value == BEST
    own = [lam for lam, o in tried if o]
    assert own and len(own) == len(set(own))  # one "own" pass


@pytest.mark.parametrize("hard", [False, True])
def test_w7_tries_no_target_it_has_no_time_for(monkeypatch, hard: bool) -> None:
    # a target's pricing has fixed work (0.54 s at 1,024 GPUs at a seventh of a core): one
    # started with 0.01 s left ended W7 0.53 s past its deadline (#17); a target is now tried
    # only with at least the time the last one took left
    import time

    took_s = 0.3
    left: list[float] = []  # the time left at each target's start

    class Slow(StandInColumns):
        """Each target takes ``took_s`` whatever the time left; BEST from BEST on."""

        def plan(self, lam, deadline, nodes=None):  # type: ignore[no-untyped-def]
            left.append(deadline.remaining())
            time.sleep(took_s)
            return [_Plan(BEST)] if lam >= BEST else None

    # ``hard``: W7's own share ends later, widening's end (``hard``) at 1 s
    deadline = Deadline.after(1.0)
    own = Deadline.after(30.0) if hard else deadline
    found = run_columned(monkeypatch, Slow, int(BEST * 0.9), own, deadline if hard else None)
    assert found and len(left) >= 2  # the targets it had time for ran
    assert min(left[1:]) >= took_s  # none after the first started with less than one's time
    assert time.perf_counter() - deadline.end <= 0.05
