"""One way to run independent tasks: in this process, in a local process pool, or on Ray.

The contract every executor keeps is in :mod:`schedopt.executor.base`. Implementations:
:class:`InlineExecutor` (this process, one task at a time), :class:`ProcessExecutor`
(``"process"``: a local pool of killable worker processes) and ``"ray"``
(:mod:`schedopt.executor.ray_cluster`, the optional extra ``schedopt[ray]``, imported only when
asked for). :func:`make_executor` builds one by name.
"""

from __future__ import annotations

from schedopt.executor.base import (
    EXECUTORS,
    THREAD_ENV_VARS,
    Executor,
    InlineExecutor,
    Task,
    TaskResult,
    run_task,
    thread_env,
    usable_cores,
)
from schedopt.executor.process import ProcessExecutor


def make_executor(
    kind: str = "inline",
    *,
    jobs: int | None = None,
    address: str | None = None,
    threads_per_worker: int = 1,
) -> Executor:
    """The executor named ``kind`` (one of :data:`EXECUTORS`) with ``jobs`` workers
    (default: 1 inline, :func:`usable_cores` for a process pool, the cluster's CPUs on Ray).
    ``address`` is a Ray cluster's address (else ``RAY_ADDRESS``, else a local cluster)."""
    if kind == "inline":
        return InlineExecutor(threads_per_worker=threads_per_worker)
    if kind == "process":
        return ProcessExecutor(jobs or usable_cores(), threads_per_worker)
    if kind == "ray":
        from schedopt.executor.ray_cluster import RayExecutor  # the optional extra

        return RayExecutor(jobs, threads_per_worker, address=address)
    raise ValueError(f"unknown executor {kind!r}; choose from {', '.join(EXECUTORS)}")


__all__ = [
    "EXECUTORS",
    "THREAD_ENV_VARS",
    "Executor",
    "InlineExecutor",
    "ProcessExecutor",
    "Task",
    "TaskResult",
    "make_executor",
    "run_task",
    "thread_env",
    "usable_cores",
]
