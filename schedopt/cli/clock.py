"""When a command started: the moment its process did, as the operating system recorded it.

``schedopt solve --time-limit T`` promises an answer within T (plus the documented overhead) of
the command's start. The user waits from the moment the process starts, through Python's
start-up and the imports of the command line, which at load 15 on 2 cores took 2.6 s before
``main`` ran (#17). A clock started in ``main`` does not see that time, so the command's clock
starts when its process did. Linux records that instant in ``/proc/self/stat`` (field 22,
``starttime``: clock ticks since boot, on the ``CLOCK_BOOTTIME`` clock); read against that clock
now, it gives the process's age, so its start on ``time.perf_counter``'s clock. The tick is 10 ms
(``SC_CLK_TCK`` 100) and truncated, so the start read is at most one tick early: never late.
"""

from __future__ import annotations

import time

from schedopt.core.gates import started_ago


def process_started() -> float | None:
    """The ``time.perf_counter()`` reading at which this process started (its fork, so a
    launcher's ``exec`` into Python is included), or None where the system does not say (no
    ``/proc``: macOS, Windows) or says something impossible."""
    age = started_ago("/proc/self/stat")
    return None if age is None else time.perf_counter() - age


def command_started() -> float:
    """The origin of a command's ``--time-limit``: its process's start, else (a system that
    does not say when) now."""
    started = process_started()
    return time.perf_counter() if started is None else started
