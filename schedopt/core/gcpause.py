"""Pausing Python's cyclic garbage collector while a solve builds large object graphs.

A solve of a large instance allocates millions of long-lived objects (job data, model rows,
solution objects). CPython's cyclic collector runs a full collection every time enough of them
have accumulated, and each one walks every live object: on 100,000 admission jobs building the
model data took 3.05 s of CPU with the collector on and 1.16 s with it paused (the greedy and
the assembly gain less; benchmarks/RESULTS.md, "The time limit at every size"). Reference
counting still frees everything that is not in a cycle, and the cycles made during the pause are
collected as soon as it ends.

The pause is process-wide (that is how the collector works), so it is counted: with solves in
several threads, the collector comes back on when the last of them ends, and only if it was on
when the first began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
