"""Issue #17's promises at the papers' scale, from the command line: every ``*-paper`` suite's
instances, the methods ``schedopt methods`` lists for their problem, limits 0.5, 1, 2 and 5 s,
optionally beside a CPU burner (``--burner``: ``nice -n 0 python -c "while True: pass"``,
stopped on every path).

    python benchmarks/promise_audit.py --burner                       # the whole audit
    python benchmarks/promise_audit.py --problems fairshare --limits 1 --modes cli,py

Each row is one fresh process: ``python -m schedopt solve FILE --method M --time-limit L --json``
(``cli``: its wall from before the interpreter starts to its exit, so loading and imports
count) or ``schedopt.solve(load(FILE), M, time_limit_s=L)`` timed around the call (``py``).
The row records the status, the objective and bound and whether the bound is on the right
side (``bound_ok``: at most the objective for a minimisation, at least for a maximisation),
the machine's slowdown just before (``tests.timing.measure``) and the median of samples
taken every 0.2 s while it runs (the load swings), and the promise the tests hold the library
to, ``L + TIME_LIMIT_OVERHEAD_S x`` the larger of the two (``kept``). Leftovers:
each row runs with a private ``TMPDIR`` and a marker in its environment; ``procs_at_exit`` and
``procs_after`` are the processes still carrying the marker (worker processes, CBC) when it
exits and 0.6 s later, ``tmp_left`` what it left in its ``TMPDIR`` (and
``tmp_added_by_anyone`` the names mentioning schedopt or cbc that appeared in /tmp meanwhile,
by this row or another process). The instance files are written once into ``--files``
(default: a fresh directory under the system's temp folder, removed at the end).
Rows go to benchmarks/results/promise_audit.jsonl (--out).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import add_out_argument, key, print_table, row_log

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from schedopt import TIME_LIMIT_OVERHEAD_S  # noqa: E402
from tests.timing import QUIET_S, _workload, measure  # noqa: E402

MARKER = "SCHEDOPT_PROMISE_AUDIT_ROW"
#: ``solve()`` timed around the call in a fresh process (its instance loaded first).
PY_ROW = """
import json, sys, time
import schedopt
inst = schedopt.load(sys.argv[1])
t0 = time.perf_counter()
r = schedopt.solve(inst, sys.argv[2], time_limit_s=float(sys.argv[3]))
wall = time.perf_counter() - t0
print(json.dumps({"wall_in_s": wall, "status": r.status.value, "objective": r.objective,
                  "bound": r.best_bound}))
"""


def paper_files(folder: Path, problems: set[str] | None) -> Iterator[tuple[str, str, Path]]:
    """(problem, recipe name, instance file) of every ``*-paper`` suite, written once."""
    import schedopt
    from schedopt.bench.suites import all_suites

    for name, suite in all_suites().items():
        if "-paper" not in name or (problems and suite.problem not in problems):
            continue
        for recipe in suite.recipes:
            path = folder / f"{suite.problem}-{recipe.name}.json"
            if not path.is_file():
                schedopt.dump(recipe.build(), path)
            yield suite.problem, recipe.name, path


def methods_of(problem: str) -> list[str]:
    from schedopt.core.registry import get_problem

    listed = list(get_problem(problem).methods)
    return listed if "auto" in listed else ["auto", *listed]


def _marked(token: str) -> list[tuple[int, str]]:
    """The processes whose environment carries :data:`MARKER` set to ``token`` (pid, command
    line)."""
    needle = f"{MARKER}={token}\0".encode()
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes()
            if needle not in env + b"\0":
                continue
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        out.append((int(entry), cmd.strip()[:120]))
    return out


def _one_sample() -> float:
    """One run of the tests' fixed workload over its quiet time (``tests.timing``)."""
    started = time.perf_counter()
    _workload()
    return max(1.0, (time.perf_counter() - started) / QUIET_S)


def _tmp_names() -> set[str]:
    return {n for n in os.listdir("/tmp") if "schedopt" in n.lower() or "cbc" in n.lower()}


def _sense(problem: str) -> str:
    from schedopt.core.registry import get_problem

    return str(get_problem(problem).terms[0].sense.value)


def run_row(mode: str, problem: str, path: Path, method: str, limit: float) -> dict[str, Any]:
    private = Path(tempfile.mkdtemp(prefix="audit-row-"))
    token = private.name  # unique to this row
    env = {**os.environ, "TMPDIR": str(private), MARKER: token, "PYTHONPATH": str(ROOT)}
    if mode == "cli":
        argv = [sys.executable, "-m", "schedopt", "solve", str(path), "--method", method]
        argv += ["--time-limit", str(limit), "--json"]
    else:
        argv = [sys.executable, "-c", PY_ROW, str(path), method, str(limit)]
    before_tmp, slow_before = _tmp_names(), measure()
    samples: list[float] = []
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=err, cwd=ROOT)
        while proc.poll() is None:  # the slowdown while the row runs: the load swings
            samples.append(_one_sample())
            time.sleep(0.2)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    at_exit = _marked(token)
    time.sleep(0.6)  # a pool worker's watchdog looks for its parent every 0.5 s
    after = _marked(token)
    during = statistics.median(samples) if samples else slow_before
    slow = max(slow_before, during)
    row: dict[str, Any] = {"mode": mode, "problem": problem, "instance": path.stem}
    row.update(method=method, limit_s=limit, wall_s=round(wall, 3), exit=proc.returncode)
    row.update(_parsed(mode, stdout))
    if proc.returncode not in (0, 1, 2, 3, 4, 5) or "status" not in row:
        row["stderr"] = stderr.decode(errors="replace")[-600:]
    row["slowdown_before"], row["slowdown_during"] = round(slow_before, 2), round(during, 2)
    row["slowdown"] = round(slow, 2)
    row["promised_s"] = round(limit + TIME_LIMIT_OVERHEAD_S * slow, 3)
    # the CLI's wall from its start; solve()'s around the call
    row["kept"] = row.get("wall_in_s", wall) <= row["promised_s"]
    row["procs_at_exit"] = at_exit
    row["procs_after"] = after
    row["tmp_left"] = sorted(os.listdir(private))
    # others' processes write there too: a name here is a lead, not a finding
    row["tmp_added_by_anyone"] = sorted(_tmp_names() - before_tmp)
    row["load"] = os.getloadavg()[0]
    shutil.rmtree(private, ignore_errors=True)
    return row


def _parsed(mode: str, stdout: bytes) -> dict[str, Any]:
    try:
        doc = json.loads(stdout.decode().strip().splitlines()[-1] if mode == "py" else stdout)
    except (ValueError, IndexError):
        return {}
    if mode == "py":
        return {k: doc[k] for k in ("status", "objective", "bound", "wall_in_s")}
    timing = doc.get("timing", {})
    return {
        "status": doc.get("status"),
        "objective": doc.get("objective"),
        "bound": doc.get("best_bound", doc.get("bound")),
        "load_s": timing.get("load_s"),
        "solver_wall_s": timing.get("wall_s"),
        "explanation": (doc.get("explanation") or "")[:160],
    }


def bound_ok(row: dict[str, Any], sense: str) -> bool | None:
    obj, bound = row.get("objective"), row.get("bound")
    if obj is None or bound is None:
        return None
    tol = 1e-6 * max(1.0, abs(obj))
    return bool(bound <= obj + tol) if "min" in sense else bool(bound >= obj - tol)


def _raise_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def burner(on: bool) -> Iterator[None]:
    """One CPU burner for the block when ``on``; stopped on every path (SIGTERM included)."""
    signal.signal(signal.SIGTERM, _raise_on_sigterm)
    proc = None
    if on:
        proc = subprocess.Popen(["nice", "-n", "0", sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", default="", help="comma-separated (default: every one)")
    ap.add_argument("--methods", default="", help="comma-separated (default: every one listed)")
    ap.add_argument("--limits", default="0.5,1,2,5")
    ap.add_argument("--modes", default="cli", help="cli, py or both (cli,py)")
    ap.add_argument("--burner", action="store_true", help="one CPU burner beside the rows")
    ap.add_argument("--files", type=Path, help="where the instance files are (kept)")
    ap.add_argument("--skip", default="", help="comma-separated instance files' stems to skip")
    add_out_argument(ap, "promise_audit")
    args = ap.parse_args(argv)
    problems = set(filter(None, args.problems.split(",")))
    wanted = set(filter(None, args.methods.split(",")))
    limits = [float(x) for x in args.limits.split(",")]
    folder = args.files or Path(tempfile.mkdtemp(prefix="promise-audit-files-"))
    folder.mkdir(parents=True, exist_ok=True)
    log = row_log("promise_audit", argv, args.out)
    rows = []
    try:
        files = list(paper_files(folder, problems))
        with burner(args.burner):
            for problem, _recipe, path in files:
                if path.stem in args.skip.split(","):
                    continue
                sense = _sense(problem)
                for method in methods_of(problem):
                    if wanted and method not in wanted:
                        continue
                    for limit in limits:
                        for mode in args.modes.split(","):
                            k = key(mode, path.stem, method, limit, args.burner)
                            if log.get(k) is not None:
                                continue
                            row = run_row(mode, problem, path, method, limit)
                            row["burner"] = args.burner
                            row["bound_ok"] = bound_ok(row, sense)
                            log.add(k, row)
                            rows.append(row)
                            print(json.dumps(row), flush=True)
    finally:
        if args.files is None:
            shutil.rmtree(folder, ignore_errors=True)
    cols = ("mode", "instance", "method", "limit_s", "wall_s", "promised_s", "kept", "status")
    print_table("promise audit", rows, cols)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
