"""The ``schedopt`` command line: solve, validate, generate, schema, export, methods, info, plot,
tune.

Every sub-command is a thin layer over the library API (``schedopt.load``, ``schedopt.solve``,
the problem registry); nothing here knows how a model is built, and a problem's decision table
is its own ``ProblemSpec.render``. ``main(argv)`` returns the exit code instead of exiting, so
tests and other programs can call it directly.

Layout: :mod:`.commands` is the table of sub-commands, :mod:`.app` builds the parser from it and
runs ``main``; one module a command or group of small commands (:mod:`.solve`,
:mod:`.validate`, :mod:`.catalog`, :mod:`.info`, :mod:`.tune`); :mod:`.common` holds the exit
codes and output helpers, :mod:`.args` the argument types and :mod:`.report` the view of a
Result.
"""

from .app import build_parser, main
from .common import (
    EXIT_INFEASIBLE,
    EXIT_INTERNAL,
    EXIT_INVALID,
    EXIT_NO_SOLUTION,
    EXIT_OK,
    EXIT_USAGE,
    EXIT_VALIDATION_FAILED,
    CliError,
)

__all__ = [
    "EXIT_INFEASIBLE",
    "EXIT_INTERNAL",
    "EXIT_INVALID",
    "EXIT_NO_SOLUTION",
    "EXIT_OK",
    "EXIT_USAGE",
    "EXIT_VALIDATION_FAILED",
    "CliError",
    "build_parser",
    "main",
]
