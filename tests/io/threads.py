"""Run a read that might never return, without hanging the suite."""

from __future__ import annotations

import threading


def in_thread(fn, timeout_s: float = 20.0) -> dict:
    """Run ``fn`` in a thread: ``{"value": ...}`` or ``{"error": ...}``; fail (instead of
    hanging the suite) if it does not return within ``timeout_s``."""
    box: dict = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as err:
            box["error"] = err

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout_s)
    assert not t.is_alive(), f"did not return within {timeout_s} s"
    return box
