"""Ctrl-C and SIGTERM during a HiGHS search reach the caller (#17).

Python runs its signal handlers in the main thread between bytecodes; while HiGHS searches,
that is inside the Python callbacks schedopt subscribes (its deadline checks and progress
reports), and the ``KeyboardInterrupt`` (or the CLI's ``Terminated``) raised there is dropped
on HiGHS's side: the search stops or goes on to its limit, and the solve returns as if nothing
had happened (admission's ``decomp:lp`` ran 12-15 s on to a 20 s limit after a Ctrl-C,
benchmarks/RESULTS.md, "The promises at the papers' scale"). It cannot be caught in the
callback: Python may raise it at the callback's first bytecode, before any ``try``.

So :meth:`SignalGuard.deferring` replaces the SIGINT and SIGTERM handlers, for the run only,
by one that notes the signal; the wrapped callbacks then stop the search
(``event.interrupt()``), and when ``h.run()`` returns the handlers are put back and the signal
is handed to the handler that was there (Python's ``KeyboardInterrupt``, the CLI's
``Terminated``, or the system's default action).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class SignalGuard:
    """Defers SIGINT and SIGTERM while HiGHS runs and stops the search when one comes."""

    def __init__(self) -> None:
        self.pending: list[int] = []

    def wrap(self, callback: Callable[[Any], None]) -> Callable[[Any], None]:
        """``callback``, or a stop of the search once a signal is pending."""

        def guarded(event: Any) -> None:
            if self.pending:
                event.interrupt()
            else:
                callback(event)

        return guarded

    def stop_at(self, when: Callable[[], float]) -> Callable[[Any], None]:
        """A deadline check: stop the search at ``when()`` (``time.perf_counter`` seconds) or
        once a signal is pending."""

        def check(event: Any) -> None:
            if self.pending or time.perf_counter() >= when():
                event.interrupt()

        return check

    @contextmanager
    def deferring(self) -> Iterator[None]:
        """Signals noted while the block runs, handed to their own handlers at its end."""
        if threading.current_thread() is not threading.main_thread():
            yield  # signal handlers are the main thread's: nothing to defer
            return
        previous = {s: signal.getsignal(s) for s in _SIGNALS}

        def note(signum: int, frame: Any) -> None:
            self.pending.append(signum)

        for s in _SIGNALS:
            signal.signal(s, note)
        try:
            yield
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
            if self.pending:
                first = self.pending[0]
                self.pending.clear()
                signal.raise_signal(first)  # to the handler put back: raises, or ends the process
