"""``schedopt solve --time-limit T`` counts from the command's process's start: Python's start-up
and the imports before ``main`` are in the limit (#17: 2.6 s of them at load 15, which no
deadline saw). A slow start is emulated by a sleep before the command's imports, in a process
that runs the command as the ``schedopt`` script does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from schedopt.cli import EXIT_NO_SOLUTION, EXIT_OK, clock, main
from tests.timing import promised_s, slowdown

EXAMPLE = Path(__file__).resolve().parents[1] / "instances" / "admission" / "example.json"

#: The ``schedopt`` script (``from schedopt.cli import main; sys.exit(main())``) after a slow
#: start of ``sys.argv[1]`` seconds; ``schedopt.solve`` reports the limit the command gives it.
SLOW_START = """\
import sys, time
time.sleep(float(sys.argv.pop(1)))
import schedopt
solve = schedopt.solve
def spy(*args, **kwargs):
    print(f"solver's limit {kwargs['time_limit_s']!r}", file=sys.stderr)
    return solve(*args, **kwargs)
schedopt.solve = spy
from schedopt.cli import main
sys.exit(main())
"""


def _run(sleep_s: float, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """The command after a slow start of ``sleep_s``, and its wall time from its start."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", SLOW_START, str(sleep_s), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return done, time.perf_counter() - started


def test_a_start_slower_than_the_limit_exits_5_within_the_limit() -> None:
    """1.2 s of start-up against a 1 s limit: exit 5 (no solution in time), within the promise
    from the process's start, and the file is not loaded (today's main loaded and solved it,
    exit 0, after 1.2 s + its own 1 s)."""
    done, wall_s = _run(1.2, "solve", str(EXAMPLE), "--time-limit", "1", "--json")
    assert done.returncode == EXIT_NO_SOLUTION, done.stderr
    doc = json.loads(done.stdout)
    assert doc["status"] == "no_solution"
    assert "start-up" in doc["explanation"] and "was not loaded" in doc["explanation"]
    assert doc["timing"]["start_s"] >= 1.2
    assert "solver's limit" not in done.stderr  # no solve started
    assert wall_s <= promised_s(1.0)


def test_the_solver_gets_the_limit_less_the_start() -> None:
    """1.5 s of start-up against a limit that leaves the load time on this machine now
    (2.5 s quiet): the solver is given at most the limit less the start-up (today's main gave
    it the limit less loading alone: 3.1 s of a 4 s limit)."""
    limit = 1.5 + 2.5 * slowdown()
    args = ("solve", str(EXAMPLE), "--time-limit", f"{limit:.2f}", "--method", "heuristic:edf")
    done, wall_s = _run(1.5, *args, "--json")
    assert done.returncode == EXIT_OK, done.stderr
    doc = json.loads(done.stdout)
    given = float(done.stderr.split("solver's limit ", 1)[1].split()[0])
    assert given <= doc["timing"]["time_limit_s"] - 1.5
    assert doc["timing"]["start_s"] >= 1.5
    assert doc["timing"]["load_s"] >= doc["timing"]["start_s"]
    assert wall_s <= promised_s(doc["timing"]["time_limit_s"])


def test_a_call_of_main_counts_from_the_call(capsys: pytest.CaptureFixture[str]) -> None:
    """``main(argv)`` from a program (here the test process, started long before) counts its
    limit from the call, not from its process's start."""
    args = ["solve", str(EXAMPLE), "--time-limit", "600", "--method", "heuristic:edf", "--json"]
    assert main(args) == EXIT_OK
    assert json.loads(capsys.readouterr().out)["timing"]["start_s"] < 0.5


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_the_process_start_is_read_from_the_system() -> None:
    """A fresh process's start, on this clock, lies between just before it was spawned (less
    one 10 ms tick) and its first line of Python; not when it is read, after a sleep."""
    script = (
        "import time; first_line = time.perf_counter(); time.sleep(0.3)\n"
        "from schedopt.cli import clock; print(clock.process_started(), first_line)"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    before = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    started, first_line = (float(x) for x in done.stdout.split())
    assert before - 0.011 <= started <= first_line


def test_without_proc_the_command_counts_from_main(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_proc(*args, **kwargs):
        raise OSError("no /proc here")

    monkeypatch.setattr("builtins.open", no_proc)
    assert clock.process_started() is None
    now = time.perf_counter()
    assert now <= clock.command_started() <= time.perf_counter()
