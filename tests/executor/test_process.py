"""The process executor keeps the executor contract (schedopt/executor/base.py): one result per
task, exceptions as rows, the deadline kills running tasks, no worker outlives the executor on
any path, workers pinned to the requested threads."""

from __future__ import annotations

import math
import operator
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from schedopt.core.stopping import Deadline
from schedopt.executor import (
    THREAD_ENV_VARS,
    InlineExecutor,
    ProcessExecutor,
    Task,
    make_executor,
)
from tests.executor import procs
from tests.timing import slowdown

#: Worker start-up (an interpreter importing schedopt) takes 1-4 s on the busy 2-core machine;
#: the margins below hold with that.
START_S = 15.0
#: How far past the deadline ``run`` may return: killing and reaping a worker (times the
#: machine's slowdown, tests/timing.py).
DEADLINE_MARGIN_S = 2.0


def _tasks() -> list[Task]:
    return [
        *(Task(f"fact{n}", math.factorial, (n,)) for n in range(6)),
        Task("div", operator.truediv, (7, 2)),
        Task("zero", operator.truediv, (1, 0)),
        Task("kw", int, ("ff",), {"base": 16}),
    ]


def _by_key(results):
    return {r.key: (r.value, r.error, r.timed_out) for r in results}


def test_process_results_equal_inline_and_exceptions_are_rows():
    inline = _by_key(InlineExecutor().run(_tasks()))
    with make_executor("process", jobs=2) as ex:
        results = list(ex.run(_tasks()))
    assert len(results) == len(_tasks())
    assert _by_key(results) == inline
    assert inline["zero"][1].startswith("ZeroDivisionError")
    assert inline["kw"][0] == 255
    assert all(r.worker.startswith("pid ") for r in results)


def test_an_unpicklable_task_is_a_row():
    with ProcessExecutor(1) as ex:
        results = list(ex.run([Task("lambda", lambda: 1), Task("ok", abs, (-3,))]))
    rows = {r.key: r for r in results}
    assert rows["lambda"].error and "pickle" in rows["lambda"].error
    assert rows["ok"].value == 3


def test_workers_pin_their_threads():
    with ProcessExecutor(1, threads_per_worker=3) as ex:
        rows = {
            r.key: r.value
            for r in ex.run(Task(name, procs.env_value, (name,)) for name in THREAD_ENV_VARS)
        }
    assert rows == dict.fromkeys(THREAD_ENV_VARS, "3")


@pytest.mark.slow  # 6 s deadline plus worker start-up
def test_deadline_kills_a_running_task_and_its_children(tmp_path):
    pid_file = tmp_path / "pids"
    with ProcessExecutor(2) as ex:
        # warm the workers so the deadline below measures killing, not start-up
        assert len(list(ex.run(Task(f"w{i}", abs, (i,)) for i in range(2)))) == 2
        started = time.perf_counter()
        deadline = Deadline.after(6.0)
        tasks = [
            Task("sleeper", procs.sleep_with_child, (600, str(pid_file))),
            Task("quick", abs, (-1,)),
            Task("never-started-1", abs, (1,)),
            Task("never-started-2", abs, (2,)),
        ]
        results = {}
        for r in ex.run(tasks, deadline=deadline):
            results[r.key] = r
            if r.key == "quick":  # the sleeper runs beside it on the other warm worker
                procs.wait_for_file(pid_file, 6.0)
        elapsed = time.perf_counter() - started
        worker, grandchild = map(int, pid_file.read_text().split())
        assert results["sleeper"].timed_out and results["sleeper"].value is None
        assert results["quick"].value == 1
        assert len(results) == 4
        assert 6.0 <= elapsed < 6.0 + DEADLINE_MARGIN_S * slowdown()
        assert not procs.wait_gone({worker, grandchild}, 2.0)
        # the killed slot starts afresh for the next task
        assert [r.value for r in ex.run([Task("again", abs, (-5,))])] == [5]


def test_a_nested_pool_dies_with_the_task_that_started_it(tmp_path):
    """A decomposition's own pool inside a benchmark row: killing the row (here: the caller
    stops the run) also ends the inner workers (their watchdog sees their parent gone)."""
    pid_file = tmp_path / "inner"
    with ProcessExecutor(2) as ex:
        tasks = [
            Task("outer", procs.nested_pool_sleep, (600, str(pid_file))),
            Task("watch", procs.wait_for_file, (pid_file, 2 * START_S)),
        ]
        for r in ex.run(tasks):  # the inner worker runs: stop the run (the outer task killed)
            assert r.key == "watch" and r.ok
            break
        inner = int(pid_file.read_text())
        assert not procs.wait_gone({inner}, 5.0)


def test_deadline_returns_within_margin_of_a_short_limit():
    with ProcessExecutor(1) as ex:
        list(ex.run([Task("warm", abs, (0,))]))
        started = time.perf_counter()
        results = list(ex.run([Task("s", time.sleep, (600,))], deadline=Deadline.after(1.0)))
        elapsed = time.perf_counter() - started
    assert [r.timed_out for r in results] == [True]
    assert 1.0 <= elapsed < 1.0 + DEADLINE_MARGIN_S * slowdown()


def test_expired_deadline_yields_every_task_timed_out_at_once():
    with ProcessExecutor(1) as ex:
        started = time.perf_counter()
        results = list(
            ex.run([Task(str(i), abs, (i,)) for i in range(5)], deadline=Deadline.after(0))
        )
        assert time.perf_counter() - started < slowdown()
        assert ex.worker_pids() == []  # nothing was started
    assert [r.timed_out for r in results] == [True] * 5


def test_no_worker_left_after_close():
    before = procs.descendants()
    ex = ProcessExecutor(2)
    list(ex.run(Task(str(i), abs, (i,)) for i in range(4)))
    pids = set(ex.worker_pids())
    assert len(pids) == 2 and pids <= procs.descendants()
    ex.close()
    ex.close()  # idempotent
    assert not procs.wait_gone(pids, 2.0)
    assert procs.descendants() <= before


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_no_worker_left_after_an_exception_in_the_with_block(error, tmp_path):
    before = procs.descendants()
    pid_file = tmp_path / "pid"
    with pytest.raises(error), ProcessExecutor(2) as ex:
        for r in ex.run(
            [
                Task("long", procs.write_pid_and_sleep, (600, str(pid_file))),
                Task("short", abs, (1,)),
            ]
        ):
            assert r.key == "short"
            procs.wait_for_file(pid_file, START_S)
            pids = set(ex.worker_pids())
            raise error("stop")
    assert int(pid_file.read_text()) in pids
    assert not procs.wait_gone(pids, 2.0)
    assert procs.descendants() <= before


def test_a_killed_worker_is_a_lost_row_and_the_run_goes_on(tmp_path):
    pid_file = tmp_path / "pid"

    def kill_victim() -> None:  # from outside, while it runs: a stand-in for the OOM killer
        os.kill(int(procs.wait_for_file(pid_file, START_S)), signal.SIGKILL)

    killer = threading.Thread(target=kill_victim, daemon=True)
    killer.start()
    with ProcessExecutor(1) as ex:
        tasks = [
            Task("victim", procs.write_pid_and_sleep, (600, str(pid_file))),
            Task("after", abs, (-2,)),
        ]
        rows = {r.key: r for r in ex.run(tasks, deadline=Deadline.after(60))}
    killer.join()
    assert rows["victim"].lost and rows["victim"].error.startswith("WorkerLost")
    assert not rows["victim"].timed_out
    assert rows["after"].value == 2


_SCRIPT = """
import sys, time
from schedopt.executor import ProcessExecutor, Task
ex = ProcessExecutor(2)
list(ex.run([Task("w0", abs, (0,)), Task("w1", abs, (1,))]))
print(*ex.worker_pids(), flush=True)
for r in ex.run([Task("s", time.sleep, (600,))]):
    pass
"""


@pytest.mark.slow  # a parent interpreter and two workers start: 3-8 s
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_workers_end_when_their_parent_is_killed(sig):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    parent = subprocess.Popen(
        [sys.executable, "-c", _SCRIPT], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert parent.stdout is not None
        workers = {int(p) for p in parent.stdout.readline().split()}
        assert len(workers) == 2
        time.sleep(0.5)
        parent.send_signal(sig)
        parent.wait(timeout=10)
        assert not procs.wait_gone(workers, 5.0)  # the workers' watchdog: 0.5 s
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_make_executor_names():
    assert isinstance(make_executor("inline"), InlineExecutor)
    ex = make_executor("process", jobs=3)
    assert isinstance(ex, ProcessExecutor) and ex.workers == 3
    assert ex.describe()["executor"] == "process"
    ex.close()
    with pytest.raises(ValueError, match="unknown executor"):
        make_executor("threads")
    with pytest.raises(RuntimeError, match="closed"):
        next(iter(ex.run([Task("x", abs, (1,))])))


def test_results_path_unused(tmp_path: Path):
    """A run writes nothing: no temporary file is left in the working folder."""
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with ProcessExecutor(1) as ex:
            list(ex.run([Task("x", abs, (1,))]))
    finally:
        os.chdir(cwd)
    assert list(tmp_path.iterdir()) == []
