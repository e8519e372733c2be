"""Handing tuned heuristic parameters to a solve: the shipped ones, overridden by a user's
``tuned=`` file (``schedopt tune --save``), to the method named and, through
``SolveOptions.tuned``, to the methods that run heuristics inside (``auto``, ``decomp:lp``)."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from .errors import InvalidInstanceError
from .options import SolveOptions
from .registry import ProblemSpec

TunedParams = dict[str, dict[str, Any]]


def tuned_params(spec: ProblemSpec, tuned: str | os.PathLike[str] | None) -> TunedParams:
    """The problem's tuned parameters by heuristic: shipped, overridden by the file ``tuned``."""
    if spec.tuned_params is not None:
        return spec.tuned_params(tuned)
    if tuned is not None:
        raise InvalidInstanceError("tuned", f"{tuned}: {spec.name} has no tunable parameters")
    return {}


def with_tuned(
    spec: ProblemSpec,
    method: str,
    options: SolveOptions,
    tuned: str | os.PathLike[str] | None,
) -> tuple[SolveOptions, TunedParams]:
    """``options`` carrying the tuned parameters, and the parameters themselves."""
    params = tuned_params(spec, tuned)
    if tuned is not None and method in params and not options.params:
        options = replace(options, params=params[method])  # the heuristic named, unless given
    if tuned is not None or options.tuned is None:
        options = replace(options, tuned=params)  # what a method running heuristics reads
    return options, params


__all__ = ["TunedParams", "tuned_params", "with_tuned"]
