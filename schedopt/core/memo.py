"""What one ``solve`` call builds once and its phases share: a problem's data for an instance,
built by the first phase that needs it (a heuristic, the exact model, a decomposition and its
hand-over each asked for it anew: four builds of 0.08 CPU s each at reconfig's 256 GPUs,
#17) and dropped when the call returns, so nothing outlives it.

Outside a ``solve`` call (a method called directly, a worker process, another thread) nothing
is kept and every call builds.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

#: The current ``solve`` call's built values: (what, id(instance)) -> (instance, value); the
#: instance is held beside its value so that an id reused by another object never matches.
_BUILT: ContextVar[dict[tuple[Hashable, int], tuple[Any, Any]] | None] = ContextVar(
    "schedopt_built_once_per_solve", default=None
)


@contextmanager
def solve_scope() -> Iterator[None]:
    """One ``solve`` call's scope: what :func:`once_per_solve` builds inside it is dropped at
    its end (a nested call has a scope of its own)."""
    token = _BUILT.set({})
    try:
        yield
    finally:
        _BUILT.reset(token)


def once_per_solve(what: Hashable, instance: object, build: Callable[[], T]) -> T:
    """``build()``'s value for ``instance``, built once in the current ``solve`` call (every
    call builds outside one). ``what`` names the value; a build that raises (its deadline
    reached) keeps nothing, and the next caller builds again. The value is shared: its
    users must not change it."""
    built = _BUILT.get()
    if built is None:
        return build()
    key = (what, id(instance))
    hit = built.get(key)
    if hit is not None and hit[0] is instance:
        value: T = hit[1]
        return value
    value = build()
    built[key] = (instance, value)
    return value
