"""No leftovers (issue 7, item 11): every file of a CBC run lives in one directory
``schedopt-cbc-<pid>-*`` removed on every path Python sees; a process killed before it could
clean up leaves its directory, which the next CBC run sweeps; HiGHS writes nothing at all."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import schedopt
from schedopt.backends import cbc
from schedopt.backends.milp import MilpSolver, solve_pulp
from schedopt.core.status import Status

from .test_cbc_status import market_split, one_binary

SHIPPED = Path(__file__).parents[2] / "instances" / "admission" / "small-s0.json"


@pytest.mark.parametrize("method", ["milp:cbc", "milp:highs"])
def test_a_normal_solve_leaves_nothing(method, private_tmp, tmp_path, monkeypatch) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    result = schedopt.solve(schedopt.load(SHIPPED), method, time_limit_s=30)
    assert result.status is Status.OPTIMAL
    assert list(private_tmp.iterdir()) == []
    assert list(work.iterdir()) == []


def _record_launches(monkeypatch) -> list:
    procs = []
    real = cbc._launch

    def launch(args):
        procs.append(real(args))
        return procs[-1]

    monkeypatch.setattr(cbc, "_launch", launch)
    return procs


def test_ctrl_c_during_the_run_stops_cbc_and_leaves_nothing(private_tmp, monkeypatch) -> None:
    procs = _record_launches(monkeypatch)

    def interrupted(proc, interrupt_at, kill_at):
        time.sleep(0.2)  # CBC is running, its files are on disk
        assert len(list(private_tmp.iterdir())) == 1
        raise KeyboardInterrupt

    monkeypatch.setattr(cbc, "_supervise", interrupted)
    with pytest.raises(KeyboardInterrupt):
        solve_pulp(market_split(), MilpSolver.CBC, time_limit_s=30)
    assert list(private_tmp.iterdir()) == []
    assert procs and procs[0].poll() is not None  # CBC was stopped and reaped


@pytest.mark.parametrize("stage", ["_write_inputs", "_read_solution"])
def test_an_exception_at_any_stage_leaves_nothing(stage, private_tmp, monkeypatch) -> None:
    real = getattr(cbc, stage)

    def broken(*args):
        real(*args)  # the files exist, then something goes wrong
        raise RuntimeError("boom")

    monkeypatch.setattr(cbc, stage, broken)
    with pytest.raises(RuntimeError, match="boom"):
        solve_pulp(one_binary()[0], MilpSolver.CBC, time_limit_s=30)
    assert list(private_tmp.iterdir()) == []


SOLVER_PROCESS = textwrap.dedent(
    f"""
    import sys
    sys.path.insert(0, {str(Path(__file__).parents[2])!r})
    from tests.backends.test_cbc_status import market_split
    from schedopt.backends.milp import MilpSolver, solve_pulp
    solve_pulp(market_split(), MilpSolver.CBC, time_limit_s=60)
    """
)


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_a_process_killed_by_sigterm_leaves_a_directory_the_next_run_sweeps(private_tmp):
    env = {**os.environ, "TMPDIR": str(private_tmp)}
    proc = subprocess.Popen([sys.executable, "-c", SOLVER_PROCESS], env=env)
    orphans: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not _children(proc.pid):  # wait until CBC runs
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        orphans = _children(proc.pid)
        proc.send_signal(signal.SIGTERM)  # a scheduler shut down: no finally runs
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in orphans:  # the CBC the killed process left running (ours to stop)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    left = [p.name for p in private_tmp.iterdir()]
    assert left and all(name.startswith(f"schedopt-cbc-{proc.pid}-") for name in left)
    # The next CBC run, in any process, removes the directories of dead processes.
    run = solve_pulp(one_binary()[0], MilpSolver.CBC, time_limit_s=30)
    assert run.status is Status.OPTIMAL
    assert list(private_tmp.iterdir()) == []


def test_the_sweep_keeps_directories_of_live_processes(private_tmp) -> None:
    mine = private_tmp / f"schedopt-cbc-{os.getpid()}-abcd"
    parent = private_tmp / f"schedopt-cbc-{os.getppid()}-efgh"
    foreign = private_tmp / "schedopt-cbc-notapid"
    for d in (mine, parent, foreign):
        d.mkdir()
    assert cbc.sweep_stale_runs() == []
    assert all(d.exists() for d in (mine, parent, foreign))
