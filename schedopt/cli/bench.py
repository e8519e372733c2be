"""``schedopt bench SUITE [SUITE...]``: run benchmark suites (suites × methods × time limits ×
seeds) on an executor, resumably, writing JSON lines, a Markdown table and SVG plots; or check
and record the suites' instance checksums; or update the best-known table."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

import schedopt.cli.args as cli_args
from schedopt.core.registry import get_problem

from .common import EXIT_OK, EXIT_USAGE, CliError, err_console, out_console


def _floats(text: str) -> list[float]:
    return [cli_args.time_limit(t) for t in text.split(",") if t]


def _ints(text: str) -> list[int]:
    return [int(t) for t in text.split(",") if t]


def add_bench_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("suites", nargs="*", metavar="SUITE", help="suite names (--list shows them)")
    p.add_argument("--list", action="store_true", help="list the suites and exit")
    p.add_argument("--methods", help="comma-separated methods (default: each suite's own)")
    p.add_argument("--recipes", help="comma-separated recipe names: only these (default: all)")
    p.add_argument(
        "--time-limits", type=_floats, help="comma-separated limits in s (default: the suite's)"
    )
    p.add_argument("--seeds", type=_ints, default=[0], help="comma-separated solver seeds (0)")
    cli_args.add_executor(p, "rows")
    cli_args.add_int(p, "--threads", 1, 256, 1, "solver threads per worker (1)")
    cli_args.add_params(p, "every row (rows with other parameters are other rows)")
    p.add_argument(
        "--deadline",
        type=cli_args.time_limit,
        help="stop the run after this many seconds (rows not finished are rerun next time)",
    )
    p.add_argument("--out", help="JSON-lines file (default: bench-results/<suites>.jsonl)")
    p.add_argument("--no-report", action="store_true", help="skip the Markdown table and plots")
    p.add_argument(
        "--plot",
        choices=("scale",),
        help="solve nothing: draw from the rows already in --out (scale: wall time and gap "
        "against GPUs x jobs, log-log, one SVG per problem)",
    )
    p.add_argument("--checksums", action="store_true", help="check the suites' instance checksums")
    p.add_argument("--update", action="store_true", help="with --checksums: record them")
    p.add_argument(
        "--update-best-known",
        nargs="?",
        const="benchmarks/best_known.json",
        metavar="PATH",
        help="merge the rows into the best-known table (benchmarks/best_known.json)",
    )


def _suites(names: list[str], recipes: str | None = None) -> list[Any]:
    import dataclasses

    from schedopt.bench.suites import all_suites

    known = all_suites()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise CliError(
            f"unknown suite {', '.join(unknown)}; choose from {', '.join(known)}", EXIT_USAGE
        )
    suites = [known[n] for n in names]
    if recipes is None:
        return suites
    wanted = set(recipes.split(","))
    missing = wanted - {r.name for s in suites for r in s.recipes}
    if missing:
        raise CliError(f"no recipe {', '.join(sorted(missing))} in {', '.join(names)}", EXIT_USAGE)
    return [
        dataclasses.replace(s, recipes=tuple(r for r in s.recipes if r.name in wanted))
        for s in suites
    ]


def _list() -> int:
    from schedopt.bench.suites import all_suites

    out = out_console()
    for suite in all_suites().values():
        out.print(
            f"{suite.name:<22} {len(suite.recipes):>3} recipes  {suite.time_limit_s:g} s  "
            f"{escape(','.join(suite.methods))}  {escape(suite.description)}",
            soft_wrap=True,
        )
    return EXIT_OK


def _checksums(suites: list[Any], update: bool) -> int:
    from schedopt.bench.checksums import compute, save

    out, drifted = out_console(), 0
    for suite in suites:
        found: dict[str, str] = {}
        recorded = {r.name: r.checksum for r in suite.recipes}
        recorded |= {f"data:{r.name}": r.data_sha256 for r in suite.recipes if r.data}
        for key, sha in compute(suite):
            found[key] = sha
            was = recorded.get(key, "")
            state = (
                "absent data"
                if not sha
                else "new"
                if not was
                else ("ok" if was == sha else "DRIFT")
            )
            drifted += state == "DRIFT"
            out.print(f"{suite.name}/{escape(key)}  {sha[:16] or '-':<16}  {state}")
        if update:
            save(suite, found)
    return 1 if drifted and not update else EXIT_OK


def run_bench(args: argparse.Namespace) -> int:
    if args.list:
        return _list()
    if not args.suites:
        raise CliError("name at least one suite (schedopt bench --list)", EXIT_USAGE)
    suites = _suites(args.suites, args.recipes)
    if args.checksums:
        return _checksums(suites, args.update)
    from schedopt.bench import best_known, report, runner
    from schedopt.core.stopping import Deadline
    from schedopt.executor import make_executor

    methods = args.methods.split(",") if args.methods else None
    for suite in suites:  # a misspelt method is a usage error, not a column of error rows
        known = set(get_problem(suite.problem).methods) | {"auto"}
        unknown = sorted(set(methods or suite.methods) - known)
        if unknown:
            raise CliError(
                f"{suite.name}: unknown method {', '.join(unknown)} for {suite.problem}; "
                f"choose from {', '.join(sorted(known))}",
                EXIT_USAGE,
            )
    jobs = runner.plan(
        suites,
        methods=methods,
        time_limits=args.time_limits,
        seeds=args.seeds,
        threads=args.threads,
        params=dict(args.param),
    )
    out = Path(args.out or f"bench-results/{'+'.join(args.suites)}.jsonl")
    err = err_console()
    if args.plot:
        return _plot(list(runner.select(runner.read_rows(out), jobs)), out, args.suites)
    # SIGTERM unwinds through `with executor` (cli/terminate.py), which stops the workers
    with (
        make_executor(
            args.executor,
            jobs=args.jobs or None,
            address=args.address,
            threads_per_worker=args.threads,
        ) as executor,
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
            transient=False,
        ) as progress,
    ):
        bar = progress.add_task("rows", total=len(jobs))

        def started(todo: int, done: int) -> None:
            progress.update(bar, completed=done, description=f"{done} done before, rows")

        def finished(row: dict[str, Any]) -> None:
            progress.advance(bar)
            progress.update(bar, description=f"{row['recipe']} {row['method']}"[:40])

        deadline = Deadline.after(args.deadline) if args.deadline else None
        runner.run(jobs, executor, out, deadline=deadline, on_row=finished, on_start=started)
    rows = list(runner.select(runner.read_rows(out), jobs))
    lost = len(jobs) - len(rows)
    err.print(f"{len(rows)} rows in {escape(str(out))}" + (f"; {lost} to rerun" if lost else ""))
    if not args.no_report and rows:
        stem = out.with_suffix("")
        columns = tuple(dict.fromkeys(c for s in suites for c in s.columns))
        for path in report.write_reports(rows, stem, " + ".join(args.suites), columns):
            err.print(f"wrote {escape(str(path))}")
    if args.update_best_known:
        path = Path(args.update_best_known)
        table, changed = best_known.update(best_known.load(path), rows)
        best_known.save(path, table)
        err.print(f"best known: {len(changed)} entries changed in {escape(str(path))}")
    return EXIT_OK if not lost else 1


def _plot(rows: list[dict[str, Any]], out: Path, names: list[str]) -> int:
    from schedopt.bench import report

    err = err_console()
    if not rows:
        raise CliError(f"no rows of {', '.join(names)} in {out}: run the suites first", 1)
    paths = report.write_scale(rows, out.with_suffix(""), " + ".join(names))
    for path in paths:
        err.print(f"wrote {escape(str(path))}")
    return EXIT_OK


__all__ = ["add_bench_arguments", "run_bench"]
