"""Shared plumbing of the benchmark scripts: :func:`bench` and :func:`tune` for the thin callers
of ``schedopt bench`` / ``schedopt tune``, and for the scripts that measure what is not a suite ×
method table, :func:`row_log` (keyed, resumable JSON lines under benchmarks/results/ with the
machine and versions, :class:`schedopt.bench.record.RowLog`) and :func:`print_table`; for the
scripts that compare two checkouts, :func:`run_in_checkout` and :func:`checkout_commit`."""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

# (imported in row_log: cli_start.py runs checkouts with no schedopt of its own)
if TYPE_CHECKING:
    from schedopt.bench.record import RowLog

RESULTS = Path(__file__).resolve().parent / "results"


def bench(suites: str | Sequence[str], args: Sequence[str]) -> int:
    """``schedopt bench SUITE...`` as the scripts that became suites run it: one worker process
    (a fresh process per row), rows to results/bench/SUITE.jsonl (several suites: their names
    joined by ``+``) unless ``--out`` is given; every argument in ``args`` goes to
    ``schedopt bench``."""

    names = [suites] if isinstance(suites, str) else list(suites)
    stem = "+".join(names)
    out = [] if "--out" in args else ["--out", str(RESULTS / "bench" / f"{stem}.jsonl")]
    return _run(["bench", *names, "--executor", "process", "--jobs", "1", *args, *out])


def tune(args: Sequence[str]) -> int:
    """``schedopt tune`` with ``args`` (the thin callers of tuning)."""
    return _run(["tune", *args])


def _run(argv: list[str]) -> int:
    """``schedopt ARGV``, said first on stderr: the one command a figure comes from."""
    from schedopt.cli import main as schedopt_main

    if not {"-h", "--help"} & set(argv):
        print(f"$ schedopt {shlex.join(argv)}", file=sys.stderr, flush=True)
    return schedopt_main(argv)


def add_out_argument(ap: argparse.ArgumentParser, name: str) -> None:
    """``--out``: the rows' JSON-lines file (default results/NAME.jsonl); a rerun resumes."""
    ap.add_argument(
        "--out",
        type=Path,
        default=RESULTS / f"{name}.jsonl",
        help=f"JSON-lines rows (results/{name}.jsonl); rows already there are not measured "
        "again, so a rerun resumes",
    )


def row_log(name: str, argv: Sequence[str] | None, out: Path | None = None) -> RowLog:
    """The keyed rows of ``python benchmarks/NAME.py`` ``argv`` (None: sys.argv's), in ``out``
    (default results/NAME.jsonl): each row with the command, machine and versions."""
    args = sys.argv[1:] if argv is None else argv
    command = " ".join([f"python benchmarks/{name}.py", *args])
    from schedopt.bench.record import RowLog

    return RowLog(out or RESULTS / f"{name}.jsonl", command)


def append_rows(name: str, rows: Sequence[dict[str, Any]], argv: Sequence[str] | None) -> Path:
    """Append ``rows`` to results/NAME.jsonl, each with the command that produced it, unkeyed:
    for side-by-side comparisons whose rows only mean something measured in one run, systems or
    commits alternating (timeshare_vs_gavel.py, timeshare_strategy_proof.py, admission_bounds.py,
    reconfig_physical.py), so a rerun measures again instead of resuming."""
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


def print_row(row: dict[str, Any], out: str | Path | None) -> None:
    """``row`` as one JSON line on stdout and, if ``out`` names a file, appended to it: the
    scripts that print each row as they measure it (admission_lns_short.py, det_wall.py,
    cli_start.py, fairshare_digest.py, reconfig_data_once.py)."""
    line = json.dumps(row)
    print(line, flush=True)
    if out:
        with open(out, "a") as f:
            f.write(line + "\n")


def key(*parts: object) -> str:
    """A row's key from the values that define it."""
    return "/".join(str(p) for p in parts)


def run_in_checkout(code: str, path: Path, nice: int = 5) -> dict[str, Any]:
    """``code`` run by ``python -c`` in a fresh process at ``nice``, importing the package from
    the checkout ``path``; the JSON object its last line prints, or ``{"error": [...]}``."""
    done = subprocess.run(
        ["nice", "-n", str(nice), sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(path)},
        capture_output=True,
        text=True,
        check=False,
        cwd=str(path),
    )
    if done.returncode:
        return {"error": done.stderr.strip().splitlines()[-1:]}
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def checkout_commit(path: Path) -> str:
    """The commit checked out at ``path`` (``-dirty`` when it has changes), or ``?``."""
    done = subprocess.run(
        ["git", "-C", str(path), "describe", "--always", "--dirty"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or "?"


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
