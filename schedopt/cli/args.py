"""Argument types and up-front checks for the ``schedopt`` command line.

Every value is checked when the command line is parsed, against the range the solvers accept,
so that a bad value is a usage error (exit 2) with a clear message before any work starts, never
an "internal error" from deep inside a solver after minutes of solving.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from schedopt.core.options import MAX_SEED, MAX_THREADS, MAX_TIME_LIMIT_S
from schedopt.core.registry import get_problem, problem_names


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def time_limit(text: str) -> float:
    value = _number(text)
    if not (0 < value <= MAX_TIME_LIMIT_S):  # also false for nan
        raise argparse.ArgumentTypeError(
            f"must be a number of seconds in (0, {MAX_TIME_LIMIT_S:g}] (got {text})"
        )
    return value


def gap(text: str) -> float:
    value = _number(text)
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"a relative gap is in [0, 1) (got {text})")
    return value


def int_in(low: int, high: int) -> Callable[[str], int]:
    """An integer in ``[low, high]``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be an integer in [{low}, {high}] (got {text})")
        return value

    return parse


class SizeAction(argparse._StoreAction):
    """``--size``, whose help lists every problem's sizes (``ProblemSpec.sizes``), read from
    the registry only when the help is shown (a size a problem lacks is refused at run)."""

    @property
    def help(self) -> str:
        sizes = "; ".join(f"{n}: {', '.join(get_problem(n).sizes)}" for n in problem_names())
        return f"instance size, smallest first ({sizes}) (default: {self.default})"

    @help.setter
    def help(self, value: str | None) -> None:  # argparse sets it in __init__
        pass


seed = int_in(0, MAX_SEED)
threads = int_in(1, MAX_THREADS)


def add_int(
    parser: argparse.ArgumentParser, flag: str, low: int, high: int, default: int, help_: str
) -> None:
    """An integer option in ``[low, high]``."""
    parser.add_argument(flag, type=int_in(low, high), default=default, metavar="N", help=help_)


def add_seed(
    parser: argparse.ArgumentParser, help_: str, flag: str = "--seed", default: int = 0
) -> None:
    """A seed option: an integer in ``[0, MAX_SEED]``."""
    parser.add_argument(flag, type=seed, default=default, metavar="N", help=help_)


def check_writable(path: str | os.PathLike[str], what: str, make_dirs: bool = False) -> str | None:
    """Why ``path`` cannot be written (None when it can), checked by creating and removing a
    temporary file where it will go: permission bits alone say nothing when running as root or
    on a read-only mount. Nothing is left behind and an existing file is not touched. With
    ``make_dirs`` the missing directories of ``path`` will be created by the writer, so the
    nearest existing one is checked instead (and nothing is created here)."""
    target = Path(path)
    if target.is_dir():
        return f"{what} {path}: is a directory"
    parent = target.parent
    if make_dirs:
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
    if not parent.exists():
        return f"{what} {path}: directory {parent} does not exist"
    if not parent.is_dir():
        return f"{what} {path}: {parent} is not a directory"
    if target.exists() and not os.access(target, os.W_OK):
        return f"{what} {path}: not writable"
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".schedopt-probe-"):
            pass
    except OSError as err:
        return f"{what} {path}: cannot write in {parent} ({err.strerror or err})"
    return None


def param(text: str) -> tuple[str, Any]:
    """``KEY=VALUE``: a method parameter; VALUE is read as JSON (``2``, ``true``, ``[1, 2]``)
    when it is JSON, else kept as text (``process``)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE (got {text!r})")
    try:
        return key.strip(), json.loads(value)
    except ValueError:
        return key.strip(), value


def add_params(parser: argparse.ArgumentParser, what: str) -> None:
    """``--param KEY=VALUE``, repeatable: method parameters (``SolveOptions.params``)."""
    parser.add_argument(
        "--param",
        type=param,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"a method parameter for {what}, repeatable (e.g. --param executor=process "
        "--param workers=2: a decomposition's parts on 2 processes; docs/api.md lists "
        "the parameters each method reads)",
    )


def add_executor(parser: argparse.ArgumentParser, what: str) -> None:
    """``--executor``, ``--jobs`` and ``--address``: where ``what`` runs (schedopt.executor)."""
    from schedopt.executor import EXECUTORS

    parser.add_argument(
        "--executor", choices=EXECUTORS, default="inline", help=f"where {what} run (inline)"
    )
    add_int(parser, "--jobs", 1, 4096, 0, "workers (default: the CPUs, 1 inline)")
    parser.add_argument(
        "--address", help="a Ray cluster's address (else $RAY_ADDRESS, else a local cluster)"
    )
