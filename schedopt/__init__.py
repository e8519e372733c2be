"""schedopt: exact optimization models for scheduling and placement in GPU datacenters.

>>> import schedopt
>>> inst = schedopt.load("instances/admission/small-s0.json")  # doctest: +SKIP
>>> result = schedopt.solve(inst, time_limit_s=5)                  # doctest: +SKIP
>>> print(result.summary())                                       # doctest: +SKIP
"""

from typing import TYPE_CHECKING, Any

# ``schedopt.problems`` registers the built-in problems (admission, fairshare, moe_placement,
# timeshare, cosched, reconfig) by name: importing schedopt is what makes ``solve``, ``load``
# and ``problem_names`` know them. Each problem's package, and the solvers behind it (OR-Tools,
# HiGHS, PuLP), is imported when first used, so ``import schedopt`` stays light
# (tests/test_startup.py); so are the topology (networkx) and the file functions (pydantic),
# through ``__getattr__`` below.
import schedopt.problems  # noqa: F401
from schedopt.core import (
    TIME_LIMIT_OVERHEAD_S,
    InfeasibleError,
    InvalidInstanceError,
    ModelTooLargeError,
    NoSolutionError,
    Result,
    SchedoptError,
    SolveOptions,
    Status,
    UnknownMethodError,
    UnknownProblemError,
    ValidationFailedError,
    Violation,
    get_problem,
    problem_names,
    solve,
)

if TYPE_CHECKING:
    from schedopt.io import dump, load, load_solution, loads
    from schedopt.topology import Cluster

__version__ = "0.1.0"

__all__ = [
    "TIME_LIMIT_OVERHEAD_S",
    "Cluster",
    "InfeasibleError",
    "InvalidInstanceError",
    "ModelTooLargeError",
    "NoSolutionError",
    "Result",
    "SchedoptError",
    "SolveOptions",
    "Status",
    "UnknownMethodError",
    "UnknownProblemError",
    "ValidationFailedError",
    "Violation",
    "__version__",
    "dump",
    "get_problem",
    "load",
    "load_solution",
    "loads",
    "problem_names",
    "solve",
]


def __getattr__(name: str) -> Any:
    """``schedopt.Cluster`` (networkx) and the file functions (pydantic), imported on first
    use."""
    if name == "Cluster":
        from schedopt.topology import Cluster

        return Cluster
    if name in ("dump", "load", "load_solution", "loads"):
        import schedopt.io

        value = globals()[name] = getattr(schedopt.io, name)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
