"""The exact answer a decision is compared with, solved once per instance and kept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schedopt.core import Result, Status, solve
from schedopt.core.registry import problem_of

#: The time limit of the exact solve behind a proven check or an optimality ratio. Runs are
#: ``deterministic=True``: the same instance gets the same answer on a busy machine.
CHECK_LIMIT_S = 20.0
_KEPT = 256


@dataclass(frozen=True)
class Reference:
    """The exact model's answer on one instance."""

    result: Result[Any]

    @property
    def feasible(self) -> bool:
        """A valid decision exists: the exact model found one (validated by ``solve``)."""
        return self.result.status.has_solution

    @property
    def infeasible(self) -> bool:
        """Proven: the solver showed that no valid decision exists."""
        return self.result.status is Status.INFEASIBLE

    @property
    def proven_optimal(self) -> bool:
        return self.result.status is Status.OPTIMAL


_cache: dict[str, Reference] = {}


def reference(instance: Any, time_limit_s: float = CHECK_LIMIT_S) -> Reference:
    """Solve ``instance`` with the problem's exact ``auto`` route, deterministically, once."""
    key = f"{problem_of(instance).name}:{instance.model_dump_json()}"
    if key not in _cache:
        if len(_cache) >= _KEPT:
            _cache.pop(next(iter(_cache)))
        _cache[key] = Reference(solve(instance, time_limit_s=time_limit_s, deterministic=True))
    return _cache[key]
