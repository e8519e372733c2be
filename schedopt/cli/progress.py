"""``schedopt solve``'s progress on stderr: the method, the lexicographic level, the incumbent,
the bound and its gap, and the time left, from the library's
:class:`~schedopt.core.progress.Progress` events (``SolveOptions.on_progress``).

Shown when stderr is a terminal (a status line rich redraws in place, gone when the solve
ends) or when ``--progress`` asks for it (then, off a terminal or beside ``--verbose``'s solver
log, one plain line per event). Never with ``--json`` unless asked: stdout holds the JSON
document alone either way, as progress goes to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator
from dataclasses import replace

from rich.console import Console
from rich.markup import escape

from schedopt.core.progress import Progress, ProgressCallback

from .common import err_console, fmt, fmt_gap


def add_progress_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--progress",
        action="store_true",
        help="show progress on stderr (method, level, incumbent, bound, time left) even when "
        "stderr is not a terminal or with --json; on by default on a terminal",
    )


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def wanted(args: argparse.Namespace) -> bool:
    """Show progress: asked for, or on a terminal without --json."""
    return bool(args.progress) or (not args.json and _stderr_is_terminal())


def _gap(event: Progress) -> float | None:
    inc, bound = event.incumbent, event.bound
    if inc is None or bound is None:
        return None
    return abs(bound - inc) / max(abs(inc), 1e-9)


def describe(event: Progress) -> str:
    """One line: ``cpsat · level 2/3 (L2) improved · incumbent 960 · bound 969 (0.94%) ·
    1.2 s used, 8.8 s left``."""
    parts = [event.method]
    if event.level is not None:
        parts.append(f"level {event.level}/{event.levels} ({event.level_name}) {event.phase}")
    else:
        parts.append(event.phase)
    if event.incumbent is not None:
        parts.append(f"incumbent {fmt(event.incumbent)}")
    if event.bound is not None:
        gap = _gap(event)
        parts.append(f"bound {fmt(event.bound)}" + (f" ({fmt_gap(gap)})" if gap else ""))
    left = "" if event.time_left_s is None else f", {event.time_left_s:.1f} s left"
    parts.append(f"{event.elapsed_s:.1f} s used{left}")
    return " · ".join(parts)


class _Lines:
    """One plain line per event (off a terminal, or beside a solver's log)."""

    def __init__(self, console: Console):
        self.console = console

    def __call__(self, event: Progress) -> None:
        self.console.print(escape(describe(event)), soft_wrap=True, highlight=False)


@contextlib.contextmanager
def display(args: argparse.Namespace) -> Iterator[ProgressCallback | None]:
    """The callback to pass to ``schedopt.solve(on_progress=...)``, or None to stay silent."""
    if not wanted(args):
        yield None
        return
    console = err_console()
    if not console.is_terminal or args.verbose:
        yield _Lines(console)
        return
    line = _Ticking(args.method)
    with console.status(line):
        yield line.update


class _Ticking:
    """The status line: the last event, its clock running on between events (rich redraws
    it several times a second)."""

    def __init__(self, method: str):
        self.event = Progress(method, "loading")
        self.at = time.perf_counter()

    def update(self, event: Progress) -> None:
        self.event, self.at = event, time.perf_counter()

    def __rich__(self) -> str:
        since = time.perf_counter() - self.at
        e = self.event
        left = None if e.time_left_s is None else max(0.0, e.time_left_s - since)
        return escape(describe(replace(e, elapsed_s=e.elapsed_s + since, time_left_s=left)))
