"""The Ray executor on a real local Ray cluster (started here, on loopback only): the same
results as the process pool, exceptions as rows, the deadline cancels running tasks, a killed
worker is a ``lost`` row, and nothing of the cluster is left after close. Skipped when Ray (the
extra ``schedopt[ray]``) is not installed."""

from __future__ import annotations

import math
import operator
import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from schedopt.core.stopping import Deadline
from schedopt.executor import ProcessExecutor, Task, make_executor
from schedopt.executor.base import Executor
from tests.executor import procs

pytest.importorskip("ray", reason="Ray is not installed (pip install 'schedopt[ray]')")

pytestmark = pytest.mark.slow  # a cluster starts in 5-15 s on the busy 2-core machine

#: Worker start-up on Ray (a fresh worker imports schedopt) on the busy machine.
START_S = 30.0
DEADLINE_MARGIN_S = 3.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[Executor]:
    """One local cluster for the module; on teardown, every process it started is gone."""
    before = procs.descendants()
    ex = make_executor("ray", jobs=2)
    try:
        assert ex.describe()["address"] == "local"
        yield ex
    finally:
        ex.close()
    left = procs.wait_gone(procs.descendants() - before, 15.0)
    assert not left, f"Ray processes left after close: {sorted(left)}"


def _tasks() -> list[Task]:
    return [
        *(Task(f"fact{n}", math.factorial, (n,)) for n in range(6)),
        Task("zero", operator.truediv, (1, 0)),
        Task("env", procs.env_value, ("OMP_NUM_THREADS",)),
    ]


def _by_key(results):
    return {r.key: (r.value, r.error, r.timed_out, r.lost) for r in results}


def test_ray_results_equal_the_process_pool(cluster):
    on_ray = list(cluster.run(_tasks(), deadline=Deadline.after(START_S * 2)))
    with ProcessExecutor(2) as pool:
        local = list(pool.run(_tasks()))
    assert len(on_ray) == len(_tasks())
    assert _by_key(on_ray) == _by_key(local)
    assert _by_key(on_ray)["zero"][1].startswith("ZeroDivisionError")
    assert _by_key(on_ray)["env"][0] == "1"  # threads pinned on Ray too
    assert all(r.worker.startswith("node ") for r in on_ray)


def test_ray_deadline_cancels_a_running_task(cluster, tmp_path):
    pid_file = tmp_path / "pid"
    list(cluster.run([Task("warm", abs, (1,))], deadline=Deadline.after(START_S)))
    deadline_s = 12.0  # one warm worker; the second starts in 2-8 s here
    started = time.perf_counter()
    results = {}
    for r in cluster.run(
        [Task("sleeper", procs.write_pid_and_sleep, (600, str(pid_file))), Task("q", abs, (-4,))],
        deadline=Deadline.after(deadline_s),
    ):
        results[r.key] = r
    elapsed = time.perf_counter() - started
    assert results["q"].value == 4
    assert results["sleeper"].timed_out
    assert deadline_s <= elapsed < deadline_s + DEADLINE_MARGIN_S
    assert not procs.wait_gone({int(pid_file.read_text())}, 10.0)  # force-cancelled: killed


def test_ray_killed_worker_is_a_lost_row(cluster, tmp_path):
    pid_file = tmp_path / "pid"

    def kill_victim() -> None:
        os.kill(int(procs.wait_for_file(pid_file, START_S)), signal.SIGKILL)

    killer = threading.Thread(target=kill_victim, daemon=True)
    killer.start()
    tasks = [
        Task("victim", procs.write_pid_and_sleep, (600, str(pid_file))),
        *(Task(f"ok{i}", abs, (-i,)) for i in range(3)),
    ]
    rows = {r.key: r for r in cluster.run(tasks, deadline=Deadline.after(START_S * 2))}
    killer.join()
    assert rows["victim"].lost and not rows["victim"].timed_out
    assert [rows[f"ok{i}"].value for i in range(3)] == [0, 1, 2]
