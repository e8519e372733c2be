"""One sub-package per decision problem; importing this registers the built-in ones by name.

Registration is explicit and happens here only: each problem package defines its ``SPEC``
and registers nothing itself, and ``schedopt.core`` never imports a problem. A built-in problem
is registered with a loader, and its package (its models, and through them the solvers) is
imported on first use: ``get_problem``, ``problem_of``, ``schedopt.load`` of one of its files.
``import schedopt`` imports this package, so the built-in problems are always known to
``schedopt.solve``, ``schedopt.load`` and the CLI. Problem packages never import one another
(an import-linter contract in pyproject.toml).
"""

from collections.abc import Callable

from schedopt.core.registry import ProblemSpec, register_problem_loader

# One loader a problem, each importing its package when first called (import-linter sees these
# imports as the dependencies they are).


def _admission() -> ProblemSpec:
    from . import admission

    return admission.SPEC


def _fairshare() -> ProblemSpec:
    from . import fairshare

    return fairshare.SPEC


def _moe_placement() -> ProblemSpec:
    from . import moe_placement

    return moe_placement.SPEC


def _timeshare() -> ProblemSpec:
    from . import timeshare

    return timeshare.SPEC


def _cosched() -> ProblemSpec:
    from . import cosched

    return cosched.SPEC


def _reconfig() -> ProblemSpec:
    from . import reconfig

    return reconfig.SPEC


#: The problems that ship with schedopt: name → loader of its ``SPEC``.
BUILTIN: dict[str, Callable[[], ProblemSpec]] = {
    "admission": _admission,
    "fairshare": _fairshare,
    "moe_placement": _moe_placement,
    "timeshare": _timeshare,
    "cosched": _cosched,
    "reconfig": _reconfig,
}

for _name, _load in BUILTIN.items():
    register_problem_loader(_name, _load, package=f"{__name__}.{_name}")
del _name, _load

__all__ = ["BUILTIN"]
