"""Helpers for the executor tests: live processes from /proc (psutil is not a dependency),
and task functions the workers import by reference."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state) of ``pid``, or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    rest = text[text.rindex(")") + 2 :].split()
    return int(rest[1]), rest[0]


def alive(pid: int) -> bool:
    """``pid`` runs (a zombie, dead but not yet reaped, does not count)."""
    stat = _stat(pid)
    return stat is not None and stat[1] != "Z"


def descendants(root: int | None = None) -> set[int]:
    """Every live process below ``root`` (default: this one)."""
    root = os.getpid() if root is None else root
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[1] != "Z":
                parents[int(entry)] = stat[0]
    out: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier} - out
        out |= frontier
    return out


def wait_gone(pids: set[int], within_s: float) -> set[int]:
    """The pids still alive after waiting up to ``within_s`` for them to end."""
    until = time.monotonic() + within_s
    left = {p for p in pids if alive(p)}
    while left and time.monotonic() < until:
        time.sleep(0.1)
        left = {p for p in left if alive(p)}
    return left


def getpid_after(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def env_value(name: str) -> str | None:
    return os.environ.get(name)


def sleep_with_child(seconds: float, pid_file: str) -> None:
    """Start a grandchild that sleeps, record its pid and this worker's, and sleep too."""
    child = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"])
    Path(pid_file).write_text(f"{os.getpid()} {child.pid}")
    time.sleep(seconds)


def write_pid_and_sleep(seconds: float, pid_file: str) -> int:
    Path(pid_file).write_text(str(os.getpid()))
    time.sleep(seconds)
    return os.getpid()


def wait_for_file(path: Path, within_s: float) -> str:
    until = time.monotonic() + within_s
    while time.monotonic() < until:
        if path.exists() and path.read_text():
            return path.read_text()
        time.sleep(0.05)
    raise AssertionError(f"{path} not written within {within_s} s")


def nested_pool_sleep(seconds: float, pid_file: str) -> None:
    """A task that runs a process pool of its own (a decomposition inside a benchmark row),
    whose worker records its pid and sleeps."""
    from schedopt.executor import ProcessExecutor, Task

    with ProcessExecutor(1) as inner:
        list(inner.run([Task("inner", write_pid_and_sleep, (seconds, pid_file))]))


def worker_pids(root: int) -> set[int]:
    """The process executor's workers now running below ``root``."""
    out = set()
    for pid in descendants(root):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if b"schedopt.executor._worker" in cmdline:
            out.add(pid)
    return out


def signal_while_workers_run(script: str, sig: int, workers: int, within_s: float) -> set[int]:
    """Run ``script`` in a fresh interpreter (this checkout first on its path), wait until
    ``workers`` of its worker processes run, send it ``sig`` and wait for it to end; the
    workers still alive 5 s later (the workers' watchdog checks every 0.5 s)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    parent = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        until = time.monotonic() + within_s
        seen: set[int] = set()
        while len(seen) < workers:
            assert parent.poll() is None, f"the solve ended (exit {parent.returncode}) first"
            assert time.monotonic() < until, f"{len(seen)} workers after {within_s} s"
            seen = worker_pids(parent.pid)
            time.sleep(0.05)
        parent.send_signal(sig)
        parent.wait(timeout=30)
        return wait_gone(seen, 5.0)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def sleeping_task(*args: object) -> None:
    """A part or design that holds its worker busy until the worker is stopped: a signalled
    solve's test sends its signal while every worker runs one, however slow the machine."""
    time.sleep(600)
