"""The Markdown tables of benchmarks/RESULTS.md's promise audit, from the rows of
``promise_audit.py`` and ``promise_signals.py`` (nothing is measured here).

    python benchmarks/promise_table.py                 # the audit table, one line per method
    python benchmarks/promise_table.py --signals       # the signal rows
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
SHORT = {"no_solution": "none", "feasible": "feas", "optimal": "OPT", "infeasible": "INF"}


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _cell(r: dict[str, Any]) -> str:
    """``wall s status`` (the CLI's wall from its start; solve()'s around the call), ``!`` where
    the wall passed the promise, ``B`` where the bound is on the wrong side, ``P``/``T`` where a
    process or a temporary file was left."""
    wall = r.get("wall_in_s", r["wall_s"])
    marks = "" if r["kept"] else "!"
    marks += "B" if r.get("bound_ok") is False else ""
    marks += "P" if r.get("procs_after") else ""
    marks += "T" if r.get("tmp_left") else ""
    return f"{wall:.1f} {SHORT.get(r['status'], r['status'])}{marks}"


def audit_table(rows: list[dict[str, Any]], mode: str) -> str:
    limits = sorted({r["limit_s"] for r in rows if r["mode"] == mode})
    cells: dict[tuple[str, str], dict[float, str]] = defaultdict(dict)
    slow: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in rows:
        if r["mode"] == mode:
            cells[(r["instance"], r["method"])][r["limit_s"]] = _cell(r)
            slow[(r["instance"], r["method"])].append(r["slowdown"])
    head = ["instance", "method", *(f"{x:g} s" for x in limits), "slowdown"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (inst, method), by in cells.items():
        s = slow[(inst, method)]
        line = [inst, method, *(by.get(x, "") for x in limits), f"{min(s):.0f}-{max(s):.0f}"]
        out.append("| " + " | ".join(line) + " |")
    return "\n".join(out)


def signal_table(rows: list[dict[str, Any]]) -> str:
    head = ["commit", "instance", "method", "pool", "signal", "to", "exit", "exit s", "left"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        left = len(r["procs_after_1s"]) + len(r["tmp_left"])
        line = [
            r.get("tag") or "(see text)",
            r["instance"],
            r["method"],
            "2 workers" if r["pool"] else "inline",
            r["signal"],
            r["to"],
            str(r["exit"]),
            f"{r['exit_s']:.1f}",
            str(left),
        ]
        out.append("| " + " | ".join(line) + " |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--signals", action="store_true")
    ap.add_argument("--mode", default="cli", help="the audit rows of this mode (cli or py)")
    args = ap.parse_args()
    if args.signals:
        print(signal_table(_rows(RESULTS / "promise_signals.jsonl")))
    else:
        print(audit_table(_rows(RESULTS / "promise_audit.jsonl"), args.mode))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
