"""One task on a worker process of its own while the caller goes on with other work.

:class:`Aside` hands ``task`` to a one-worker ``"process"`` executor driven from a thread of
this process: the thread waits on the worker's socket (no CPU, the GIL released), the caller
keeps this process's core, and looks for the result when it wants it (:meth:`Aside.poll`,
:meth:`Aside.result`). The executor's contract holds as for any run: the worker is killed at
the deadline, and :meth:`Aside.close` (also on leaving a ``with`` block, on every path) stops
it at once and reaps it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from types import TracebackType

from schedopt.core.stopping import Deadline
from schedopt.executor.base import Task, TaskResult
from schedopt.executor.process import ProcessExecutor

#: Longest the driving thread waits on the worker before it looks at the stop flag again.
POLL_S = 0.1


@dataclass(frozen=True)
class _Stoppable(Deadline):
    """``deadline``'s end, expired at once when ``stop`` is set. ``remaining`` is at most
    :data:`POLL_S`: the executor's loop waits on the worker for that long, then looks again,
    so a stop is seen within it."""

    stop: threading.Event = field(default_factory=threading.Event, compare=False)

    def remaining(self) -> float:
        if self.stop.is_set():
            return 0.0
        return min(POLL_S, super().remaining())


class Aside:
    """``task`` run on a worker process of its own by ``deadline`` (killed then), while this
    process goes on. Close it (or use it in a ``with`` block) on every path."""

    def __init__(self, task: Task, deadline: Deadline):
        self._executor = ProcessExecutor(1)
        self._until = _Stoppable(deadline.end, deadline.stretch_s, deadline.since)
        self._result: TaskResult | None = None
        self._thread = threading.Thread(target=self._drive, args=(task,), daemon=True)
        self._thread.start()

    def _drive(self, task: Task) -> None:
        for res in self._executor.run([task], deadline=self._until):
            self._result = res

    def poll(self) -> TaskResult | None:
        """The task's result if it has ended (done, failed, out of time), else None."""
        return None if self._thread.is_alive() else self._result

    def result(self) -> TaskResult | None:
        """The task's result, waiting for it (at most until the deadline)."""
        self._thread.join()
        return self._result

    def close(self) -> None:
        """Stop the task if it still runs (its worker killed) and the worker; idempotent."""
        self._until.stop.set()
        self._thread.join()
        self._executor.close()

    def worker_pids(self) -> list[int]:
        """The worker's process id while it runs (for tests)."""
        return self._executor.worker_pids()

    def __enter__(self) -> Aside:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


__all__ = ["Aside"]
