"""Progress of a running solve, for a caller who wants to show it (``SolveOptions.on_progress``).

The library is silent unless a callback is given. ``solve()`` calls it with :class:`Progress`
events: when a method starts (each heuristic of ``auto``, then the exact model), when each
lexicographic level starts and ends (the lexicographic driver), and while a solver runs, from
the solution callbacks the back-ends have (CP-SAT's on every improving solution, HiGHS's MIP
callback), at most every :data:`PROGRESS_INTERVAL_S`. ``solve()`` stamps every event with the
time used and left, drops solver updates that come sooner than the interval after the last one,
and stops calling a callback that raised (a display must never break a solve).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace

#: Least seconds between two solver updates passed on (level and method events always pass).
PROGRESS_INTERVAL_S = 0.5


@dataclass(frozen=True)
class Progress:
    """One event of a running solve.

    ``incumbent`` and ``bound`` are the current level's best value found and its proven bound,
    in the level's own units as the model states it (level 1 is the problem's first objective;
    a bound is None until the solver has one). ``level`` counts from 1 of ``levels``.
    ``milestone`` marks a method or level starting or ending (never rate-limited).
    """

    #: The method running: "heuristic:edf", "cpsat", "milp:highs", ...
    method: str
    #: What is happening: "started", "solving", "improved", "proven optimal", "stopped", ...
    phase: str = "solving"
    level: int | None = None
    levels: int | None = None
    level_name: str | None = None
    incumbent: float | None = None
    bound: float | None = None
    #: Seconds since ``solve()`` was called, and left of its time limit (stamped by ``solve``).
    elapsed_s: float = 0.0
    time_left_s: float | None = None
    milestone: bool = False


ProgressCallback = Callable[[Progress], None]


def due(last: float, now: float | None = None) -> bool:
    """Is a solver update due, the last one sent at ``last`` (perf_counter seconds)?"""
    return (time.perf_counter() if now is None else now) - last >= PROGRESS_INTERVAL_S


class Stamped:
    """``solve()``'s wrapper of the caller's callback: times every event, rate-limits solver
    updates, and turns itself off if the callback raises."""

    def __init__(self, callback: ProgressCallback, started: float, limit_s: float):
        self._callback: ProgressCallback | None = callback
        self._started, self._limit_s = started, limit_s
        self._last = -float("inf")

    def __call__(self, event: Progress) -> None:
        callback = self._callback
        if callback is None:
            return
        now = time.perf_counter()
        if not event.milestone and not due(self._last, now):
            return
        self._last = now
        elapsed = now - self._started
        stamped = replace(event, elapsed_s=elapsed, time_left_s=max(0.0, self._limit_s - elapsed))
        try:
            callback(stamped)
        except Exception as err:  # a display must never break a solve
            self._callback = None
            warnings.warn(f"on_progress raised {err!r}; progress is off", stacklevel=2)


def for_level(
    callback: ProgressCallback | None, level: int, levels: int, name: str
) -> ProgressCallback | None:
    """``callback`` with every event it passes on labelled as level ``level`` of ``levels``."""
    if callback is None:
        return None

    def labelled(event: Progress) -> None:
        callback(replace(event, level=level, levels=levels, level_name=name))

    return labelled
