"""The backend-neutral model layer: a formulation written once, emitted to every back-end.

See ``docs/adding-a-problem.md``. ``core`` holds the model (variables, bulk rows tagged by
constraint id, levels); ``emit_*`` the back-ends; ``lexico`` the one lexicographic driver;
``method`` turns a problem's ``prepare`` into its ``cpsat``/``milp:highs``/``milp:cbc`` methods.
"""

from .core import Built, Model
from .lexico import Hooks, LexResult, solve_levels
from .method import ExactBackend, Formulated, exact_methods, exact_runner
from .terms import (
    CPSAT_ONLY,
    MILP_ONLY,
    Backend,
    Expr,
    Level,
    RowBlock,
    Sense,
    Shape,
    VarKind,
    Vars,
)

__all__ = [
    "CPSAT_ONLY",
    "MILP_ONLY",
    "Backend",
    "Built",
    "ExactBackend",
    "Expr",
    "Formulated",
    "Hooks",
    "Level",
    "LexResult",
    "Model",
    "RowBlock",
    "Sense",
    "Shape",
    "VarKind",
    "Vars",
    "exact_methods",
    "exact_runner",
    "solve_levels",
]
