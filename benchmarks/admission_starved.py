"""Issue #17's time-limit promise for admission on a starved machine: ``auto`` at 1,024 GPUs x
3,200 jobs, 10 s, beside CPU burners and a concurrent test stage (RESULTS.md, "Admission's
wall on a starved machine").

Each row is one ``schedopt.solve(inst, "auto", time_limit_s=LIMIT)`` in a fresh process under
``nice -n 5`` (``--nice``), this checkout's package or ``--previous PATH``'s, alternating per
seed. The row
process measures, besides ``wall_s``: the solve's CPU seconds (``cpu_s``, ``time.process_time``),
its main thread's seconds waiting for a CPU while runnable (``runq_s``, Linux's schedstat) and
the rest of its wall, blocked (``blocked_s``: I/O, page faults, locks), the machine's CPU
seconds taken by the host of its VM meanwhile (``steal_s``, /proc/stat); the machine's slowdown
by ``tests.timing.measure()`` in the same process just before and just after the solve; the
promise ``LIMIT + TIME_LIMIT_OVERHEAD_S x max(slowdown before, after)`` and whether the wall kept
it; the phases' walls of ``decomp:lp`` (``bound_s``, ``guide_s``, ``start_s``, ``join_s``).

``--burners N`` starts N un-niced CPU burners for the run, ``--beside CMD`` runs CMD (a shell
command: the CI's slow stage) again and again for the run; both are stopped at the end, on every
path. Linux's autogroups share the CPUs between sessions first and by niceness only inside a
session: by default the burners and CMD run in this script's session, as the rows do, so the
rows' ``nice`` counts against them (a row at nice 5 beside three burners at 0 gets a tenth of
its session's share); ``--own-sessions`` starts each in a session of its own, where a row's
niceness does not count against them. Rows go to benchmarks/results/admission_starved.jsonl;
one JSON line is printed per row.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import append_rows, checkout_commit, run_in_checkout

ROOT = Path(__file__).resolve().parent.parent

ROW = """
import json, os, time
from tests.timing import measure
import schedopt
from schedopt import TIME_LIMIT_OVERHEAD_S
from schedopt.problems.admission import generate_custom

def sched():
    with open("/proc/thread-self/schedstat") as f:
        on_cpu, waiting = f.read().split()[:2]
    return int(on_cpu) / 1e9, int(waiting) / 1e9

def steal():  # the machine's CPU seconds taken by its host (a VM's steal), over every CPU
    with open("/proc/stat") as f:
        return int(f.readline().split()[8]) / os.sysconf("SC_CLK_TCK")

inst = generate_custom(hosts={hosts}, jobs={jobs}, slots=12, seed={seed})
before = measure()
load0 = os.getloadavg()[0]
on0, wait0 = sched()
steal0 = steal()
t, c = time.perf_counter(), time.process_time()
r = schedopt.solve(inst, "auto", time_limit_s={limit})
wall, cpu = time.perf_counter() - t, time.process_time() - c
on1, wait1 = sched()
steal1 = steal()
load1 = os.getloadavg()[0]
after = measure()
promised = {limit} + TIME_LIMIT_OVERHEAD_S * max(before, after)
keep = ("bound", "bound_s", "guide_s", "start_s", "parts_s", "join_s", "start_value")
print(json.dumps(dict(
    status=r.status.value, method_used=r.method, objective=r.objective, bound=r.best_bound,
    wall_s=round(wall, 3), cpu_s=round(cpu, 3), runq_s=round(wait1 - wait0, 3),
    blocked_s=round(wall - (on1 - on0) - (wait1 - wait0), 3), steal_s=round(steal1 - steal0, 2),
    slowdown_before=round(before, 2), slowdown_after=round(after, 2),
    solve_slowdown=round(wall / max(cpu, 1e-9), 2), promised_s=round(promised, 2),
    held=wall <= promised, load_before=load0, load_after=load1,
    stats={{k: r.stats[k] for k in keep if k in r.stats}},
)))
"""


def _row(path: Path, seed: int, limit: float, hosts: int, jobs: int, nice: int) -> dict:
    code = ROW.format(hosts=hosts, jobs=jobs, seed=seed, limit=limit)
    return run_in_checkout(code, path, nice)


class Beside:
    """The burners and the repeated command, each in its own process group, stopped on exit."""

    def __init__(self, burners: int, command: str | None, own_sessions: bool = False) -> None:
        self.procs: list[subprocess.Popen] = []
        # a process group of its own (to stop it and its children), in the caller's Unix
        # session or, with own_sessions, a new one (Linux autogroups then schedule it apart)
        self.group = {"start_new_session": True} if own_sessions else {"process_group": 0}
        self.command = command
        self.stopping = threading.Event()
        self.runs = 0
        for _ in range(burners):
            self.procs.append(
                subprocess.Popen([sys.executable, "-c", "while True: pass"], **self.group)
            )
        self.loop = threading.Thread(target=self._repeat, daemon=True) if command else None

    def _repeat(self) -> None:
        while not self.stopping.is_set():
            p = subprocess.Popen(
                self.command or "",
                shell=True,
                cwd=str(ROOT),
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                **self.group,
            )
            self.procs.append(p)
            while p.poll() is None and not self.stopping.wait(0.5):
                pass
            self.runs += 1

    def __enter__(self) -> Beside:
        if self.loop is not None:
            self.loop.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        for p in self.procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)  # its own group: it and its children
                p.wait()
        if self.loop is not None:
            self.loop.join(timeout=5)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--rounds", type=int, default=2, help="rows per seed and tree")
    ap.add_argument("--limit", type=float, default=10.0)
    ap.add_argument("--shape", default="128x3200", help="hosts x jobs")
    ap.add_argument("--previous", default=None, help="a checkout to alternate with")
    ap.add_argument("--burners", type=int, default=0)
    ap.add_argument(
        "--nice", type=int, default=5, help="the rows' niceness (15: starved by the burners alone)"
    )
    ap.add_argument("--beside", default=None, help="a shell command run again and again")
    ap.add_argument("--own-sessions", action="store_true", help="burners and CMD in own sessions")
    args = ap.parse_args(argv)
    hosts, jobs = (int(x) for x in args.shape.split("x"))
    trees = [("this", ROOT)] + ([("previous", Path(args.previous))] if args.previous else [])
    with Beside(args.burners, args.beside, args.own_sessions) as beside:
        for r in range(args.rounds):
            for seed in (int(s) for s in args.seeds.split(",")):
                order = trees if (r + seed) % 2 == 0 else trees[::-1]
                for label, path in order:
                    row = {
                        "instance": f"{hosts * 8}x{jobs}-s{seed}",
                        "tree": label,
                        "commit": checkout_commit(path),
                        "limit_s": args.limit,
                        "burners": args.burners,
                        "beside": args.beside,
                        "beside_running": beside.loop is not None,
                        "nice": args.nice,
                        "own_sessions": args.own_sessions,
                        **_row(path, seed, args.limit, hosts, jobs, args.nice),
                    }
                    print(json.dumps(row), flush=True)
                    append_rows("admission_starved", [row], argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
