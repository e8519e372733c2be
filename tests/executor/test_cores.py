"""The cores a process may use (``usable_cores``): its CPU affinity, not the machine's count,
for the executors' default workers and for the workers a method starts itself."""

from __future__ import annotations

import os

import pytest

from schedopt.executor import ProcessExecutor, make_executor, usable_cores


def _machine(monkeypatch: pytest.MonkeyPatch, allowed: set[int] | None, count: int | None) -> None:
    """A machine of ``count`` cores of which the process may use ``allowed`` (None: a system
    that does not say, as macOS and Windows)."""
    monkeypatch.setattr(os, "cpu_count", lambda: count)
    if allowed is None:
        monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    else:
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(allowed), raising=False)


@pytest.mark.parametrize(
    ("allowed", "count", "usable"),
    [({0, 1}, 64, 2), ({5}, 64, 1), (set(), 64, 1), (None, 8, 8), (None, None, 1)],
)
def test_usable_cores_are_the_affinity_else_the_count(monkeypatch, allowed, count, usable) -> None:
    _machine(monkeypatch, allowed, count)
    assert usable_cores() == usable


def test_a_pool_defaults_to_the_usable_cores(monkeypatch) -> None:
    # a container allowed one core of 64: one worker, not 64 (nothing starts before a task)
    _machine(monkeypatch, {3}, 64)
    with ProcessExecutor() as pool:
        assert pool.workers == 1
    with make_executor("process") as pool:
        assert pool.workers == 1
    with make_executor("process", jobs=3) as pool:  # asked for: as asked
        assert pool.workers == 3
