"""What one ``solve`` call builds once (schedopt.core.memo): shared inside the call, per
instance, nothing kept after it, nothing kept outside one."""

from __future__ import annotations

import pytest

from schedopt.core.memo import once_per_solve, solve_scope


class _Instance:
    pass


def test_built_once_per_instance_inside_a_solve_and_dropped_after() -> None:
    builds: list[object] = []

    def build(inst: object) -> object:
        builds.append(inst)
        return [len(builds)]

    a, b = _Instance(), _Instance()
    assert once_per_solve("data", a, lambda: build(a)) == [1]
    assert once_per_solve("data", a, lambda: build(a)) == [2]  # outside a solve: every call
    with solve_scope():
        first = once_per_solve("data", a, lambda: build(a))
        assert once_per_solve("data", a, lambda: build(a)) is first
        assert once_per_solve("data", b, lambda: build(b)) == [4]  # another instance
        assert once_per_solve("other", a, lambda: build(a)) == [5]  # another value
        with solve_scope():  # a solve inside a solve: a scope of its own
            assert once_per_solve("data", a, lambda: build(a)) == [6]
        assert once_per_solve("data", a, lambda: build(a)) is first
    with solve_scope():  # the next solve builds again
        assert once_per_solve("data", a, lambda: build(a)) == [7]
    assert len(builds) == 7


def test_a_build_that_raises_keeps_nothing() -> None:
    inst, calls = _Instance(), [0]

    def build() -> int:
        calls[0] += 1
        if calls[0] == 1:
            raise TimeoutError("the deadline, reached while building")
        return calls[0]

    with solve_scope():
        with pytest.raises(TimeoutError):
            once_per_solve("data", inst, build)
        assert once_per_solve("data", inst, build) == 2
        assert once_per_solve("data", inst, build) == 2
