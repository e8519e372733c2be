"""Where ``schedopt solve``'s wall time goes, from its process's start to its exit.

Each run spawns the command as the ``schedopt`` script does (``from schedopt.cli import main;
sys.exit(main())``) with marks on ``time.perf_counter`` (CLOCK_MONOTONIC, shared by the
processes of one machine), the process's CPU and the main thread's time waiting for a CPU
(``/proc/thread-self/schedstat``) at: the process's start (``/proc``), its first line of Python
(the interpreter's start-up and ``site``), ``schedopt.cli`` imported, ``main``, the first
request of ``pydantic`` (``schedopt.io``), of the problem's package and of OR-Tools, the
decoding and the validation of the file, ``schedopt.solve`` and the exit; and every slowdown
the load gates measured, with the estimate they made and what the step they gated then took.
Trees (checkouts) run in turn, one run each, ``--runs`` times, under ``nice -n 5``;
``--burners N`` starts N CPU burners (``python -c "while True: pass"``) and kills them after.

    python benchmarks/cli_phases.py --tree old=/work/wt/x-old --tree new=$PWD \\
        --file medium.json --method cpsat --limit 10 --runs 3 --burners 4 --out rows.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from cli_start import alternate, spawn_solve

#: The ``schedopt`` script with the marks (written to stderr as one ``MARKS`` JSON line).
COMMAND = r"""
import sys, time, json, atexit, threading
def _sched():
    try:
        with open("/proc/thread-self/schedstat") as f:
            a, b = f.read().split()[:2]
        return int(a) / 1e9, int(b) / 1e9
    except OSError:
        return None, None
MARKS = []
def mark(name, **extra):
    on_cpu, waiting = _sched()
    MARKS.append(dict(name=name, t=time.perf_counter(), cpu=time.process_time(),
                      on_cpu=on_cpu, waiting=waiting, **extra))
mark("first_line")
WATCH = {"pydantic", "schedopt.io", "schedopt.problems.admission", "ortools", "pandas"}
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name in WATCH:
            WATCH.discard(name)
            mark("import " + name)
        return None
sys.meta_path.insert(0, Watch())
from schedopt.cli import app, clock
mark("cli_imported", started=clock.process_started())
def wrap(module, name, label):
    inner = getattr(module, name, None)
    if inner is None:
        return
    def timed(*a, **k):
        mark(label + ">")
        try:
            out = inner(*a, **k)
        except BaseException as e:
            mark(label + "!", error=type(e).__name__)
            raise
        extra = {"value": out} if isinstance(out, float) else {}
        mark(label + "<", **extra)
        return out
    setattr(module, name, timed)
wrap(app, "_main", "main")
import schedopt.core.stopping as stopping
wrap(stopping, "cpu_share_slowdown", "probe")  # (the gates hold their own reference)
import schedopt
wrap(schedopt, "solve", "solve")
_orig_getattr = schedopt.__getattr__
def _hook_io(name):
    out = _orig_getattr(name)
    if name == "load":
        from schedopt.io import instance_json as ij
        wrap(ij, "cpu_share_slowdown", "probe")  # an old tree's gate
        wrap(ij, "decode_json", "decode")
        wrap(ij, "_import_in_time", "import_gate")
        wrap(ij, "parse_instance", "validate")
    return out
schedopt.__getattr__ = _hook_io
try:  # the gates' slowdown, where the tree has it
    import schedopt.core.gates as gates
    wrap(gates, "gate_slowdown", "gate_slowdown")
except ImportError:
    pass
atexit.register(lambda: (mark("exit"), sys.stderr.write("MARKS " + json.dumps(MARKS) + "\n")))
sys.exit(app.main())
"""


def run_once(tree: str, file: str, limit: float, method: str) -> dict:
    proc, err, doc, spawned, wall, cpu = spawn_solve(COMMAND, tree, file, limit, method)
    marks = next((json.loads(x[6:]) for x in err.splitlines() if x.startswith("MARKS ")), [])
    started = next((m.get("started") for m in marks if m.get("started")), spawned)
    return {
        "limit_s": limit,
        "exit": proc.returncode,
        "status": doc.get("status"),
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "over_s": round(wall - limit, 3),
        "timing": doc.get("timing"),
        "explanation": (doc.get("explanation") or "")[:200],
        "marks": [
            {
                "name": m["name"],
                "t": round(m["t"] - started, 3),
                "cpu": round(m["cpu"], 3),
                "wait": None if m["waiting"] is None else round(m["waiting"], 3),
                **({"value": round(m["value"], 2)} if "value" in m else {}),
            }
            for m in marks
        ],
        "stderr_tail": "" if marks else err[-400:],
    }


def summary(row: dict) -> str:
    """One line: each mark's time from the process's start (and the probes' values)."""
    parts = []
    for m in row["marks"]:
        v = f"={m['value']}" if "value" in m else ""
        parts.append(f"{m['name']}@{m['t']}{v}")
    head = f"{row['tree']} exit {row['exit']} over {row['over_s']:+.2f} cpu {row['cpu_s']:.2f}"
    return f"{head}: " + " ".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", required=True, help="NAME=PATH of a checkout")
    ap.add_argument("--file", required=True)
    ap.add_argument("--limit", type=float, default=10.0)
    ap.add_argument("--method", default="cpsat")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--burners", type=int, default=0, help="CPU burners during the runs")
    ap.add_argument("--out", help="append one JSON row a run here")
    args = ap.parse_args()
    trees = dict(t.split("=", 1) for t in args.tree)
    file = str(Path(args.file).resolve())

    def one(run: int, name: str, tree: str) -> list[dict]:
        row = {"tree": name, "run": run, "burners": args.burners}
        row["load_before"] = os.getloadavg()[0]
        row.update(run_once(tree, file, args.limit, args.method))
        print(summary(row), flush=True)
        return [row]

    alternate(trees, args.runs, args.burners, one, args.out)


if __name__ == "__main__":
    main()
