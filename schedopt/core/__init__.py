"""Problem-independent machinery: statuses, options, results, errors, registry, ``solve``."""

from .errors import (
    InfeasibleError,
    InvalidInstanceError,
    ModelTooLargeError,
    NoSolutionError,
    SchedoptError,
    UnknownMethodError,
    UnknownProblemError,
    ValidationFailedError,
)
from .options import TIME_LIMIT_OVERHEAD_S, SolveOptions
from .registry import MethodKind, MethodSpec, Outcome, ProblemSpec, get_problem, problem_names
from .result import ObjectiveTerm, Result, Sense, Violation
from .solve import solve
from .status import Status
from .stopping import Deadline

__all__ = [
    "TIME_LIMIT_OVERHEAD_S",
    "Deadline",
    "InfeasibleError",
    "InvalidInstanceError",
    "MethodKind",
    "MethodSpec",
    "ModelTooLargeError",
    "NoSolutionError",
    "ObjectiveTerm",
    "Outcome",
    "ProblemSpec",
    "Result",
    "SchedoptError",
    "Sense",
    "SolveOptions",
    "Status",
    "UnknownMethodError",
    "UnknownProblemError",
    "ValidationFailedError",
    "Violation",
    "get_problem",
    "problem_names",
    "solve",
]
