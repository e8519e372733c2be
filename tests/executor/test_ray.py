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
from pathlib import Path

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


# --- schedopt bench on Ray ---------------------------------------------------------------------


#: Four quick rows, and one (CP-SAT on a contested 64-GPU admission instance) that runs to its
#: 15 s limit: the worker running it is killed mid-run, once the quick rows are done.
def _bench_jobs():
    from schedopt.bench.runner import plan
    from schedopt.bench.suite import Suite, seeded
    from tests.bench.tiny import TINY

    slow = Suite(
        "test-ray-slow",
        "admission",
        seeded(
            "admission",
            "64gpu-200j",
            "generate_custom",
            {"hosts": 8, "jobs": 200, "slots": 12},
            (0,),
        ),
        methods=("cpsat",),
        time_limit_s=15.0,
    )
    return plan([TINY]), plan([slow])


def test_bench_rows_on_ray_equal_the_process_pool(cluster, tmp_path):
    from schedopt.bench import runner

    jobs, _ = _bench_jobs()
    on_ray = runner.run(jobs, cluster, tmp_path / "ray.jsonl", deadline=Deadline.after(120))
    with ProcessExecutor(2) as pool:
        local = runner.run(jobs, pool, tmp_path / "pool.jsonl")

    def essence(rows):
        return {
            runner.key_of(r): (r["status"], r["checksum"], tuple(r["objectives"] or ()))
            for r in rows
        }

    assert len(on_ray) == len(jobs)
    assert essence(on_ray) == essence(local)
    assert {r["executor"]["executor"] for r in on_ray} == {"ray"}


def _busy_ray_workers() -> set[int]:
    """Ray worker processes now running one of our tasks (their title names the function)."""
    busy = set()
    for pid in procs.descendants():
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if title.startswith("ray::_run_on_worker"):
            busy.add(pid)
    return busy


def test_bench_on_ray_survives_a_killed_worker_and_resumes(cluster, tmp_path):
    from schedopt.bench import runner

    quick, slow = _bench_jobs()
    jobs = slow + quick
    out = tmp_path / "rows.jsonl"
    killed: list[int] = []

    finished: list[str] = []

    def kill_the_slow_row(row) -> None:
        finished.append(runner.key_of(row))
        if len(finished) < len(quick):
            return  # the slow row is then the only one running
        until = time.monotonic() + START_S
        while not (busy := _busy_ray_workers()) and time.monotonic() < until:
            time.sleep(0.1)
        assert busy, "no Ray worker is running the slow row"
        for pid in busy:
            os.kill(pid, signal.SIGKILL)
        killed.extend(busy)

    rows = runner.run(jobs, cluster, out, on_row=kill_the_slow_row, deadline=Deadline.after(120))
    keys = {runner.key_of(r) for r in rows}
    assert killed
    assert keys == {j.key for j in quick}  # every finished row kept, the killed one not written
    assert runner.read_rows(out) == rows
    # the same run again repeats only the lost row
    again = runner.run(jobs, cluster, out, deadline=Deadline.after(120))
    assert [runner.key_of(r) for r in again] == [slow[0].key]
    assert again[0]["status"] in ("optimal", "feasible")
    assert sorted(runner.key_of(r) for r in runner.read_rows(out)) == sorted(j.key for j in jobs)


def test_a_local_cluster_leaves_no_token_file_behind(tmp_path):
    """Ray (2.5x+) turns token authentication on for a new local cluster and, with no token
    given, writes ~/.ray/auth_token, which outlives the cluster: the executor gives the cluster
    a token of its own in the environment while it runs, and takes it back at close."""
    import subprocess
    import sys

    script = (
        "import os\n"
        "from schedopt.executor import make_executor\n"
        "ex = make_executor('ray', jobs=1)\n"
        "assert ex.describe()['address'] == 'local'\n"
        "assert os.environ.get('RAY_AUTH_TOKEN')\n"
        "ex.close()\n"
        "assert 'RAY_AUTH_TOKEN' not in os.environ\n"
        "print('closed')\n"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE", "RAY_ADDRESS")
    }
    env.update(HOME=str(tmp_path), PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=START_S * 4,
        check=False,
    )
    assert done.returncode == 0 and "closed" in done.stdout, done.stderr[-2000:]
    assert not (tmp_path / ".ray").exists(), sorted(p.name for p in (tmp_path / ".ray").iterdir())
