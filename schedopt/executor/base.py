"""The executor contract: one way to run independent tasks, in this process, in a local
process pool, or on Ray.

Three users share it (DESIGN.md, "Scale and distribution"): benchmark suites
(``schedopt bench``), tuning evaluations (``schedopt tune``) and the sub-problems of a
decomposition method. Each hands over :class:`Task` objects and reads :class:`TaskResult`
objects back as the tasks finish; none of them knows which executor runs the tasks.

The contract every executor keeps:

- ``run`` yields exactly one :class:`TaskResult` per task, in the order the tasks finish.
- ``run(..., ahead=k)`` pulls up to ``k`` tasks beyond the free workers from ``tasks`` (a
  lazy iterator the caller feeds from the results) while the workers run, and starts them on
  the workers freed before it yields their results: a worker does not wait while the caller
  reads a result or makes its next task. ``ahead=0`` (the default) pulls a task only for a
  free worker, so the caller's later results can still shape it.
- A task's exception is a result (``error``), never raised out of ``run``.
- At ``deadline`` the tasks still running are stopped (their worker processes killed) and
  yielded with ``timed_out=True``; tasks not started are yielded the same way, at once.
- ``close()`` (and leaving a ``with`` block, on every path: an exception, Ctrl-C) stops every
  worker the executor started; nothing is left running and no temporary file is left behind.
- A worker that dies under its task (killed from outside, out of memory, a lost node) gives a
  result with ``lost=True``: a failure of the executor, not of the task; the run goes on.
- Workers run the solvers single-threaded unless told otherwise (``threads_per_worker``), so
  rows measured on different executors are comparable.

Implementations: :class:`InlineExecutor` (this process, one task at a time),
``"process"`` (a local pool of worker processes) and ``"ray"`` (the optional extra
``schedopt[ray]``; ``address`` or ``RAY_ADDRESS``, else a local cluster on loopback).
:func:`make_executor` builds one by name.
"""

from __future__ import annotations

import os
import time
import traceback
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, ClassVar

from schedopt.core.stopping import Deadline

#: The executors :func:`make_executor` knows, by name.
EXECUTORS: tuple[str, ...] = ("inline", "process", "ray")


@dataclass(frozen=True)
class Task:
    """One unit of work: ``fn(*args, **kwargs)``.

    ``fn`` must be a module-level function (workers receive it by reference, pickled), and its
    arguments picklable. ``key`` names the task uniquely within one ``run``: results are
    matched, and finished rows skipped on resume, by it.
    """

    key: str
    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskResult:
    """What became of one :class:`Task`."""

    key: str
    value: Any = None
    #: ``"ExceptionType: message"`` when the task raised; ``value`` is then None.
    error: str | None = None
    #: The deadline passed before the task finished (it was stopped, or never started).
    timed_out: bool = False
    elapsed_s: float = 0.0
    #: Where it ran: ``"inline"``, ``"pid 1234"``, a Ray node id.
    worker: str = ""
    #: The worker died under the task (killed, out of memory, a lost node): a failure of the
    #: executor, not of the task, which may be run again (``schedopt bench`` does not record
    #: such a row, so a resumed run repeats the task).
    lost: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out and not self.lost


class Executor(ABC):
    """Runs :class:`Task` objects; see the module docstring for the contract."""

    kind: ClassVar[str]

    def __init__(self, workers: int = 1, threads_per_worker: int = 1):
        if workers < 1:
            raise ValueError(f"workers must be >= 1 (got {workers})")
        if threads_per_worker < 1:
            raise ValueError(f"threads_per_worker must be >= 1 (got {threads_per_worker})")
        self.workers = workers
        self.threads_per_worker = threads_per_worker
        self.closed = False

    @abstractmethod
    def run(
        self, tasks: Iterable[Task], *, deadline: Deadline | None = None, ahead: int = 0
    ) -> Iterator[TaskResult]:
        """Yield one :class:`TaskResult` per task, as each finishes (``ahead``: the module
        docstring)."""

    def close(self) -> None:
        """Stop every worker this executor started. Idempotent."""
        self.closed = True

    def describe(self) -> dict[str, Any]:
        """What a benchmark row records about where it ran."""
        return {
            "executor": self.kind,
            "workers": self.workers,
            "threads_per_worker": self.threads_per_worker,
        }

    def __enter__(self) -> Executor:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class PoolExecutor(Executor):
    """An executor of several workers: the scheduling loop of :meth:`run`, kept once; a
    subclass says how to hand a task to a free worker, collect finished ones and stop the
    running ones (``"process"``, ``"ray"``)."""

    @abstractmethod
    def _has_room(self) -> bool:
        """A worker is free for one more task."""

    @abstractmethod
    def _submit(self, task: Task) -> TaskResult | None:
        """Start ``task``; a result (an error) if it cannot be sent, else None."""

    @abstractmethod
    def _running(self) -> int:
        """How many tasks run now."""

    @abstractmethod
    def _collect(self, timeout: float | None) -> Iterator[TaskResult]:
        """Wait up to ``timeout`` s (None: for ever) for a task to end; the results of those
        that ended."""

    @abstractmethod
    def _stop_running(self) -> Iterator[TaskResult]:
        """Kill every running task; their ``timed_out`` results."""

    def run(
        self, tasks: Iterable[Task], *, deadline: Deadline | None = None, ahead: int = 0
    ) -> Iterator[TaskResult]:
        if self.closed:
            raise RuntimeError("the executor is closed")
        pending = iter(tasks)
        exhausted = False
        ready: deque[Task] = deque()  # pulled ahead, not started (``ahead``)

        def pull() -> Task | None:
            """The caller's next task; None, and ``exhausted``, when there are no more."""
            nonlocal exhausted
            task = next(pending, None)
            exhausted = task is None
            return task

        def start(new: bool = True) -> Iterator[TaskResult]:
            """The free workers' next tasks: those pulled ahead first, then (``new``) new
            ones."""
            while (ready or (new and not exhausted)) and self._has_room():
                if deadline is not None and deadline.expired():
                    return
                task = ready.popleft() if ready else pull()
                if task is None:
                    return
                refused = self._submit(task)
                if refused is not None:
                    yield refused

        try:
            while True:
                yield from start()
                while not exhausted and len(ready) < ahead:  # while the workers run
                    if deadline is not None and deadline.expired():
                        break
                    task = pull()
                    if task is not None:
                        ready.append(task)
                if exhausted and not ready and not self._running():
                    return
                if deadline is not None and deadline.expired():
                    yield from self._stop_running()
                    for task in [*ready, *pending]:
                        yield TaskResult(task.key, timed_out=True)
                    return
                if self._running():
                    done = list(self._collect(None if deadline is None else deadline.remaining()))
                    # the freed workers start what was pulled ahead before the caller reads
                    done += list(start(new=False))
                    yield from done
        finally:  # the caller stopped early (an exception, Ctrl-C, break): stop what runs
            for _ in self._stop_running():
                pass


#: The environment variables that cap the threads of the numeric libraries a solver loads
#: (OpenMP, OpenBLAS, MKL, numexpr, Accelerate); set in a worker before it imports anything.
THREAD_ENV_VARS: tuple[str, ...] = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the system tells it (Linux:
    a container or ``taskset`` may allow 2 of 64), else the machine's count, at least 1. The
    executors' default worker count, and what a method counts before it starts workers."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def thread_env(threads: int) -> dict[str, str]:
    """The environment that pins a worker's numeric libraries to ``threads`` threads."""
    return dict.fromkeys(THREAD_ENV_VARS, str(threads))


def run_task(task: Task) -> TaskResult:
    """Run ``task`` here and now, turning its exception into a result."""
    started = time.perf_counter()
    try:
        value = task.fn(*task.args, **dict(task.kwargs))
    except Exception as err:  # a task's failure is a row, not a crash of the whole run
        last = traceback.format_exception_only(type(err), err)[-1].strip()
        return TaskResult(
            task.key, error=last, elapsed_s=time.perf_counter() - started, worker="inline"
        )
    return TaskResult(task.key, value, elapsed_s=time.perf_counter() - started, worker="inline")


class InlineExecutor(Executor):
    """Runs each task in this process, one after another. A task that is running when the
    deadline passes is not interrupted (it is expected to honour the deadline itself, as every
    ``schedopt.solve`` call does); tasks not started by then are yielded ``timed_out``."""

    kind = "inline"

    def __init__(self, workers: int = 1, threads_per_worker: int = 1):
        super().__init__(1, threads_per_worker)

    def run(
        self, tasks: Iterable[Task], *, deadline: Deadline | None = None, ahead: int = 0
    ) -> Iterator[TaskResult]:
        # one task at a time, here: nothing runs while the caller reads (``ahead`` unused)
        for task in tasks:
            if deadline is not None and deadline.expired():
                yield TaskResult(task.key, timed_out=True, worker="inline")
                continue
            yield run_task(task)


__all__ = [
    "EXECUTORS",
    "THREAD_ENV_VARS",
    "Executor",
    "InlineExecutor",
    "Task",
    "TaskResult",
    "run_task",
    "thread_env",
]
