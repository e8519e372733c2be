"""Gavel's own simulator, schedopt's drop-in policies against Gavel's classes on one trace
(issue #19 item 4).

    GAVEL_SRC=/path/to/gavel python benchmarks/gavel_simulator.py
    python benchmarks/gavel_simulator.py --gavel-src /path/to/gavel --jobs 300 \
        --cluster 36:36:36 --seed 0 --policies max_min_fairness_perf,isolated \
        --results-md benchmarks/RESULTS.md

The trace is Gavel's ``scripts/utils/generate_trace.py`` with ``--num_jobs`` and ``--seed``
and its defaults otherwise (all jobs at time 0, 1-4 h on a V100, one GPU each); each policy
runs once with schedopt's drop-in (``schedopt.integrations.gavel``) and once with Gavel's
own class (cvxpy + ECOS), one child process at a time (``schedopt.integrations.gavel_sim``).
Per run: jobs completed, Gavel's average JCT and total duration (makespan), the number of
allocations computed (Gavel recomputes when jobs arrive or leave, at most every 1,920 s
simulated), mean / max / total seconds of ``get_allocation``, failed rounds (the policy
raised) and invalid rounds (an allocation breaking Gavel's constraints), and the 1-minute
load average before and after. A policy name with ``+efficiency`` runs schedopt's drop-in
with ``efficiency=True`` (Gavel has no such option: its column is empty).

Not a suite: a row is one run of Gavel's simulator (dozens of rounds, each round's jobs made
by the previous round's answer) with Gavel's own classes beside schedopt's, not a ``solve``
of an instance. Rows are keyed (policy, system, jobs, cluster, seed) through
:class:`schedopt.bench.record.RowLog` in ``benchmarks/results/gavel_simulator.jsonl`` (a rerun
of the same command reads them back); the script prints a table and, with ``--results-md``,
replaces its section (``--section``) between this script's markers in that file.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

from common import add_out_argument, print_table, row_log

from schedopt.integrations.gavel_sim import POLICIES, simulate

#: ``--policies unpacked`` (the default): the policies Gavel's scheduler runs without pairs
UNPACKED = [
    "max_min_fairness",
    "max_min_fairness_perf",
    "max_min_fairness_perf+efficiency",
    "max_min_fairness_water_filling",
    "max_min_fairness_water_filling_perf",
    "finish_time_fairness",
    "finish_time_fairness_perf",
    "min_total_duration",
    "min_total_duration_perf",
    "max_sum_throughput_perf",
    "max_sum_throughput_normalized_by_cost_perf",
    "max_sum_throughput_normalized_by_cost_perf_SLOs",
    "allox",
    "fifo",
    "fifo_perf",
    "isolated",
]
#: ``--policies packed``: those whose name makes Gavel's scheduler build every pair of jobs
#: (its own bookkeeping of the pairs then dominates the run: a 120-job trace took 122 s of
#: which 2.5 s in schedopt's policy, and 300 jobs did not finish in 600 s)
PACKED = [
    "max_min_fairness_packed",
    "max_min_fairness_water_filling_packed",
    "finish_time_fairness_packed",
    "min_total_duration_packed",
    "fifo_packed",
    "gandiva",
]


def run(policy: str, system: str, args: argparse.Namespace) -> dict:
    name, _, variant = policy.partition("+")
    kwargs = {"efficiency": True} if variant == "efficiency" else {}
    load_before = os.getloadavg()[0]
    row = {"policy": policy, "system": system, "jobs": args.jobs, "cluster": args.cluster}
    try:
        r = simulate(
            name,
            system=system,
            num_jobs=args.jobs,
            cluster_spec=tuple(int(n) for n in args.cluster.split(":")),
            seed=args.seed,
            gavel_src=args.gavel_src,
            policy_kwargs=kwargs,
            timeout_s=args.timeout,
        )
    except subprocess.TimeoutExpired:
        row["aborted"] = f"over the {args.timeout:g} s timeout"
    else:
        row.update(
            completed=r.completed_jobs,
            jct_h=None if r.average_jct_s is None else r.average_jct_s / 3600,
            makespan_h=None if r.makespan_s is None else r.makespan_s / 3600,
            allocations=r.rounds,
            policy_mean_s=r.mean_policy_s,
            policy_max_s=r.max_policy_s,
            policy_total_s=sum(r.policy_s),
            failed=len(r.failed_rounds),
            first_failure=r.failed_rounds[0][1] if r.failed_rounds else None,
            invalid=len(r.invalid_rounds),
            first_invalid=r.invalid_rounds[0][1] if r.invalid_rounds else None,
            aborted=r.aborted,
            wall_s=r.wall_s,
        )
    row["load"] = f"{load_before:.1f}-{os.getloadavg()[0]:.1f}"
    return row


def markers(section: str) -> tuple[str, str]:
    return f"<!-- gavel_simulator:{section}:begin -->", f"<!-- gavel_simulator:{section}:end -->"


def markdown(rows: list[dict], args: argparse.Namespace, command: str) -> str:
    by = {(r["policy"], r["system"]): r for r in rows}
    begin, end = markers(args.section)
    when = sorted(str(r.get("when", "?")).replace("T", " ")[:16] for r in rows)
    out = [
        begin,
        f"### Gavel's simulator, {args.jobs} jobs on {args.cluster}: schedopt's drop-in "
        "against Gavel's classes (issue 19)",
        "",
        "```",
        command,
        "```",
        "",
        f"Measured {when[0]} to {when[-1]} UTC: Gavel c4fa400 unchanged, cvxpy "
        f"1.9.3 + ECOS 2.0.14, cluster {args.cluster} (v100:p100:k80), a {args.jobs}-job "
        f"trace from Gavel's `generate_trace.py` (seed {args.seed}, its defaults: every job "
        "at time 0, 1-4 h on a V100, one GPU), one run per cell, the two systems alternating, "
        "a shared 2-core machine (load: the 1-minute average before-after each run). JCT is "
        "Gavel's `get_average_jct` over the jobs that completed; makespan its total duration; "
        "policy s: seconds in `get_allocation` per allocation computed (mean / max); failed: "
        "allocations where the policy raised (then the previous allocation was kept); "
        "invalid: allocations breaking Gavel's constraints (`check_allocation`).",
        "",
        "| policy | schedopt JCT h | Gavel JCT h | JCT ratio | schedopt makespan h | "
        "Gavel makespan h | allocations s / G | schedopt policy s mean / max | "
        "Gavel policy s mean / max | completed s / G | failed s / G | invalid s / G | "
        "load s; G |",
        "|---|" + "---:|" * 12,
    ]
    notes: list[str] = []
    for policy in dict.fromkeys(r["policy"] for r in rows):
        s, g = by.get((policy, "schedopt"), {}), by.get((policy, "gavel"), {})
        ratio = (
            f"{s['jct_h'] / g['jct_h']:.3f}"
            if s.get("jct_h") and g.get("jct_h") and not g.get("failed")
            else "–"
        )
        cells = [
            f"`{policy}`",
            _f(s.get("jct_h")),
            _f(g.get("jct_h")),
            ratio,
            _f(s.get("makespan_h")),
            _f(g.get("makespan_h")),
            f"{_i(s.get('allocations'))} / {_i(g.get('allocations'))}",
            f"{_f(s.get('policy_mean_s'), 4)} / {_f(s.get('policy_max_s'), 3)}",
            f"{_f(g.get('policy_mean_s'), 4)} / {_f(g.get('policy_max_s'), 3)}",
            f"{_i(s.get('completed'))} / {_i(g.get('completed'))}",
            f"{_i(s.get('failed'))} / {_i(g.get('failed'))}",
            f"{_i(s.get('invalid'))} / {_i(g.get('invalid'))}",
            f"{s.get('load', '–')}; {g.get('load', '–')}",
        ]
        out.append("| " + " | ".join(cells) + " |")
        for side, r in (("schedopt", s), ("Gavel", g)):
            for key in ("aborted", "first_failure", "first_invalid"):
                if r.get(key):
                    what = {
                        "aborted": "aborted",
                        "first_failure": "first failed allocation",
                        "first_invalid": "first invalid allocation",
                    }[key]
                    notes.append(f"- `{policy}`, {side}: {what}: {_md(r[key])}")
    if notes:
        out += ["", *notes]
    out.append(end)
    return "\n".join(out) + "\n"


def _f(x, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}" if digits > 3 else f"{x:.{digits}g}"


def _i(x) -> str:
    return "–" if x is None else str(x)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:300]


def write_section(path: Path, name: str, section: str) -> None:
    text = path.read_text() if path.exists() else ""
    begin, end = markers(name)
    if begin in text and end in text:
        pattern = re.escape(begin) + r".*?" + re.escape(end) + r"\n?"
        text = re.sub(pattern, lambda _: section, text, flags=re.S)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gavel-src", default=os.environ.get("GAVEL_SRC"))
    p.add_argument("--jobs", type=int, default=300)
    p.add_argument("--cluster", default="36:36:36")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--policies", default="unpacked", help="comma-separated names, 'unpacked' or 'packed'"
    )
    p.add_argument("--systems", default="schedopt,gavel")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per run")
    add_out_argument(p, "gavel_simulator")
    p.add_argument("--results-md", type=Path, default=None)
    p.add_argument("--section", default="main", help="which section of --results-md to replace")
    args = p.parse_args(argv)
    if not args.gavel_src:
        p.error("Gavel's source: --gavel-src or GAVEL_SRC")
    named = {"unpacked": UNPACKED, "packed": PACKED}
    policies = [y for x in args.policies.split(",") if x for y in named.get(x, [x])]
    for policy in policies:
        if policy.partition("+")[0] not in POLICIES:
            p.error(f"unknown policy {policy!r}")
    log = row_log("gavel_simulator", argv, args.out)
    rows = []
    for policy in policies:
        for system in args.systems.split(","):
            if system == "gavel" and "+" in policy:
                continue
            key = f"{policy}/{system}/{args.jobs}j/{args.cluster}/s{args.seed}"
            row = log.row(key, lambda policy=policy, system=system: run(policy, system, args))
            rows.append(row)
            print({k: v for k, v in row.items() if k not in ("versions", "machine")}, flush=True)
    columns = [
        "policy",
        "system",
        "completed",
        "jct_h",
        "makespan_h",
        "allocations",
        "policy_mean_s",
        "policy_max_s",
        "failed",
        "invalid",
        "load",
    ]
    print_table(f"Gavel's simulator, {args.jobs} jobs, {args.cluster}", rows, columns)
    if args.results_md is not None:
        cmd_args = sys.argv[1:] if argv is None else argv
        command = " ".join(["python benchmarks/gavel_simulator.py", *cmd_args])
        write_section(args.results_md, args.section, markdown(rows, args, command))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
