"""Gates before the steps that cannot be interrupted once started: a first import.

An import runs to its end; no deadline is checked inside it. So before a costly first import
(pydantic with the file functions, a problem's package, CP-SAT), its CPU seconds times the
slowdown this thread runs at now are compared with the time left, and the import is refused
(:class:`DeadlineReached`, which the callers turn into an honest ``NO_SOLUTION``) when it would
not end in time (#17).

The slowdown is read from the scheduler's own accounts (``/proc/thread-self/schedstat``: time on
a CPU and runnable but waiting for one, since the thread started): over a young thread's whole
life, the command line's start-up and imports, the same kind of work as the import gated, at no
cost. The 30 ms busy-loop probe (:func:`~schedopt.core.stopping.cpu_share_slowdown`) is kept
for an old thread (its life says little about now) and where Linux does not say: beside 4 CPU
burners (load 5-10) it cost 0.4-1.0 s of wall a gate, and the CLI passes up to three gates.
"""

from __future__ import annotations

import importlib
import math
import os
import sys
import time
from types import ModuleType

from .stopping import Deadline, DeadlineReached, cpu_share_slowdown, thread_cpu_times

#: A thread younger than this (seconds since it started) is measured over its whole life; an
#: older one by the probe.
HISTORY_S = 60.0
#: Seconds on or waiting for a CPU below which a thread's life measures nothing.
MIN_HISTORY_S = 0.05
#: Field 22 of ``/proc/PID/stat`` (``starttime``), counted from the field after the command
#: name's closing parenthesis (field 3, ``state``).
_STARTTIME_AFTER_COMM = 22 - 3


def started_ago(stat_path: str) -> float | None:
    """Seconds since the process or thread of ``stat_path`` (``/proc/self/stat``,
    ``/proc/thread-self/stat``) started: its ``starttime`` (clock ticks since boot, on
    ``CLOCK_BOOTTIME``; 10 ms, truncated, so at most one tick too old, never too young), or
    None where the system does not say or says something impossible."""
    try:
        with open(stat_path, "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()  # the name may hold spaces and ")"
        ticks = int(fields[_STARTTIME_AFTER_COMM])
        per_second = os.sysconf("SC_CLK_TCK")
        since_boot = time.clock_gettime(time.CLOCK_BOOTTIME)
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    age = since_boot - ticks / per_second
    return age if age >= 0.0 else None


def life_slowdown() -> float | None:
    """How much slower than alone the calling thread has run since it started: its time on and
    waiting for a CPU over its time on one (at least 1), or None for a thread older than
    :data:`HISTORY_S`, one that has run too little, or where Linux's accounts are not read."""
    age = started_ago("/proc/thread-self/stat")
    times = thread_cpu_times()
    if age is None or times is None or age > HISTORY_S:
        return None
    _, on_cpu, waiting = times
    if on_cpu + waiting < MIN_HISTORY_S:
        return None
    return max(1.0, (on_cpu + waiting) / max(on_cpu, 1e-9))


def gate_slowdown() -> float:
    """The slowdown a gate scales a quiet estimate by: the thread's life's
    (:func:`life_slowdown`), else the probe's, uncapped (a gate that refuses work wants the
    measure itself)."""
    life = life_slowdown()
    return cpu_share_slowdown(cap=math.inf) if life is None else life


def ensure_time_for(quiet_cpu_s: float, deadline: Deadline, phase: str, subject: str) -> None:
    """Raise :class:`DeadlineReached` (``phase``; its message "``subject`` takes about … s to
    import …") unless ``quiet_cpu_s`` times :func:`gate_slowdown` fits in the time left."""
    slower = gate_slowdown()
    needed = quiet_cpu_s * slower
    left = deadline.remaining()
    if needed > left:
        raise DeadlineReached(
            phase,
            f"{subject} takes about {needed:.1f} s to import ({quiet_cpu_s} s quiet, this "
            f"machine {slower:.1f}× slower now), more than the {left:.1f} s left of the time "
            "limit",
        )


def first_import_deadline(deadline: Deadline | None, deterministic: bool) -> Deadline | None:
    """The deadline a solver's first-import gate should use: ``deadline``, or None (not gated)
    in deterministic mode, where the run must not depend on the wall clock (#17)."""
    return None if deterministic else deadline


def import_in_time(
    module: str, quiet_cpu_s: float, deadline: Deadline | None, subject: str
) -> ModuleType:
    """Import ``module`` (one imported already at once, measuring nothing; with no deadline,
    ungated) once its import fits in the time left (:func:`ensure_time_for`)."""
    if module not in sys.modules and deadline is not None:
        ensure_time_for(quiet_cpu_s, deadline, f"importing {module}", subject)
    return importlib.import_module(module)
