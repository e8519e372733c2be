"""A part that fails in the worker (the process pool imports it by reference)."""

from __future__ import annotations

from typing import Any


def failing_part(inp: Any) -> Any:
    raise RuntimeError(f"layer {inp.part.layer} failed on purpose")
