"""backends/highs_signals.py: a signal during a HiGHS run is noted, stops the search through
the callbacks, and reaches the caller when the run ends (#17)."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from schedopt.backends.highs_signals import SignalGuard


class _Event:
    """A stand-in for HiGHS's callback event: records ``interrupt()``."""

    def __init__(self) -> None:
        self.interrupted = False

    def interrupt(self) -> None:
        self.interrupted = True


def test_a_ctrl_c_in_the_block_is_noted_and_raised_at_its_end() -> None:
    guard, reached = SignalGuard(), []
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt), guard.deferring():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the handler runs here: it must note, not raise
        reached.append(list(guard.pending))
    assert reached == [[signal.SIGINT]]  # the block ran to its end
    assert signal.getsignal(signal.SIGINT) is before and not guard.pending


def test_the_callbacks_stop_the_search_once_a_signal_is_pending() -> None:
    guard, calls = SignalGuard(), []
    wrapped = guard.wrap(lambda event: calls.append(event))
    check = guard.stop_at(lambda: time.perf_counter() + 60.0)
    quiet = _Event()
    wrapped(quiet)
    check(quiet)
    assert calls == [quiet] and not quiet.interrupted
    guard.pending.append(signal.SIGTERM)
    stopped, checked = _Event(), _Event()
    wrapped(stopped)
    check(checked)
    assert stopped.interrupted and checked.interrupted and calls == [quiet]


def test_the_deadline_check_stops_at_its_time() -> None:
    event = _Event()
    SignalGuard().stop_at(lambda: time.perf_counter() - 1.0)(event)
    assert event.interrupted


def test_outside_the_main_thread_nothing_is_deferred() -> None:
    seen: list[object] = []

    def run() -> None:
        with SignalGuard().deferring():
            seen.append(signal.getsignal(signal.SIGINT))

    before = signal.getsignal(signal.SIGINT)
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == [before]
