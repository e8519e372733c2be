"""SIGTERM and SIGINT to ``schedopt solve`` mid-run: does every child die, and does the command
exit cleanly? Issue #17's decomposition methods at the papers' scale (``colgen``,
``decomp:lp``, ``decomp:layer``, ``decomp:physical``, fair share's ``decomp``) and CBC's
watched child, each on its own process pool (``--param executor=process --param workers=2``)
and inline.

    python benchmarks/promise_signals.py --files DIR      # DIR: promise_audit.py's --files

Each row starts ``python -m schedopt solve FILE --method M --time-limit 20 --json`` in a
session of its own with a private ``TMPDIR`` and a marker in its environment, waits until the
command has run ``--after`` seconds (default 6: its file loaded and its solve under way),
sends the signal to the command's process only (``pid``) or to its whole process group as a
terminal's Ctrl-C does (``group``), and records: the seconds from the signal to the exit, the
exit code, the last line of stderr, the marked processes (the pool's workers, CBC) at the exit
and a second later, and what is left in the private ``TMPDIR``. Rows go to
benchmarks/results/promise_signals.jsonl (--out).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import add_out_argument, key, print_table, row_log
from promise_audit import MARKER, ROOT, _marked, burner

#: (problem, instance file stem, method) of each decomposition and CBC's child.
CASES = (
    ("cosched", "cosched-4096gpu-200j-s0", "colgen"),
    ("admission", "admission-1024gpu-3200j-s0", "decomp:lp"),
    ("admission", "admission-1024gpu-3200j-s0", "decomp"),
    ("moe_placement", "moe_placement-deepseek-v3-256gpu", "decomp:layer"),
    ("reconfig", "reconfig-1024gpu-16+16-s0", "decomp:physical"),
    ("fairshare", "fairshare-4096gpu-100t-5000j-s0", "decomp"),
    ("admission", "admission-256gpu-800j-s0", "milp:cbc"),
)
POOL = ("--param", "executor=process", "--param", "workers=2")


def run_row(
    path: Path, method: str, sig: int, to: str, pool: bool, after: float, checkout: Path
) -> dict:
    private = Path(tempfile.mkdtemp(prefix="audit-signal-"))
    token = private.name  # unique to this row
    env = {**os.environ, "TMPDIR": str(private), MARKER: token, "PYTHONPATH": str(checkout)}
    argv = [sys.executable, "-m", "schedopt", "solve", str(path), "--method", method]
    argv += ["--time-limit", "20", "--json", *(POOL if pool else ())]
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=checkout,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    # the solve has started once a marked child exists (a pool) or after loading; wait for the
    # file's load plus ``after`` s (loading takes 1-4 s on a loaded machine)
    time.sleep(after)
    children_before = _marked(token)
    sent = time.perf_counter()
    if proc.poll() is None:
        if to == "group":
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    exit_s = time.perf_counter() - sent
    at_exit = _marked(token)
    time.sleep(1.0)
    row: dict[str, Any] = {"method": method, "instance": path.stem, "pool": pool}
    row.update(signal=signal.Signals(sig).name, to=to, after_s=after)
    row.update(exit=proc.returncode, exit_s=round(exit_s, 3))
    row["children_before"] = [c for c in children_before if c[0] != proc.pid]
    row["procs_at_exit"] = at_exit
    row["procs_after_1s"] = _marked(token)
    row["tmp_left"] = sorted(os.listdir(private))
    lines = err.decode(errors="replace").strip().splitlines()
    row["stderr_last"] = lines[-1][:200] if lines else ""
    row["traceback"] = any(line.startswith("Traceback") for line in lines)
    row["stdout_bytes"] = len(out)
    row["load"] = os.getloadavg()[0]
    shutil.rmtree(private, ignore_errors=True)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=Path, required=True)
    ap.add_argument("--after", type=float, default=6.0, help="seconds from start to the signal")
    ap.add_argument("--methods", default="", help="comma-separated (default: every case)")
    ap.add_argument("--burner", action="store_true")
    ap.add_argument("--tag", default="", help="a label for the rows (the commit measured)")
    ap.add_argument(
        "--checkout", type=Path, default=ROOT, help="the schedopt checkout the commands run"
    )
    add_out_argument(ap, "promise_signals")
    args = ap.parse_args(argv)
    wanted = set(filter(None, args.methods.split(",")))
    log = row_log("promise_signals", argv, args.out)
    rows = []
    with burner(args.burner):
        for _problem, stem, method in CASES:
            if wanted and method not in wanted:
                continue
            path = args.files / f"{stem}.json"
            for pool in (True, False):
                if method == "milp:cbc" and pool:
                    continue
                for sig, to in (
                    (signal.SIGTERM, "pid"),
                    (signal.SIGINT, "pid"),
                    (signal.SIGINT, "group"),
                ):
                    k = key(stem, method, pool, sig.name, to, args.after, args.burner)
                    k += "" if args.checkout == ROOT else f"/{args.checkout}"
                    k += f"/{args.tag}" if args.tag else ""
                    if log.get(k) is not None:
                        continue
                    row = run_row(path, method, sig, to, pool, args.after, args.checkout)
                    row["burner"], row["checkout"] = args.burner, str(args.checkout)
                    row["tag"] = args.tag
                    log.add(k, row)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    cols = ("method", "pool", "signal", "to", "exit", "exit_s", "procs_after_1s", "tmp_left")
    print_table("signals", rows, cols)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
