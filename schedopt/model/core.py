"""The backend-neutral model: variables keyed by domain tuples, rows in bulk, lexicographic levels.

A problem states its formulation once, as a :class:`Model`; the emitters (``emit_cpsat``,
``emit_highs``, ``emit_pulp``) hand it to a solver. Rows are kept as CSR arrays (row starts,
column indices, coefficients, lower and upper bounds), one :class:`RowBlock` per call, each
tagged with the formulation's constraint id (``"C3"``): never as per-term Python objects.

Two things differ between back-ends on purpose, and both are declared here, not in an emitter:
- CP-SAT has integers only. A row or level whose coefficients are not integers declares the
  factor that makes them so (``cpsat_scale``); a continuous variable declares the grid CP-SAT
  uses for it (``Vars.cpsat_scale``: the CP-SAT variable is that many times the real one).
  A scale need not be an integer itself (a grid of 0.37 µs is a scale of 1/0.37): only the
  scaled coefficients must be. The CP-SAT emitter refuses anything else rather than round
  silently.
- A block may be meant for one kind of back-end only (``RowBlock.backends``), for a
  discretisation that differs on purpose (moe's share grid). Such a block says why.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from schedopt.core.stopping import Deadline, Ticker

from .terms import (
    Backend,
    Expr,
    Key,
    Level,
    RowBlock,
    Shape,
    VarKind,
    Vars,
)


class Rows:
    """Collects rows one at a time into flat lists, handed to the model as one block."""

    def __init__(self, model: Model, cid: str, **block_options: object):
        self._model, self._cid, self._options = model, cid, block_options
        self._starts, self._cols, self._coefs = [0], [], []  # type: ignore[var-annotated]
        self._lo: list[float] = []
        self._hi: list[float] = []

    def add(
        self,
        cols: Iterable[int],
        coefs: Iterable[float],
        lo: float = -math.inf,
        hi: float = math.inf,
    ) -> None:
        self._cols.extend(cols)
        self._coefs.extend(coefs)
        if len(self._cols) != len(self._coefs):
            raise ValueError(
                f"{self._cid}: a row with {len(self._cols)} columns and "
                f"{len(self._coefs)} coefficients"
            )
        self._starts.append(len(self._cols))
        self._lo.append(lo)
        self._hi.append(hi)

    def __enter__(self) -> Rows:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None and self._lo:
            self._model.add_rows(
                self._cid,
                self._starts,
                self._cols,
                self._coefs,
                self._lo,
                self._hi,
                **self._options,  # type: ignore[arg-type]
            )


@dataclass(frozen=True)
class Built:
    """A problem's model for one instance and the data it was built from; a problem's
    ``build_model`` returns a subclass that adds its variable blocks (``x: Vars``, ...)."""

    model: Model
    data: Any


class Model:
    """A formulation, written once: variables, row blocks and lexicographic levels."""

    def __init__(self, name: str, deadline: Deadline | None = None):
        self.name = name
        self.vars: list[Vars] = []
        self.blocks: list[RowBlock] = []
        self.levels: list[Level] = []
        self._lb: list[np.ndarray] = []
        self._ub: list[np.ndarray] = []
        self.num_cols = 0
        self.tick = Ticker(deadline, f"building the {name} model")

    # --- variables ------------------------------------------------------------------------
    def add_vars(
        self,
        name: str,
        keys: Iterable[Key],
        kind: VarKind = VarKind.BINARY,
        lb: float | Sequence[float] | np.ndarray = 0.0,
        ub: float | Sequence[float] | np.ndarray = 1.0,
        cpsat_scale: float | None = None,
        cpsat_ub: float | Sequence[float] | np.ndarray | None = None,
    ) -> Vars:
        keys = tuple(keys)
        n = len(keys)
        index = {k: self.num_cols + i for i, k in enumerate(keys)}
        if len(index) != n:
            raise ValueError(f"variables {name}: duplicate keys")
        lower = np.broadcast_to(np.asarray(lb, dtype=np.float64), (n,)).copy()
        upper = np.broadcast_to(np.asarray(ub, dtype=np.float64), (n,)).copy()
        if kind is VarKind.BINARY:
            lower, upper = np.maximum(lower, 0.0), np.minimum(upper, 1.0)
        cp_ub = None
        if cpsat_ub is not None:
            cp_ub = np.broadcast_to(np.asarray(cpsat_ub, dtype=np.float64), (n,)).copy()
        block = Vars(name, self.num_cols, keys, kind, index, cpsat_scale, cp_ub)
        self.vars.append(block)
        self._lb.append(lower)
        self._ub.append(upper)
        self.num_cols += n
        return block

    @property
    def lb(self) -> np.ndarray:
        return np.concatenate(self._lb) if self._lb else np.zeros(0)

    @property
    def ub(self) -> np.ndarray:
        return np.concatenate(self._ub) if self._ub else np.zeros(0)

    def kinds(self) -> np.ndarray:
        """Per column: 0 continuous, 1 integer (binaries included)."""
        return (
            np.concatenate(
                [
                    np.full(len(v), v.kind is not VarKind.CONTINUOUS, dtype=np.int8)
                    for v in self.vars
                ]
            )
            if self.vars
            else np.zeros(0, dtype=np.int8)
        )

    def block_of(self, col: int) -> Vars:
        for v in self.vars:
            if v.start <= col < v.start + len(v):
                return v
        raise IndexError(col)

    # --- rows -----------------------------------------------------------------------------
    def add_rows(
        self,
        cid: str,
        starts: Sequence[int] | np.ndarray,
        cols: Sequence[int] | np.ndarray,
        coefs: Sequence[float] | np.ndarray,
        lo: Sequence[float] | np.ndarray | float,
        hi: Sequence[float] | np.ndarray | float,
        *,
        shape: Shape = Shape.LINEAR,
        cpsat_scale: float = 1,
        backends: Iterable[Backend] = tuple(Backend),
    ) -> RowBlock:
        starts_a = np.asarray(starts, dtype=np.int64)
        n = len(starts_a) - 1
        block = RowBlock(
            cid,
            starts_a,
            np.asarray(cols, dtype=np.int64),
            np.asarray(coefs, dtype=np.float64),
            np.broadcast_to(np.asarray(lo, dtype=np.float64), (n,)).copy(),
            np.broadcast_to(np.asarray(hi, dtype=np.float64), (n,)).copy(),
            shape,
            cpsat_scale,
            frozenset(backends),
        )
        if len(block.cols) != len(block.coefs) or (n >= 0 and starts_a[-1] != len(block.cols)):
            raise ValueError(f"{cid}: row starts, columns and coefficients disagree")
        block = _sum_repeated_columns(block)
        self.blocks.append(block)
        self.tick()
        return block

    def rows(self, cid: str, **block_options: object) -> Rows:
        """``with model.rows("C3") as rows: rows.add(cols, coefs, hi=cap)`` — one block."""
        return Rows(self, cid, **block_options)

    # --- typed helpers (with their MILP linearisations) -----------------------------------
    def at_most_one(self, cid: str, groups: Iterable[Sequence[int]]) -> None:
        """Σ x ≤ 1 for each group of binaries (CP-SAT: add_at_most_one)."""
        self._ones(cid, groups, Shape.AT_MOST_ONE, -math.inf)

    def exactly_one(self, cid: str, groups: Iterable[Sequence[int]]) -> None:
        """Σ x = 1 for each group of binaries (CP-SAT: add_exactly_one)."""
        self._ones(cid, groups, Shape.EXACTLY_ONE, 1.0)

    def _ones(self, cid: str, groups: Iterable[Sequence[int]], shape: Shape, lo: float) -> None:
        with self.rows(cid, shape=shape) as rows:
            for g in groups:
                rows.add(g, [1.0] * len(g), lo, 1.0)

    def implications(self, cid: str, pairs: Iterable[tuple[int, int]]) -> None:
        """a ⇒ b for binaries, linearised as a − b ≤ 0 (CP-SAT: add_implication)."""
        with self.rows(cid, shape=Shape.IMPLICATION) as rows:
            for a, b in pairs:
                rows.add((a, b), (1.0, -1.0), hi=0.0)

    def at_least_each(self, cid: str, top: int, exprs: Iterable[Expr], **options: object) -> None:
        """x[top] ≥ expr for each expression: with ``top`` minimised, the max-equality
        top = max(exprs) (the epigraph linearisation both back-ends use)."""
        with self.rows(cid, **options) as rows:
            for e in exprs:
                rows.add([*e.cols.tolist(), top], [*e.coefs.tolist(), -1.0], hi=-e.constant)

    # --- levels ---------------------------------------------------------------------------
    def add_level(self, level: Level) -> Level:
        self.levels.append(level)
        return level

    # --- checks ---------------------------------------------------------------------------
    def violated_rows(
        self, x: np.ndarray, tol: float = 1e-6, backend: Backend | None = None
    ) -> list[str]:
        """The constraint ids of rows (and bounds) that ``x`` breaks, for tests and checks;
        with ``backend``, only the blocks that back-end receives."""
        out = []
        if np.any(x < self.lb - tol) or np.any(x > self.ub + tol):
            out.append("bounds")
        for b in self.blocks:
            if backend is not None and backend not in b.backends:
                continue
            act = b.activity(x)
            if np.any(act < b.lo - tol * np.maximum(1, abs(b.lo))) or np.any(
                act > b.hi + tol * np.maximum(1, abs(b.hi))
            ):
                out.append(b.cid)
        return out

    def size(self) -> tuple[int, int, int]:
        """Columns, rows and nonzeros."""
        return (
            self.num_cols,
            sum(len(b) for b in self.blocks),
            sum(len(b.cols) for b in self.blocks),
        )


def _sum_repeated_columns(block: RowBlock) -> RowBlock:
    """The block with a column named twice in one row written once, its coefficients added.

    Every back-end then reads the same row: CP-SAT adds repeated terms, PuLP kept only the last
    one, and HiGHS refused the whole block (``addRows`` returned an error, found by the cosched
    model). Rows whose columns are already distinct, the usual case, pass through unchanged;
    the check sorts the block's entries once (0.15 s on MoE's 1.7 M nonzeros)."""
    n = len(block)
    if len(block.cols) < 2 or block.shape is not Shape.LINEAR:
        return block
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(block.starts))
    key = rows * (int(block.cols.max()) + 1) + block.cols
    if np.all(key[1:] > key[:-1]):
        return block  # every row's columns ascending: none repeats
    order = np.argsort(key, kind="stable")
    key = key[order]
    first = np.concatenate([[True], key[1:] != key[:-1]])
    if first.all():
        return block
    group = np.cumsum(first) - 1
    coefs = np.bincount(group, weights=block.coefs[order])
    kept_rows = rows[order][first]
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(kept_rows, minlength=n), out=starts[1:])
    return replace(block, starts=starts, cols=block.cols[order][first], coefs=coefs)
