"""``schedopt solve``: solve an instance file within a wall-clock limit and show the answer."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Iterator

from rich.markup import escape

import schedopt
import schedopt.cli.args as cli_args
from schedopt.core.registry import problem_of
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, DeadlineReached

from .common import (
    EXIT_INTERNAL,
    EXIT_NO_SOLUTION,
    EXIT_USAGE,
    STATUS_EXIT,
    CliError,
    check_outputs,
    err_console,
    load,
    out_console,
    write_json,
    write_plot,
)
from .progress import add_progress_argument, display
from .report import render_result, result_json, solution_json


def add_solve_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="instance JSON file")
    p.add_argument(
        "--method",
        default="auto",
        help="auto | cpsat | milp:highs | milp:cbc | heuristic:<name> (default: auto)",
    )
    p.add_argument(
        "--time-limit",
        type=cli_args.time_limit,
        default=10.0,
        metavar="S",
        help="wall-clock limit in seconds for the whole command from its process's start "
        "(Python's start-up and imports included, where the system says when that was: "
        "Linux), loading the file included: a file too large to load in time, or a first "
        "import that would not end in it (the file functions, the problem, CP-SAT), is refused "
        "(exit 5); > 0 and at most a week (default: 10)",
    )
    cli_args.add_seed(p, f"random seed, 0..{cli_args.MAX_SEED} (0)")
    p.add_argument(
        "--threads",
        type=cli_args.threads,
        default=1,
        metavar="N",
        help=f"solver threads, 1..{cli_args.MAX_THREADS} (1)",
    )
    p.add_argument(
        "--gap",
        type=cli_args.gap,
        default=0.0,
        metavar="G",
        help="relative MIP gap in [0, 1) at which OPTIMAL may be claimed (default: 0, exact)",
    )
    p.add_argument(
        "--tuned",
        metavar="PARAMS.json",
        help="heuristic parameters saved by `schedopt tune --save` (default: the shipped ones)",
    )
    cli_args.add_params(p, "the method")
    p.add_argument(
        "--out", metavar="SOLUTION.json", help="write the solution as JSON (checked first)"
    )
    p.add_argument("--plot", metavar="PLAN.svg", help="draw the decision as an SVG picture")
    p.add_argument("--json", action="store_true", help="print one JSON object, nothing else")
    p.add_argument("--verbose", action="store_true", help="show the solver's raw log")
    add_progress_argument(p)


#: Less time than this left after loading: the solve is not started (exit 5).
MIN_SOLVE_S = 0.05


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send everything written to stdout (Python and C level) to stderr for a while.

    Solver back-ends log to file descriptor 1 when ``--verbose``; with ``--json`` stdout must
    hold the JSON document and nothing else.
    """
    sys.stdout.flush()
    saved = None
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:
        saved = None
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def _loading_took_the_time(args: argparse.Namespace, why: str, load_s: float) -> int:
    """Exit 5 (no solution) when starting or loading the file used the time limit: said, not
    hidden."""
    if args.json:
        timing = {"time_limit_s": args.time_limit, "start_s": _start_s(args), "load_s": load_s}
        doc = {"status": Status.NO_SOLUTION.value, "explanation": why, "timing": timing}
        write_json(doc)
    else:
        err_console().print(f"no solution: {escape(why)}", soft_wrap=True)
    return EXIT_NO_SOLUTION


def _start_s(args: argparse.Namespace) -> float:
    """What went before ``main`` of the limit: Python's start-up and the imports (app.py)."""
    return float(getattr(args, "start_s", 0.0))


def run_solve(args: argparse.Namespace) -> int:
    # --time-limit covers the whole command from its process's start (app.main, clock.py):
    # Python's start-up, the imports and loading the file included; what they took is not the
    # solver's.
    started = getattr(args, "started", time.perf_counter())
    deadline = Deadline(started + args.time_limit)
    check_outputs(args.out, args.plot)
    if deadline.remaining() < MIN_SOLVE_S:  # the start-up alone used the limit (a busy machine)
        why = (
            f"Python's start-up and the imports took {_start_s(args):.1f} s of the "
            f"{args.time_limit:g} s time limit; {args.file} was not loaded"
        )
        return _loading_took_the_time(args, why, time.perf_counter() - started)
    try:
        inst = load(args.file, deadline)
    except DeadlineReached as stop:
        return _loading_took_the_time(args, str(stop), time.perf_counter() - started)
    load_s = time.perf_counter() - started
    if deadline.remaining() < MIN_SOLVE_S:
        why = (
            f"loading {args.file} took {load_s:.1f} s of the {args.time_limit:g} s time limit "
            f"(Python's start-up and the imports {_start_s(args):.1f} s of it); no time was left "
            "to solve"
        )
        return _loading_took_the_time(args, why, load_s)
    limit = deadline.remaining()
    spec = problem_of(inst)
    if args.method != "auto":
        spec.method(args.method)  # unknown names fail here, before any work
    if args.plot and spec.plot is None:
        raise CliError(f"{spec.name} has no plot yet", EXIT_USAGE)
    kwargs = {
        "time_limit_s": limit,
        "seed": args.seed,
        "threads": args.threads,
        "mip_gap": args.gap,
        "verbose": args.verbose,
        "tuned": args.tuned,
        "params": dict(args.param) or None,
    }
    guard = _stdout_to_stderr() if args.json else contextlib.nullcontext()
    with guard, display(args) as on_progress:
        result = schedopt.solve(inst, args.method, **kwargs, on_progress=on_progress)
    # The result is shown before any file is written: should a write still fail (the disk
    # filled up since the check above), the answer is not lost with it.
    if args.json:
        doc = result_json(result, solution=False)
        # The command's own limit, and what the start-up and loading took of it, both from the
        # process's start (the solver had the rest).
        doc["timing"].update(time_limit_s=args.time_limit, start_s=_start_s(args), load_s=load_s)
        write_json(doc, raw={"solution": solution_json(result)})
    else:
        render_result(out_console(), spec, inst, result)
    if args.out:
        if result.solution is not None:
            schedopt.dump(result.solution, args.out)
            if not args.json:
                err_console().print(f"wrote the solution to {escape(args.out)}")
        else:
            err_console().print(f"no solution to write to {escape(args.out)}")
    if args.plot and result.solution is not None:
        write_plot(spec, inst, result.solution, args.plot, quiet=args.json)
    return STATUS_EXIT.get(result.status, EXIT_INTERNAL)
