"""The exceptions schedopt raises.

Infeasibility and time-outs are *statuses* on a :class:`~schedopt.core.result.Result`, not
exceptions. Exceptions are for bad input (:class:`InvalidInstanceError`), for callers that opt in
to raising on a bad status (:class:`InfeasibleError` from ``Result.raise_for_status()``), and for
bugs (:class:`ValidationFailedError`: a method produced a solution the independent validator
rejects; it is never returned to the caller).
"""

from __future__ import annotations

from collections.abc import Sequence


class SchedoptError(Exception):
    """Root of every exception schedopt raises on purpose."""


class InvalidInstanceError(SchedoptError, ValueError):
    """Input that cannot be solved as given.

    ``path`` names the offending field in the instance file's own terms (``jobs[3].deadline_s``);
    ``reason`` says what is wrong with it. Several problems found at once are kept in ``problems``.
    """

    def __init__(self, path: str, reason: str, problems: Sequence[tuple[str, str]] = ()):
        self.path = path
        self.reason = reason
        self.problems: tuple[tuple[str, str], ...] = tuple(problems) or ((path, reason),)
        if len(self.problems) == 1:
            message = f"{path}: {reason}" if path else reason
        else:
            lines = [f"{p}: {r}" if p else r for p, r in self.problems]
            message = f"{len(lines)} problems in the instance:\n  " + "\n  ".join(lines)
        super().__init__(message)


class FieldProblems(ValueError):
    """Cross-field problems found inside a pydantic model validator, as ``(path, reason)`` pairs.

    Paths are relative to the model being validated. Pydantic keeps this exception in its error's
    ``ctx["error"]``; :func:`schedopt.core.pydantic_errors.invalid_instance_error` recovers every
    problem with its full path from there.
    """

    def __init__(self, problems: Sequence[tuple[str, str]]):
        self.problems: tuple[tuple[str, str], ...] = tuple(problems)
        super().__init__("; ".join(f"{path}: {reason}" for path, reason in self.problems))


class ModelTooLargeError(InvalidInstanceError):
    """The exact model of this instance would not fit in memory; refused before building it."""


class UnknownMethodError(SchedoptError, ValueError):
    """A ``method=`` name that no registered back-end answers to."""


class UnknownProblemError(SchedoptError, ValueError):
    """A problem name that no registered problem package answers to."""


class InfeasibleError(SchedoptError):
    """Raised by ``Result.raise_for_status()`` when the instance was proven infeasible."""

    def __init__(self, explanation: str):
        self.explanation = explanation
        super().__init__(explanation)


class NoSolutionError(SchedoptError):
    """Raised by ``Result.raise_for_status()`` when no solution was found within the limits."""


class ValidationFailedError(SchedoptError, AssertionError):
    """A back-end produced a solution that the independent validator rejects: a schedopt bug."""

    def __init__(self, method: str, violations: Sequence[object]):
        self.method = method
        self.violations = tuple(violations)
        lines = "\n  ".join(str(v) for v in self.violations)
        super().__init__(
            f"method {method!r} produced a solution the validator rejects (a bug in schedopt; "
            f"please report it with the instance):\n  {lines}"
        )
