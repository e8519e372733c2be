"""The values a model is made of: variable blocks, expressions, levels and row blocks.

Plain data (numpy arrays and enums), shared by the model (``core.py``), the emitters and the
driver; ``core.py`` re-exports every name here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np


class VarKind(str, Enum):
    BINARY = "binary"
    INTEGER = "integer"
    CONTINUOUS = "continuous"


class Sense(str, Enum):
    MINIMIZE = "minimize"
    MAXIMIZE = "maximize"


class Backend(str, Enum):
    """The kinds of back-end a block can be restricted to."""

    CPSAT = "cpsat"
    MILP = "milp"  # HiGHS and CBC: real coefficients


#: A variable's key: a tuple of domain indices or ids, e.g. (job, slot, option).
Key = tuple[Any, ...]

#: ``backends=`` of a block only CP-SAT receives, or only the MILP back-ends (HiGHS, CBC).
CPSAT_ONLY = frozenset({Backend.CPSAT})
MILP_ONLY = frozenset({Backend.MILP})


@dataclass(frozen=True)
class Vars:
    """A block of variables, one column per key; ``vars[key]`` is the key's column."""

    name: str
    start: int
    keys: tuple[Key, ...]
    kind: VarKind
    index: dict[Key, int] = field(repr=False)
    #: CP-SAT only: the CP-SAT variable is ``cpsat_scale`` times this one (continuous blocks).
    cpsat_scale: float | None = None
    #: CP-SAT only: upper bounds for a block the MILP leaves unbounded (CP-SAT needs finite
    #: domains; a bound the rows imply at the optimum can keep a MILP presolve from dropping
    #: the rows, see admission's c).
    cpsat_ub: np.ndarray | None = field(default=None, repr=False)

    def __getitem__(self, key: Key) -> int:
        return self.index[key]

    def __contains__(self, key: object) -> bool:
        return key in self.index

    def __len__(self) -> int:
        return len(self.keys)

    def get(self, key: Key) -> int | None:
        return self.index.get(key)

    def items(self) -> Iterator[tuple[Key, int]]:
        return iter(self.index.items())

    @property
    def cols(self) -> np.ndarray:
        return np.arange(self.start, self.start + len(self.keys))


@dataclass(frozen=True)
class Expr:
    """A sparse linear expression: Σ coefs[i]·x[cols[i]] + constant."""

    cols: np.ndarray
    coefs: np.ndarray
    constant: float = 0.0

    @classmethod
    def of(
        cls, cols: Sequence[int] | np.ndarray, coefs: Sequence[float] | np.ndarray, constant=0.0
    ) -> Expr:
        return cls(
            np.asarray(cols, dtype=np.int64), np.asarray(coefs, dtype=np.float64), float(constant)
        )

    def value(self, x: np.ndarray) -> float:
        return float(self.coefs @ x[self.cols]) + self.constant if len(self.cols) else self.constant

    def __add__(self, other: Expr) -> Expr:
        return Expr(
            np.concatenate([self.cols, other.cols]),
            np.concatenate([self.coefs, other.coefs]),
            self.constant + other.constant,
        )

    def __rmul__(self, factor: float) -> Expr:
        return Expr(self.cols, factor * self.coefs, factor * self.constant)

    @property
    def is_constant(self) -> bool:
        return not len(self.cols) or not np.any(self.coefs)


@dataclass(frozen=True)
class Level:
    """One lexicographic objective. Once solved it is fixed at its value within
    ``tolerance + rel_tolerance·max(1, |value|)`` (half a unit for integer-valued levels).
    ``cpsat_scale`` makes its coefficients integers for CP-SAT (values are divided back)."""

    name: str
    expr: Expr
    sense: Sense
    tolerance: float = 0.0
    rel_tolerance: float = 0.0
    cpsat_scale: float = 1
    #: CP-SAT's own expression where its data are rounded, not scaled (a documented variant:
    #: fair share's efficiencies rounded to 1/EFF_SCALE); None: ``expr`` for every back-end.
    cpsat_expr: Expr | None = None

    def expr_for(self, backend: Backend) -> Expr:
        if backend is Backend.CPSAT and self.cpsat_expr is not None:
            return self.cpsat_expr
        return self.expr

    def slack(self, value: float) -> float:
        return self.tolerance + self.rel_tolerance * max(1.0, abs(value))

    def better(self, a: float, b: float) -> bool:
        """Is ``a`` strictly better than ``b`` beyond this level's tolerance?"""
        gap = a - b if self.sense is Sense.MAXIMIZE else b - a
        return gap > self.slack(b)


class Shape(str, Enum):
    """What a block of rows is, so an emitter may use a native form (CP-SAT's at-most-one)."""

    LINEAR = "linear"
    AT_MOST_ONE = "at_most_one"  # Σ x ≤ 1 over binaries, coefficients 1
    EXACTLY_ONE = "exactly_one"  # Σ x = 1 over binaries, coefficients 1
    IMPLICATION = "implication"  # a − b ≤ 0 over binaries: a ⇒ b


@dataclass(frozen=True)
class RowBlock:
    """Rows ``lo[r] <= Σ coefs·x[cols] <= hi[r]``, row r's terms at ``starts[r]:starts[r+1]``."""

    cid: str
    starts: np.ndarray
    cols: np.ndarray
    coefs: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    shape: Shape = Shape.LINEAR
    cpsat_scale: float = 1
    backends: frozenset[Backend] = frozenset(Backend)

    def __len__(self) -> int:
        return len(self.lo)

    def row(self, r: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.starts[r], self.starts[r + 1]
        return self.cols[a:b], self.coefs[a:b]

    def activity(self, x: np.ndarray) -> np.ndarray:
        """Every row's value at the point ``x`` (for checks and the equivalence test)."""
        # Summed by row index, not np.add.reduceat: reduceat reads one term of an empty row
        # and fails on an empty row at the end (its start == the number of terms; timeshare
        # with a zero-rate last GPU type, #16).
        n = len(self.lo)
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(self.starts))
        return np.bincount(rows, weights=self.coefs * x[self.cols], minlength=n).astype(float)
