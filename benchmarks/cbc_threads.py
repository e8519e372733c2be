"""Does CBC's ``-threads`` switch make it hang? Runs CBC many times on one tiny model.

CBC 2.10 (the binary PuLP ships) runs its threaded branch-and-bound whenever ``-threads`` is
given, even ``-threads 1``; on a 10-row admission model that search sometimes never ends and
ignores SIGINT (the CI failure of ``tests/admission/test_bruteforce.py`` with ``milp:cbc``).
This script writes the first-level model of that instance as the back-end does, runs CBC
``--runs`` times with and without the switch (alternating, so load affects both alike), and
counts runs that outlive ``--timeout`` seconds.

    python benchmarks/cbc_threads.py --runs 1500

prints a table; the rows (one per variant) go to ``benchmarks/results/cbc_threads.jsonl``
(--out), keyed by runs and timeout, with the machine and versions (schedopt.bench.record): a
rerun of the same command reads them back.

Not a ``schedopt bench`` suite: it counts hangs of the CBC binary run directly on one MPS file,
many times, with and without a command-line switch; there is no solve, no method and no
objective to tabulate.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from anywhere: use this checkout's schedopt
    sys.path.insert(0, str(ROOT))

from common import key, row_log  # noqa: E402  (benchmarks/common.py, the script's folder)

from schedopt.backends.cbc import cbc_executable  # noqa: E402
from schedopt.problems.admission.instance import AdmissionInstance  # noqa: E402
from schedopt.topology import Cluster  # noqa: E402


#: The instance hypothesis found (2 hosts of 4 H100, 3 slots of 60 s, 3 jobs). CBC hangs after
#: its feasibility pump, so any model that reaches the pump would do.
def tiny() -> AdmissionInstance:
    job = {"tenant": "default", "admitted": False, "weight": 1.0}
    jobs = [
        {
            "id": "j0",
            "kind": "soft_slo",
            "arrival_s": 60.0,
            "remaining_iterations": 921,
            "throughput": {"1": 6.4, "8": 38.4},
            "deadlines": [{"deadline_s": 180.0, "value": 5.0}],
            "current_gpus": 0,
        },
        {
            "id": "j1",
            "kind": "soft_slo",
            "arrival_s": 0.0,
            "remaining_iterations": 48,
            "throughput": {"1": 2.0},
            "deadlines": [{"deadline_s": 60.0, "value": 2.0}],
            "current_gpus": 1,
        },
        {
            "id": "j2",
            "kind": "best_effort",
            "arrival_s": 0.0,
            "remaining_iterations": 129,
            "throughput": {"2": 2.4},
            "deadlines": [],
            "current_gpus": 0,
        },
    ]
    return AdmissionInstance.model_validate(
        {
            "cluster": Cluster.dgx(nodes=2, gpus_per_node=4),
            "slots": 3,
            "slot_s": 60.0,
            "be_discount": 0.8,
            "jobs": [job | j for j in jobs],
        }
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1500, help="CBC runs per variant")
    parser.add_argument("--timeout", type=float, default=1.0, help="a run longer than this hung")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/cbc_threads.jsonl")
    args = parser.parse_args(argv)
    log = row_log("cbc_threads", argv, args.out)
    rows = log.rows(key(f"runs{args.runs}", f"timeout{args.timeout:g}"), lambda: count(args))
    print(f"{'variant':<14}{'runs':>8}{'hung':>8}")
    for row in rows:
        print(f"{row['variant']:<14}{row['runs']:>8}{row['hung']:>8}")
    print(f"rows in {log.path} ({log.measured} measured, {log.resumed} read back)")
    return 0


def count(args: argparse.Namespace) -> list[dict]:
    """Run CBC ``args.runs`` times per variant; the hung runs of each."""

    from schedopt.model.emit_pulp import PulpSession
    from schedopt.problems.admission.data import build_data
    from schedopt.problems.admission.model import build_model

    inst = tiny()
    variants = {"-threads 1": ["-threads", "1"], "no -threads": []}
    hung = dict.fromkeys(variants, 0)
    with tempfile.TemporaryDirectory(prefix="schedopt-cbc-threads-") as tmp:
        # The first level's model exactly as the CBC back-end hands it over (PuLP's MPS).
        mps = str(Path(tmp) / "tiny.mps")
        am = build_model(build_data(inst))
        session = PulpSession(am.model)
        session.set_level(am.model.levels[0])
        session.prob.writeMPS(mps, rename=1)
        for _ in range(args.runs):
            for name, switch in variants.items():
                cmd = [
                    cbc_executable(),
                    mps,
                    "-sec",
                    "2",
                    "-randomCbcSeed",
                    "1",
                    *switch,
                    "-timeMode",
                    "elapsed",
                    "-solve",
                ]
                try:
                    subprocess.run(cmd, capture_output=True, timeout=args.timeout, check=False)
                except subprocess.TimeoutExpired:
                    hung[name] += 1
    return [{"variant": name, "runs": args.runs, "hung": count} for name, count in hung.items()]


if __name__ == "__main__":
    raise SystemExit(main())
