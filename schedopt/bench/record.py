"""Rows of the measurements that are not a suite × method table (trace replays, fuzzing, the
time-limit harness, micro-benchmarks; the scripts in ``benchmarks/``), recorded the way
``schedopt bench`` records its rows: one JSON line per row, written as soon as it is measured,
with the machine (CPUs, load average), the versions (schedopt and its commit, the solvers,
Python), the time and the command; and resumable: a row is keyed (:meth:`RowLog.row`), and a
rerun of the same command returns the rows already in the file instead of measuring them
again, so a run stopped part-way measures only what is missing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from schedopt.bench.runner import machine, read_rows, versions


class RowLog:
    """A JSON-lines file of keyed rows. Rows without a ``key`` (written before rows were
    keyed) are kept in the file and never taken for a measured row."""

    def __init__(self, path: Path, command: str) -> None:
        self.path = Path(path)
        self.command = command
        self._rows = {r["key"]: r for r in read_rows(self.path) if isinstance(r.get("key"), str)}
        self._versions: dict[str, str] | None = None
        #: How many rows this run measured, and how many it found already in the file.
        self.measured = 0
        self.resumed = 0

    def get(self, key: str) -> dict[str, Any] | None:
        """The row recorded under ``key``, or None."""
        return self._rows.get(key)

    def add(self, key: str, row: dict[str, Any]) -> dict[str, Any]:
        """Append ``row`` under ``key``, with the machine, versions, time and command."""
        if self._versions is None:
            self._versions = versions()
        full = {
            **row,
            "key": key,
            "command": self.command,
            "machine": machine(),
            "versions": self._versions,
            "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = (json.dumps(full, sort_keys=True, default=str) + "\n").encode()
        with self.path.open("a+b") as f:
            if f.seek(0, 2):
                f.seek(-1, 2)
                if f.read(1) != b"\n":
                    line = b"\n" + line  # a torn last line from a killed run stays alone
            f.write(line)
        self._rows[key] = full
        self.measured += 1
        return full

    def row(self, key: str, measure: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """The row under ``key``: the recorded one, else ``measure()``'s, recorded."""
        found = self._rows.get(key)
        if found is not None:
            self.resumed += 1
            return found
        return self.add(key, measure())

    def rows(self, key: str, measure: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
        """Several rows measured together (one replay's rounds, say) under ``key``: they are
        recorded as one row holding the list (``rows``), so a stopped run repeats the whole
        group or none of it."""
        return list(self.row(key, lambda: {"rows": measure()})["rows"])


__all__ = ["RowLog"]
