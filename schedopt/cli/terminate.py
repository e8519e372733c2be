"""SIGTERM as Ctrl-C: while a command runs, SIGTERM raises :class:`Terminated` in the main
thread, so every ``finally`` and ``with`` on the way out runs (CBC's child stopped and its run
directory removed, a process pool's workers killed) before the command exits with
:data:`EXIT_TERMINATED`. Python's default is to die where it stands, cleaning nothing."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

#: The shell's code for a process ended by SIGTERM (128 + 15).
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(BaseException):
    """SIGTERM arrived (a BaseException, as KeyboardInterrupt: no ``except Exception`` in a
    method swallows it)."""


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` (main thread only: elsewhere, as in
    a test calling ``main`` from a thread, signals cannot be handled and nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


__all__ = ["EXIT_TERMINATED", "Terminated", "sigterm_raises"]
