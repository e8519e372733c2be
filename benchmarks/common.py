"""Shared plumbing for benchmark scripts: run cases (optionally in a process pool), print a
table, append JSON lines under benchmarks/results/, and the loop of the make_golden_* scripts."""

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

import schedopt
from schedopt.core.status import Status

RESULTS = Path(__file__).resolve().parent / "results"


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


def make_golden(
    candidates: Iterable[tuple[str, Any]],
    out: Path,
    methods: Sequence[str],
    *,
    time_limit_s: float,
    rel_tol: float,
    infeasible_ok: bool = False,
) -> int:
    """The loop of make_golden_<problem>.py: each candidate becomes golden only if every one of
    ``methods`` proves it OPTIMAL (or, with ``infeasible_ok``, every one INFEASIBLE) and all
    agree on every objective level within ``rel_tol`` (relative, at least absolute) of the
    first method's, whose objectives are recorded. Writes ``out/<name>.json`` and
    ``out/golden.json``; returns 0, or 1 with the disagreement on stderr."""
    out.mkdir(parents=True, exist_ok=True)
    golden: dict[str, dict[str, Any]] = {}
    for name, inst in candidates:
        found = {}
        for method in methods:
            r = schedopt.solve(inst, method, time_limit_s=time_limit_s)
            proven = r.status is Status.OPTIMAL or (infeasible_ok and r.status is Status.INFEASIBLE)
            if not proven:
                print(f"{name}: {method} ended {r.status.value}; not golden", file=sys.stderr)
                return 1
            found[method] = (r.status, r.objectives)
        statuses = {status for status, _ in found.values()}
        if len(statuses) != 1:
            print(f"{name}: statuses differ {found}", file=sys.stderr)
            return 1
        status = statuses.pop()
        entry: dict[str, Any] = {"status": status.value}
        if status is Status.OPTIMAL:
            ref = found[methods[0]][1]
            assert ref is not None
            for method, (_, obj) in found.items():
                assert obj is not None
                if any(
                    abs(a - b) > rel_tol * max(1.0, abs(a)) for a, b in zip(ref, obj, strict=True)
                ):
                    print(f"{name}: {method} {obj} against {methods[0]} {ref}", file=sys.stderr)
                    return 1
            entry["objectives"] = list(ref)
        schedopt.dump(inst, out / f"{name}.json")
        golden[f"{name}.json"] = entry
        print(name, entry)
    (out / "golden.json").write_text(json.dumps(golden, indent=1) + "\n")
    return 0


def solve_recipe(suite_name: str, recipe_name: str, method: str, limit: float) -> tuple:
    """Build one recipe of a shipped suite and solve it: (result, wall seconds, the 1-minute
    load before the solve). The scale scripts each turn it into their own row."""
    import os

    import schedopt
    from schedopt.bench.suites import all_suites

    suite = all_suites()[suite_name]
    recipe = next(r for r in suite.recipes if r.name == recipe_name)
    inst = recipe.build()
    load = os.getloadavg()[0]
    started = time.perf_counter()
    result = schedopt.solve(inst, method, time_limit_s=limit)
    return result, time.perf_counter() - started, load
