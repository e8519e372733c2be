"""``Aside`` (schedopt/executor/aside.py): one task on a worker of its own while this process
goes on — its result when it ends, nothing while it runs, its worker killed at the deadline
and at once on close, none left on any path."""

from __future__ import annotations

import math
import os
import time

from schedopt.core.stopping import Deadline
from schedopt.executor import Task
from schedopt.executor.aside import Aside
from tests.executor import procs
from tests.timing import slowdown

#: Worker start-up (an interpreter importing schedopt) takes 1-4 s on the busy 2-core machine.
START_S = 15.0


def _wait(aside: Aside, within_s: float):
    until = time.monotonic() + within_s
    while time.monotonic() < until:
        res = aside.poll()
        if res is not None:
            return res
        time.sleep(0.05)
    raise AssertionError(f"no result within {within_s} s")


def test_aside_runs_the_task_while_this_process_goes_on():
    with Aside(Task("f", math.factorial, (10,)), Deadline.after(START_S * slowdown())) as aside:
        res = _wait(aside, START_S * slowdown())
        assert res.ok and res.value == math.factorial(10)
        assert res.worker.startswith("pid ") and res.worker != f"pid {os.getpid()}"
        assert aside.result() is res
    assert not procs.worker_pids(os.getpid())


def test_aside_poll_is_none_while_the_task_runs_and_close_kills_it():
    aside = Aside(Task("s", procs.getpid_after, (60.0,)), Deadline.after(120))
    try:
        until = time.monotonic() + START_S * slowdown()
        while not aside.worker_pids():
            assert time.monotonic() < until, "no worker started"
            time.sleep(0.05)
        pids = set(aside.worker_pids())
        assert aside.poll() is None
        began = time.monotonic()
    finally:
        aside.close()
    assert time.monotonic() - began < 2.0 * slowdown()  # a stop is seen within POLL_S
    assert not procs.wait_gone(pids, 5.0)
    res = aside.poll()
    assert res is not None and res.timed_out and not res.ok


def test_aside_kills_its_task_at_the_deadline():
    aside = Aside(Task("s", procs.getpid_after, (60.0,)), Deadline.after(1.0))
    try:
        res = _wait(aside, 10.0 * slowdown())
        assert res.timed_out and res.value is None
    finally:
        aside.close()
    assert not procs.worker_pids(os.getpid())
