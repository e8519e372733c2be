"""What a test's stand-in executor must keep of the executor contract
(``schedopt/executor/base.py``), so that code that runs on it takes the same paths as on a real
one: ``run``'s parameters as ``Executor.run`` declares them (``deadline``, ``ahead``: cosched's
refinement hands its cases out with ``ahead``), and one result per task."""

from __future__ import annotations

import inspect

from schedopt.executor import Executor, Task


def _double(x: int) -> int:
    return 2 * x


def assert_keeps_contract(executor: Executor) -> None:
    """``executor.run`` takes what ``Executor.run`` takes (names, kinds, defaults) and, asked
    to pull ahead, yields one result per task."""

    def shape(run: object) -> list[tuple[str, object, object]]:
        return [(p.name, p.kind, p.default) for p in inspect.signature(run).parameters.values()]

    assert shape(type(executor).run) == shape(Executor.run)
    tasks = [Task(str(i), _double, (i,)) for i in range(3)]
    results = {r.key: r.value for r in executor.run(iter(tasks), deadline=None, ahead=1)}
    assert results == {"0": 0, "1": 2, "2": 4}
