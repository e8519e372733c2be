"""``Executor.run``'s ``ahead`` (executor/base.py): tasks pulled beyond the free workers start
on the workers freed before the caller reads their results, and every task still gets exactly
one result, the deadline included."""

from __future__ import annotations

from schedopt.core.stopping import Deadline
from schedopt.executor import Task
from tests.executor.fakes import CountingPool


def _square(x: int) -> int:
    return x * x


def _tasks(n: int) -> list[Task]:
    return [Task(str(i), _square, (i,)) for i in range(n)]


def test_ahead_keeps_every_worker_busy_while_the_caller_reads() -> None:
    pool = CountingPool(2)
    got = {r.key: r.value for r in pool.run(_tasks(9), ahead=1)}
    assert got == {str(i): i * i for i in range(9)}
    # while tasks are left, a result is read with both workers running (the freed one started
    # the task pulled ahead) and one more task already pulled
    assert pool.at_yield == [(2, 3), (2, 4), (2, 5), (2, 6), (2, 7), (2, 8), (2, 9), (1, 9), (0, 9)]


def test_without_ahead_a_task_is_pulled_only_for_a_free_worker() -> None:
    pool = CountingPool(2)
    list(pool.run(_tasks(5)))
    # each result is read with its worker free and no task pulled for it yet
    assert pool.at_yield == [(1, 2), (1, 3), (1, 4), (1, 5), (0, 5)]


def test_tasks_pulled_ahead_time_out_once_at_the_deadline() -> None:
    pool = CountingPool(2)
    results = list(pool.run(_tasks(6), deadline=Deadline.after(0.0), ahead=1))
    assert sorted(r.key for r in results) == [str(i) for i in range(6)]
    assert all(r.timed_out for r in results)
