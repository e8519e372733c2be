"""One evaluation of a tuning run: a heuristic with given parameters on one instance.

A module-level function so that any executor (in-process, a process pool, Ray) can run it by
reference; its inputs (an instance, a dict of numbers) pickle.
"""

from __future__ import annotations

from typing import Any

from schedopt.core.solve import solve

from .score import Objectives


def evaluate(
    method: str, instance: Any, params: dict[str, Any], *, time_limit_s: float, seed: int
) -> Objectives | None:
    """The objectives ``method`` with ``params`` reaches on ``instance``, or None when it finds
    nothing. Deterministic mode where the problem honours it, so that two evaluations of one
    point agree and a resumed run scores as the first one did."""
    result = solve(
        instance,
        method,
        time_limit_s=time_limit_s,
        params=params,
        seed=seed,
        deterministic=True,
    )
    return result.objectives


__all__ = ["evaluate"]
