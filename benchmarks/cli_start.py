"""How long ``schedopt solve`` runs from its process's start, against its ``--time-limit``.

Each run spawns the command as the ``schedopt`` script does (``from schedopt.cli import main;
sys.exit(main())``), with ``main``'s entry timed, and measures on the spawning process's clock
(``time.perf_counter``, CLOCK_MONOTONIC, shared by the processes of one machine): the wall
from the spawn to the exit, the time to ``main`` (what a clock started there does not see),
the command's own ``timing`` (``--json``) and its CPU seconds (user + system). Trees
(checkouts) are run in turn, one run each, ``--runs`` times, under ``nice -n 5``;
``--burners N`` starts N CPU burners (``python -c "while True: pass"``) for the measurement
and kills them after it. One JSON row a run goes to ``--out``.

``--importtime`` instead prints, per tree, the modules ``python -X importtime`` shows the
command importing before ``main`` (before its clock started, on main 6063f10) and before its
problem's package, with their cumulative microseconds.

    python benchmarks/cli_start.py --tree old=/work/wt/x-old --tree new=$PWD \\
        --file instances/admission/example.json --limits 0.5,2 --runs 3 --burners 4 --out rows.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import print_row

#: The ``schedopt`` script, with the moment ``main`` runs written to stderr.
COMMAND = """\
import sys, time
from schedopt.cli import app
_main = app._main
def timed(*args):
    sys.stderr.write(f"main-at {time.perf_counter()!r}\\n")
    return _main(*args)
app._main = timed
sys.exit(app.main())
"""


def _load() -> str:
    return os.getloadavg().__repr__()


def spawn_solve(
    command: str, tree: str, file: str, limit: float, method: str
) -> tuple[subprocess.Popen, str, dict, float, float, float]:
    """``command`` (a ``schedopt`` script) run as ``solve FILE --json`` under ``nice -n 5``:
    (its process, its stderr, its JSON document or {}, the spawn's ``perf_counter``, its wall
    from the spawn to the exit, its CPU seconds)."""
    env = {**os.environ, "PYTHONPATH": tree}
    argv = ["nice", "-n", "5", sys.executable, "-c", command, "solve", file]
    argv += ["--time-limit", f"{limit:g}", "--method", method, "--json"]
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    spawned = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/tmp"
    )
    out, err = proc.communicate(timeout=600)
    wall = time.perf_counter() - spawned
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # burners are reaped only at the end
    cpu = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    try:
        doc = json.loads(out)
    except ValueError:
        doc = {}
    return proc, err, doc, spawned, wall, cpu


def run_once(tree: str, file: str, limit: float, method: str) -> dict:
    proc, err, doc, spawned, wall, cpu = spawn_solve(COMMAND, tree, file, limit, method)
    main_at = next((float(x.split()[1]) for x in err.splitlines() if x.startswith("main-at")), None)
    timing = doc.get("timing", {})
    return {
        "file": Path(file).name,
        "method": method,
        "limit_s": limit,
        "exit": proc.returncode,
        "status": doc.get("status"),
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "to_main_s": None if main_at is None else round(main_at - spawned, 3),
        "start_s": timing.get("start_s"),
        "load_s": timing.get("load_s"),
        "solve_wall_s": timing.get("wall_s"),
        "explanation": (doc.get("explanation") or "")[:160],
    }


def importtime(tree: str, file: str) -> None:
    env = {**os.environ, "PYTHONPATH": tree}
    argv = [sys.executable, "-X", "importtime", "-m", "schedopt", "solve", file]
    done = subprocess.run(
        [*argv, "--time-limit", "5", "--method", "heuristic:edf", "--json"],
        env=env,
        capture_output=True,
        text=True,
        cwd="/tmp",
    )
    rows = [ln for ln in done.stderr.splitlines() if ln.startswith("import time:") and "|" in ln]
    total, marks = 0, {}
    for ln in rows[1:]:
        _, cum, name = ln.split("|")
        if not name.startswith("  "):  # a top-level import: its cumulative time
            total += int(cum)
            print(f"  {int(cum):>8} us  {name.strip()}")
        for mark in ("schedopt.cli", "pydantic", "schedopt.problems.admission"):
            if name.strip() == mark and mark not in marks:
                marks[mark] = total
    print(f"{tree}: cumulative us at the end of each mark: {marks}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", required=True, help="NAME=PATH of a checkout")
    ap.add_argument("--file", default="instances/admission/example.json")
    ap.add_argument("--limits", default="2", help="comma-separated --time-limit values")
    ap.add_argument("--method", default="auto")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--burners", type=int, default=0, help="CPU burners during the runs")
    ap.add_argument("--tag", default="", help="a label for the rows (e.g. quiet, 4 burners)")
    ap.add_argument("--out", help="append one JSON row a run here")
    ap.add_argument("--importtime", action="store_true", help="print the import logs' marks")
    args = ap.parse_args()
    trees = dict(t.split("=", 1) for t in args.tree)
    file = str(Path(args.file).resolve())
    if args.importtime:
        for tree in trees.values():
            importtime(tree, file)
        return

    def one(run: int, name: str, tree: str) -> list[dict]:
        rows = []
        for limit in (float(x) for x in args.limits.split(",")):
            row = {"tree": name, "run": run, "tag": args.tag, "burners": args.burners}
            row["load_before"] = _load()
            row.update(run_once(tree, file, limit, args.method))
            print_row(row, args.out)
            rows.append(row)
        return rows

    alternate(trees, args.runs, args.burners, one)


def alternate(
    trees: dict[str, str],
    runs: int,
    burners: int,
    one: Callable[[int, str, str], list[dict]],
    out: str | None = None,
) -> None:
    """``one(run, name, tree)`` for each run and tree in turn, beside ``burners`` CPU burners
    (started 3 s before, killed after); its rows appended to ``out`` as JSON lines (None: ``one``
    keeps them itself, as :func:`main`'s does with ``common.print_row``)."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(burners)]
    try:
        time.sleep(3 if procs else 0)
        for run in range(runs):
            for name, tree in trees.items():
                for row in one(run, name, tree):
                    if out:
                        with open(out, "a") as f:
                            f.write(json.dumps(row) + "\n")
    finally:
        for b in procs:
            b.kill()
            b.wait()


if __name__ == "__main__":
    main()
