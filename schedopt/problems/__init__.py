"""One sub-package per decision problem; importing this registers the built-in ones.

Registration is explicit and happens here only: each problem package defines its ``SPEC``
and registers nothing itself, and ``schedopt.core`` never imports a problem. ``import schedopt``
imports this package, so the built-in problems are always known to ``schedopt.solve``,
``schedopt.load`` and the CLI. Problem packages never import one another (an import-linter
contract in pyproject.toml).
"""

from schedopt.core.registry import ProblemSpec, register_problem

from . import admission, cosched, fairshare, moe_placement, reconfig, timeshare

#: The problems that ship with schedopt, in registration order.
BUILTIN: tuple[ProblemSpec, ...] = (
    admission.SPEC,
    fairshare.SPEC,
    moe_placement.SPEC,
    timeshare.SPEC,
    cosched.SPEC,
    reconfig.SPEC,
)

for _spec in BUILTIN:
    register_problem(_spec)
del _spec

__all__ = [
    "BUILTIN",
    "admission",
    "cosched",
    "fairshare",
    "moe_placement",
    "reconfig",
    "timeshare",
]
