"""A local pool of worker processes that can be killed: ``make_executor("process", jobs=N)``.

``concurrent.futures.ProcessPoolExecutor`` cannot stop a task once it runs (``cancel`` only
withdraws tasks not started), and the contract kills a running task at the deadline and on
close. So each of the ``workers`` slots here is one worker process of its own
(:mod:`schedopt.executor._worker`), reached over a socket pair: a slot whose task must stop has
its process group killed (SIGKILL) and is started afresh for the next task. Workers are
started with ``subprocess`` in a new session, with the thread caps of
:func:`~schedopt.executor.base.thread_env` in their environment (set before the interpreter
starts, so before numpy or a solver is imported), and with this process's ``sys.path`` first
on their ``PYTHONPATH``, so they import the same modules as the caller. POSIX only.

A worker that dies under its task (killed, out of memory) gives a result with ``lost=True``;
its slot is restarted.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection, wait
from typing import Any

from schedopt.executor.base import PoolExecutor, Task, TaskResult, thread_env, usable_cores

#: How long an idle worker asked to exit may take before it is killed (it holds nothing to
#: clean up; with 1 s, close took 1.1 s at load 15).
_EXIT_GRACE_S = 0.2


class _Slot:
    """One worker process and the task it runs, if any."""

    def __init__(self, env: dict[str, str]):
        self._env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self.conn: Connection | None = None
        self.task: Task | None = None
        self.started = 0.0

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def ensure_started(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            return
        self.stop()
        ours, theirs = socket.socketpair()
        try:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "schedopt.executor._worker",
                    str(theirs.fileno()),
                    str(os.getpid()),
                ],
                env=self._env,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,  # its own process group: killed as one, no Ctrl-C
                stdin=subprocess.DEVNULL,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())

    def submit(self, task: Task) -> None:
        """Hand ``task`` to the worker; raises if the task cannot be pickled."""
        payload = pickle.dumps(task)
        self.ensure_started()
        assert self.conn is not None
        self.conn.send((task.key, payload))
        self.task, self.started = task, time.perf_counter()

    def receive(self) -> TaskResult:
        """The result the worker sent, or a ``lost`` one if it died."""
        assert self.conn is not None and self.task is not None
        task, elapsed = self.task, time.perf_counter() - self.started
        self.task = None
        try:
            result = self.conn.recv()
        except (EOFError, OSError):
            code = self.stop()
            return TaskResult(
                task.key,
                error=f"WorkerLost: the worker process died (exit code {code})",
                elapsed_s=elapsed,
                worker=f"pid {self.pid}",
                lost=True,
            )
        assert isinstance(result, TaskResult)
        return result

    def kill(self) -> TaskResult | None:
        """Stop the worker at once; the ``timed_out`` result of the task it ran, if any."""
        task, elapsed, where = self.task, time.perf_counter() - self.started, f"pid {self.pid}"
        self.task = None
        self.stop()
        if task is None:
            return None
        return TaskResult(task.key, timed_out=True, elapsed_s=elapsed, worker=where)

    def stop(self) -> int | None:
        """Kill the worker if it still runs and reap it; its exit code."""
        proc, conn = self.proc, self.conn
        self.proc = self.conn = None
        code = None
        if proc is not None:
            if proc.poll() is None:
                _kill_group(proc)
            code = proc.wait()
        if conn is not None:
            conn.close()
        return code


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the worker's process group (itself and anything it started)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # its own group: start_new_session
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def _worker_env(threads: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(thread_env(threads))
    # the directory holding the schedopt package this module is part of
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    paths = [package_root, *(p for p in sys.path if p and os.path.isdir(p))]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


class ProcessExecutor(PoolExecutor):
    """``workers`` worker processes on this machine, each running one task at a time."""

    kind = "process"

    def __init__(self, workers: int | None = None, threads_per_worker: int = 1):
        super().__init__(workers or usable_cores(), threads_per_worker)
        env = _worker_env(self.threads_per_worker)
        self._slots = [_Slot(env) for _ in range(self.workers)]

    def worker_pids(self) -> list[int]:
        """The process ids of the workers now running (for tests and monitoring)."""
        return [s.pid for s in self._slots if s.pid is not None]

    def _has_room(self) -> bool:
        return any(s.task is None for s in self._slots)

    def _submit(self, task: Task) -> TaskResult | None:
        slot = next(s for s in self._slots if s.task is None)
        try:
            slot.submit(task)
        except (pickle.PicklingError, TypeError, AttributeError) as err:
            return TaskResult(task.key, error=f"the task cannot be pickled: {err}")
        return None

    def _running(self) -> int:
        return sum(s.task is not None for s in self._slots)

    def _collect(self, timeout: float | None) -> Iterator[TaskResult]:
        busy = [s for s in self._slots if s.task is not None]
        ready = wait([s.conn for s in busy if s.conn is not None], timeout)
        for slot in busy:
            if slot.conn in ready:
                yield slot.receive()

    def _stop_running(self) -> Iterator[TaskResult]:
        for slot in self._slots:
            result = slot.kill() if slot.task is not None else None
            if result is not None:
                yield result

    def close(self) -> None:
        for slot in self._slots:  # idle workers are asked to exit, all at once
            if slot.task is None and slot.conn is not None:
                with contextlib.suppress(OSError):
                    slot.conn.send(None)
        until = time.perf_counter() + _EXIT_GRACE_S
        for slot in self._slots:
            if slot.task is None and slot.proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    slot.proc.wait(timeout=max(0.0, until - time.perf_counter()))
            slot.task = None
            slot.stop()  # kills whatever still runs, reaps it
        super().close()

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "worker_start": "subprocess, own session"}


__all__ = ["ProcessExecutor"]
