"""A stand-in for the CBC executable that misbehaves on purpose, for deterministic tests.

``install(monkeypatch, tmp_path, mode)`` makes ``schedopt.backends.cbc`` run this script
instead of CBC. It reads CBC's command line (``-sec``, ``-solution``) and, by ``mode``:

- ``ignore-sigint``: prints a line and sleeps, deaf to SIGINT (the watchdog must kill it);
- ``infeasible-on-sigint``: on SIGINT claims "Infeasible" (as CBC 2.10 may when stopped early);
- ``optimal-on-sigint``: on SIGINT claims "Optimal" with x = 1 (an incumbent, not a proof);
- ``crash``: prints a few log lines and exits with code 3 without a solution;
- ``preprocess-after-limit``: sleeps past its ``-sec`` limit, then says "Pre-processing says
  infeasible" and writes "Integer infeasible" (what CBC 2.10 does when its limit cuts
  pre-processing short, seen on a feasible 45k-variable admission model);
- ``preprocess-at-once``: the same verdict at once, well within the limit (a real proof).
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

SCRIPT = r"""
import signal, sys, time
args = sys.argv[1:]
sol = args[args.index("-solution") + 1]
sec = float(args[args.index("-sec") + 1])
mode = MODE


def write(status, value=1):
    with open(sol, "w") as f:
        f.write(status + "\n")
        f.write(f"      0 X0000000 {value:>15} {0:>23}\n")


def on_sigint(claim, value=1):
    def handler(signum, frame):
        print(f"Result - {claim} (fake)", flush=True)
        write(f"{claim} - objective value {value}", value)
        sys.exit(0)
    return handler


print("Welcome to the fake CBC", flush=True)
if mode == "ignore-sigint":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
elif mode == "infeasible-on-sigint":
    print("Problem is infeasible - 0.00 seconds", flush=True)  # a proof line, yet interrupted
    signal.signal(signal.SIGINT, on_sigint("Infeasible", 0))
elif mode == "optimal-on-sigint":
    signal.signal(signal.SIGINT, on_sigint("Optimal"))
elif mode == "crash":
    for i in range(30):
        print(f"fake log line {i}")
    print("fake: out of memory", flush=True)
    sys.exit(3)
elif mode in ("preprocess-after-limit", "preprocess-at-once"):
    if mode == "preprocess-after-limit":
        time.sleep(sec + 0.05)
    print("Cgl0000I Cut generators found to be infeasible! (or unbounded)")
    print("Pre-processing says infeasible or unbounded", flush=True)
    write("Integer infeasible - objective value 0", 0)
    sys.exit(0)
time.sleep(120)
"""


def install(monkeypatch, tmp_path: Path, mode: str) -> Path:
    path = tmp_path / f"fake-cbc-{mode}"
    path.write_text(f"#!{sys.executable}\nMODE = {mode!r}\n{SCRIPT}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr("schedopt.backends.cbc.cbc_executable", lambda: str(path))
    return path
