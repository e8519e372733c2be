"""A pool executor that runs its tasks in this process, one as each is collected (oldest
first), and counts the tasks running each time it yields a result: whether the freed workers
were given their next task before the caller read the result (``run``'s ``ahead``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from schedopt.core.stopping import Deadline
from schedopt.executor.base import PoolExecutor, Task, TaskResult, run_task


class CountingPool(PoolExecutor):
    kind = "counting"

    def __init__(self, workers: int = 2):
        super().__init__(workers)
        self.slots: list[Task] = []
        self.pulled = 0  # tasks taken from the caller's iterator
        self.at_yield: list[tuple[int, int]] = []  # (running, pulled) as each result is yielded

    def _has_room(self) -> bool:
        return len(self.slots) < self.workers

    def _submit(self, task: Task) -> TaskResult | None:
        self.slots.append(task)
        return None

    def _running(self) -> int:
        return len(self.slots)

    def _collect(self, timeout: float | None) -> Iterator[TaskResult]:
        yield run_task(self.slots.pop(0))

    def _stop_running(self) -> Iterator[TaskResult]:
        stopped = [TaskResult(t.key, timed_out=True) for t in self.slots]
        self.slots.clear()
        yield from stopped

    def run(
        self, tasks: Iterable[Task], *, deadline: Deadline | None = None, ahead: int = 0
    ) -> Iterator[TaskResult]:
        def counted() -> Iterator[Task]:
            for task in tasks:
                self.pulled += 1
                yield task

        for res in super().run(counted(), deadline=deadline, ahead=ahead):
            self.at_yield.append((self._running(), self.pulled))
            yield res
