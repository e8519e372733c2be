"""Old against new, alternating, one process at a time: ``schedopt bench SUITE --methods auto``
run from two checkouts in turn (``nice -n 5``), the load (``uptime``) before each run, and a
table of every pair (plan $/h, bound, gap, rounds, master LP) from the rows' JSON (#17).

    python benchmarks/cosched_pairs.py --old /work/wt/x-old --new /work/wt/x \\
        --suite cosched-paper-60s --pairs 3 --tag overlap --out benchmarks/results/DIR

Extra arguments after ``--`` go to ``schedopt bench`` (e.g. ``-- --time-limits 10``).
``--table`` only prints the table of rows already in ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path


def run(tree: str, suite: str, out: Path, extra: list[str]) -> float:
    """One bench row from ``tree``; the 1-minute load just before it."""
    load = float(os.getloadavg()[0])
    env = {**os.environ, "PYTHONPATH": tree}
    cmd = ["nice", "-n", "5", sys.executable, "-m", "schedopt", "bench", suite]
    cmd += ["--methods", "auto", "--no-report", "--out", str(out), *extra]
    subprocess.run(cmd, cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)
    return load


def row(path: Path) -> dict:
    r = json.loads(path.read_text().splitlines()[-1])
    s = r.get("stats", {})
    return {
        "plan": r["objectives"][0] if r.get("objectives") else float("nan"),
        "bound": r.get("bound") or float("nan"),
        "gap": 100 * (r.get("gap") or float("nan")),
        "rounds": s.get("rounds", float("nan")),
        "lp": s.get("master_lp", float("nan")),
        "load": r.get("machine", {}).get("load1", float("nan")),
        "when": r.get("when", "")[11:16],
    }


def table(out: Path, tag: str) -> None:
    print(
        "| pair | end old / new | load old / new | $/h old | $/h new | bound old | bound new "
        "| gap old | gap new | LP old / new | rounds old / new |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    k = 1
    while (out / f"{tag}-old-r{k}.jsonl").exists() and (out / f"{tag}-new-r{k}.jsonl").exists():
        o, n = row(out / f"{tag}-old-r{k}.jsonl"), row(out / f"{tag}-new-r{k}.jsonl")
        print(
            f"| {k} | {o['when']} / {n['when']} | {o['load']} / {n['load']} "
            f"| {o['plan']:,.2f} | {n['plan']:,.2f} | {o['bound']:,.1f} | {n['bound']:,.1f} "
            f"| {o['gap']:.2f}% | {n['gap']:.2f}% | {o['lp']:,.0f} / {n['lp']:,.0f} "
            f"| {o['rounds']:.0f} / {n['rounds']:.0f} |"
        )
        k += 1


def _whole(path: str | None) -> str | None:
    return None if path is None else os.path.abspath(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--old", help="the old checkout (its root)")
    ap.add_argument("--new", help="the new checkout (its root)")
    ap.add_argument("--suite", default="cosched-paper-60s")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--first", type=int, default=1, help="number of the first pair")
    ap.add_argument("--tag", default="pairs", help="the rows' file names: TAG-SIDE-rN.jsonl")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--table", action="store_true", help="only print the table")
    ap.add_argument("extra", nargs="*", help="after --: arguments for schedopt bench")
    a = ap.parse_args()
    # each run's working directory is its checkout: paths given relative to this one, made whole
    a.out, a.old, a.new = a.out.resolve(), _whole(a.old), _whole(a.new)
    a.out.mkdir(parents=True, exist_ok=True)
    if not a.table:
        for k in range(a.first, a.first + a.pairs):
            for side, tree in (("old", a.old), ("new", a.new)):
                path = a.out / f"{a.tag}-{side}-r{k}.jsonl"
                path.unlink(missing_ok=True)
                load = run(tree, a.suite, path, a.extra)
                print(f"pair {k} {side}: load {load:.2f}", row(path), flush=True)
    table(a.out, a.tag)


if __name__ == "__main__":
    main()
