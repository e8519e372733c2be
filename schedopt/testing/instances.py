"""``instances(problem, size=..., feasible=True, **knobs)``: one hypothesis strategy per problem.

Built on each problem's ``strategies.instances`` (its keyword arguments are the ``knobs``). With
``feasible=True`` every instance drawn has a valid decision, either by construction (see
:data:`BY_CONSTRUCTION`) or by a proven check: the exact model, run by :func:`reference`, found
a decision that the problem's independent validator accepted (instances where it proves
infeasibility, or finds nothing within :data:`CHECK_LIMIT_S`, are filtered out).
"""

from __future__ import annotations

import importlib
from typing import Any

from hypothesis import strategies as st

from schedopt.core import get_problem

from .reference import reference

#: Knobs per problem and size: "tiny" shrinks the problem's strategy, "small" is its default.
SIZES: dict[str, dict[str, dict[str, Any]]] = {
    "admission": {"tiny": {"max_jobs": 3, "max_slots": 2, "max_hosts": 1}},
    "fairshare": {"tiny": {"max_jobs": 2, "max_tenants": 2, "max_hosts": 2}},
    "timeshare": {"tiny": {"max_jobs": 2}},
    "moe_placement": {"tiny": {"max_layers": 1, "max_experts": 2, "max_hosts": 1}},
    "cosched": {"tiny": {"max_jobs": 2, "max_hosts": 1}},
    "reconfig": {"tiny": {"max_hosts": 1, "max_layers": 4}},
}

#: Problems whose drawn instances always have a valid decision, with the knobs that make it so
#: and why; the others are checked by the exact model.
BY_CONSTRUCTION: dict[str, tuple[dict[str, Any], str]] = {
    # without jobs admitted earlier (C5), rejecting every SLO job and idling every GPU is valid
    "admission": ({"allow_admitted": False}, "no job admitted earlier: rejecting all is valid"),
    # no hard guarantee the strategy could draw: all fractions 0 is valid
    "timeshare": ({}, "all fractions 0 is valid (no hard constraint from below)"),
}


def instances(
    problem: str, *, size: str = "small", feasible: bool = True, **knobs: Any
) -> st.SearchStrategy[Any]:
    """Small valid instances of ``problem`` (a hypothesis strategy).

    ``size`` is "tiny" or "small". ``knobs`` go to the problem's own
    ``schedopt.problems.<problem>.strategies.instance_dicts`` (e.g. ``max_jobs``).

    ``feasible=True`` (the default): every instance has a valid decision. admission and
    timeshare by construction (admission draws no job admitted earlier, ``allow_admitted=False``,
    unless you pass ``allow_admitted=True``, which brings the proven check); fairshare,
    moe_placement, cosched and reconfig by a proven check: the exact model found a decision
    that the independent validator accepted (a few seconds at most per instance; the result is
    kept for :func:`schedopt.testing.optimality_ratio`). ``feasible=False``: the problem's
    strategy as it is, where some instances have no valid decision at all.
    """
    spec = get_problem(problem)  # UnknownProblemError names the known ones
    if size not in ("tiny", "small"):
        raise ValueError(f"size must be 'tiny' or 'small', got {size!r}")
    strategies = importlib.import_module(f"schedopt.problems.{spec.name}.strategies")
    constructive, _ = BY_CONSTRUCTION.get(spec.name, (None, ""))
    kwargs = {**SIZES.get(spec.name, {}).get(size, {}), **knobs}
    if not feasible:
        return strategies.instances(**kwargs)
    if constructive is not None and all(kwargs.get(k, v) == v for k, v in constructive.items()):
        return strategies.instances(**{**constructive, **kwargs})
    return strategies.instances(**kwargs).filter(lambda inst: reference(inst).feasible)
