"""The ``schedopt`` parser, built from the command table, and ``main``: run one command and turn
what it raises into an ``error:`` line and an exit code."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

from rich.markup import escape

import schedopt
from schedopt.core.errors import InvalidInstanceError, UnknownMethodError, UnknownProblemError

from .clock import command_started
from .commands import COMMANDS
from .common import EXIT_INTERNAL, EXIT_INVALID, EXIT_OK, EXIT_USAGE, CliError, err_console
from .ending import end_process
from .pipes import EXIT_BROKEN_PIPE, guarded_stdout
from .terminate import EXIT_TERMINATED, Terminated, sigterm_raises

EPILOG = """\
exit codes:
  0  success (solve: OPTIMAL or FEASIBLE)
  1  internal error (rerun with --debug for the traceback)
  2  usage error (bad arguments, unknown problem or method)
  3  invalid input (the instance or solution file is not valid; every problem is listed)
  4  validation failed (validate) or the instance is proven INFEASIBLE (solve)
  5  no solution found within the time limit (solve)
  130  interrupted (Ctrl-C): stopped at once, workers and temporary files cleaned up
  141  the reader of the output went away (a closed pipe)
  143  terminated (SIGTERM): as on Ctrl-C

examples:
  schedopt generate admission --size small --seed 0 --out small.json
  schedopt info small.json
  schedopt solve small.json --time-limit 10 --out small-sol.json
  schedopt validate small.json small-sol.json
  schedopt methods admission
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="schedopt",
        description="Exact optimisation models (CP-SAT, MILP) and heuristics for scheduling\n"
        "and placement in GPU datacenters. `schedopt COMMAND --help` explains each command.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"schedopt {schedopt.__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an internal error"
    )
    # --debug is accepted after the sub-command too; SUPPRESS keeps the top-level value.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        p = sub.add_parser(
            command.name,
            help=command.help,
            description=command.description,
            epilog="example:\n" + command.example,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            parents=[common],
        )
        command.add_arguments(p)
        p.set_defaults(func=command.run)
    return parser


def _report_invalid(err: InvalidInstanceError) -> None:
    console = err_console()
    for path, reason in err.problems:
        line = f"error: {path}: {reason}" if path else f"error: {reason}"
        console.print(escape(line), soft_wrap=True)
    file = getattr(err, "file", None)
    if file and not any(file in reason for _, reason in err.problems):
        console.print(f"  (in {escape(file)})", soft_wrap=True)


def main(argv: list[str] | None = None) -> int:
    """Run the ``schedopt`` command line with ``argv`` and return the exit code. A reader of
    stdout that stops early (``| head``) does not change it (:mod:`.pipes`).

    ``argv`` None: this process's own command line (the ``schedopt`` script, ``python -m
    schedopt``), whose ``--time-limit`` counts from the process's start, Python's start-up and
    imports included (:mod:`.clock`), and the process ends once the command has its exit code
    (:mod:`.ending`); a list (a program or a test calling ``main``): from this call, and the
    exit code is returned."""
    started = command_started() if argv is None else time.perf_counter()
    try:
        with guarded_stdout():
            code = _main(argv, started)
    except BrokenPipeError:  # a pipe other than stdout's writes (a solver's own output)
        code = EXIT_BROKEN_PIPE
    # the process's own command ends here, without the interpreter's teardown (.ending)
    return code if argv is not None else end_process(code)


def _main(argv: list[str] | None, started: float) -> int:
    """``main`` for a command whose ``--time-limit`` counts from ``started``."""
    main_at = time.perf_counter()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version and argparse's usage errors
        code = exit_.code
        return code if isinstance(code, int) else (EXIT_OK if code is None else EXIT_USAGE)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    args.started = started
    args.start_s = main_at - started  # of the limit, what went before main (start-up, imports)
    try:
        run: Callable[[argparse.Namespace], int] = args.func
        with sigterm_raises():  # cleans up on the way out, as Ctrl-C does
            return run(args)
    except InvalidInstanceError as err:
        _report_invalid(err)
        return EXIT_INVALID
    except (UnknownMethodError, UnknownProblemError) as err:
        err_console().print(f"error: {escape(str(err))}", soft_wrap=True)
        return EXIT_USAGE
    except CliError as err:
        err_console().print(f"error: {escape(str(err))}", soft_wrap=True)
        return err.code
    except KeyboardInterrupt:
        err_console().print("interrupted")
        return 130
    except Terminated:
        err_console().print("terminated")
        return EXIT_TERMINATED
    except Exception as err:
        if args.debug:
            raise
        console = err_console()
        if isinstance(err, OSError):  # writing an output file, typically
            where = f"{err.filename}: " if err.filename else ""
            console.print(f"error: {escape(where + (err.strerror or str(err)))}", soft_wrap=True)
            return EXIT_INTERNAL
        text = str(err).strip()
        first = text.splitlines()[0] if text else ""
        console.print(
            f"error: internal error: {type(err).__name__}: {escape(first)} "
            "(rerun with --debug for the traceback)",
            soft_wrap=True,
        )
        return EXIT_INTERNAL
