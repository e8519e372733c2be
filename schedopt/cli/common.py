"""What every sub-command shares: exit codes, the error it reports, consoles, JSON and number
formatting, loading files and checking output paths up front."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

import schedopt
import schedopt.cli.args as cli_args
from schedopt.core.errors import InvalidInstanceError
from schedopt.core.gates import import_in_time
from schedopt.core.registry import ProblemSpec
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline

# --- exit codes -------------------------------------------------------------------------------
#: Success: the solve found a solution (OPTIMAL or FEASIBLE), or the command did its job.
EXIT_OK = 0
#: An unexpected error inside schedopt (rerun with ``--debug`` for the traceback).
EXIT_INTERNAL = 1
#: Bad command line: argparse's own errors, unknown problem or method names.
EXIT_USAGE = 2
#: The input file is not a valid instance or solution (``InvalidInstanceError``).
EXIT_INVALID = 3
#: ``validate`` found violations, or ``solve`` proved the instance INFEASIBLE.
EXIT_INFEASIBLE = 4
EXIT_VALIDATION_FAILED = EXIT_INFEASIBLE
#: ``solve`` reached its limits with no solution and no proof of infeasibility.
EXIT_NO_SOLUTION = 5

STATUS_EXIT = {
    Status.OPTIMAL: EXIT_OK,
    Status.FEASIBLE: EXIT_OK,
    Status.INFEASIBLE: EXIT_INFEASIBLE,
    Status.NO_SOLUTION: EXIT_NO_SOLUTION,
    Status.INVALID: EXIT_INVALID,
}


class CliError(Exception):
    """A failure the CLI reports as one ``error:`` line with a chosen exit code."""

    def __init__(self, message: str, code: int):
        self.code = code
        super().__init__(message)


def check_outputs(*paths: str | None, make_dirs: bool = False) -> None:
    """Fail with a usage error before any work when an output file cannot be written (a result
    computed for minutes must not be lost to a typo in ``--out``)."""
    for path in paths:
        if path:
            why = cli_args.check_writable(path, "cannot write", make_dirs=make_dirs)
            if why:
                raise CliError(why, EXIT_USAGE)


# --- output helpers ---------------------------------------------------------------------------
#: Width of tables when stdout is a file or a pipe (rich would use 80 and squeeze columns).
PIPE_WIDTH = 120


def out_console() -> Console:
    return Console(highlight=False, width=None if sys.stdout.isatty() else PIPE_WIDTH)


def err_console() -> Console:
    return Console(stderr=True, highlight=False)


def _finite(x: float | None) -> float | None:
    return x if x is None or math.isfinite(x) else None


def _jsonable(obj: Any) -> Any:
    """Plain JSON values: non-finite floats become null, unknown objects their ``str``."""
    if isinstance(obj, float):
        return _finite(obj)
    if isinstance(obj, bool | int | str) or obj is None:
        return obj
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "value") and isinstance(obj.value, str | int | float):  # enums
        return _jsonable(obj.value)
    return str(obj)


def write_json(doc: Any, raw: Mapping[str, str] | None = None) -> None:
    """Write ``doc`` as indented JSON; ``raw`` adds keys whose values are JSON text already
    (a large solution serialized by pydantic, 20× faster than through the dict)."""
    text = json.dumps(_jsonable(doc), indent=2, allow_nan=False)
    if raw:
        extra = ",\n".join(f"  {json.dumps(k)}: {v}" for k, v in raw.items())
        text = f"{text[:-2]},\n{extra}\n}}" if text != "{}" else f"{{\n{extra}\n}}"
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}"


def fmt_gap(gap: float | None) -> str:
    return "-" if gap is None else f"{100 * gap:.2f}%"


# --- files ------------------------------------------------------------------------------------
#: CPU seconds of importing the file functions (``schedopt.io``: pydantic and the JSON format)
#: on first use: 0.10-0.13 s at load 5; beside 4 CPU burners (load 5-9) 0.6-3.8 s of wall
#: with reading the file, before any gate (#17, benchmarks/RESULTS.md).
IO_IMPORT_S = 0.15


def load(path: str, deadline: Deadline | None = None) -> Any:
    """The instance in ``path``; with a ``deadline``, the file functions' first import is
    refused (:class:`DeadlineReached`) when it would not end in the time left."""
    subject = f"{Path(path).name} was not loaded: the file functions (pydantic)"
    import_in_time("schedopt.io", IO_IMPORT_S, deadline, subject)
    try:
        return schedopt.load(path, deadline)
    except InvalidInstanceError as err:
        err.file = path  # type: ignore[attr-defined]
        raise


def load_solution(instance: Any, path: str) -> Any:
    try:
        return schedopt.load_solution(instance, path)
    except InvalidInstanceError as err:
        err.file = path  # type: ignore[attr-defined]
        raise


def write_plot(spec: ProblemSpec, inst: Any, sol: Any, path: str, quiet: bool = False) -> None:
    if spec.plot is None:
        raise CliError(f"{spec.name} has no plot yet", EXIT_USAGE)
    Path(path).write_text(spec.plot(inst, sol))
    if not quiet:
        err_console().print(f"wrote the plot to {escape(path)}")
