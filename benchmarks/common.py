"""Shared plumbing for the benchmark scripts that ``schedopt bench`` cannot express: run cases
(optionally in a process pool), print a table, append JSON lines under benchmarks/results/."""

from __future__ import annotations

import json
import platform
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

RESULTS = Path(__file__).resolve().parent / "results"


def bench(suite: str, args: Sequence[str]) -> int:
    """``schedopt bench SUITE`` as the scripts that became suites run it: one worker process
    (a fresh process per row), rows to results/bench/SUITE.jsonl unless ``--out`` is given;
    every argument in ``args`` goes to ``schedopt bench``."""
    from schedopt.cli import main as schedopt_main

    out = [] if "--out" in args else ["--out", str(RESULTS / "bench" / f"{suite}.jsonl")]
    return schedopt_main(["bench", suite, "--executor", "process", "--jobs", "1", *args, *out])


def run_cases(
    fn: Callable[[Any], dict[str, Any]], cases: Sequence[Any], workers: int
) -> Iterable[dict[str, Any]]:
    """Yield ``fn(case)`` for every case, in order; ``workers > 1`` uses a process pool."""
    if workers <= 1:
        for case in cases:
            yield fn(case)
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(fn, cases)


def append_rows(name: str, rows: Sequence[dict[str, Any]], argv: Sequence[str] | None) -> Path:
    """Append ``rows`` to results/NAME.jsonl, each with the command that produced it
    (``python benchmarks/NAME.py`` and ``argv``, the script's arguments; None: sys.argv's)."""
    args = sys.argv[1:] if argv is None else argv
    command = " ".join([f"python benchmarks/{name}.py", *args])
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.jsonl"
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    with path.open("a") as f:
        for row in rows:
            meta = {
                "when": stamp,
                "command": command,
                "machine": platform.machine(),
                "python": platform.python_version(),
            }
            f.write(json.dumps({**meta, **row}, sort_keys=True) + "\n")
    return path


def print_table(title: str, rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> None:
    table = Table(title=title)
    for c in columns:
        table.add_column(c, justify="left" if c in ("instance", "method", "status") else "right")
    for row in rows:
        table.add_row(*[_fmt(row.get(c)) for c in columns])
    Console(width=200).print(table)


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)
