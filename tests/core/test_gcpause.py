"""The collector pause is counted across threads and restores what it found."""

from __future__ import annotations

import gc
import threading

from schedopt.core.gcpause import gc_paused


def test_nested_pauses_restore_the_collector_once() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause is still running
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_pauses_in_threads_end_with_the_collector_on() -> None:
    inside = threading.Barrier(2)
    out = threading.Event()

    def first() -> None:
        with gc_paused():
            inside.wait()
            out.wait()

    t = threading.Thread(target=first)
    t.start()
    with gc_paused():
        inside.wait()
    assert not gc.isenabled()  # the other thread's pause is still running
    out.set()
    t.join()
    assert gc.isenabled()
