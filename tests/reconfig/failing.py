"""A W6 design that fails in the worker (the process pool imports it by reference), leaving
its pid in the file named by SCHEDOPT_TEST_PID_FILE (the workers inherit the environment)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def failing_design(*args: Any) -> Any:
    Path(os.environ["SCHEDOPT_TEST_PID_FILE"]).write_text(str(os.getpid()))
    raise RuntimeError("a design failed on purpose")
