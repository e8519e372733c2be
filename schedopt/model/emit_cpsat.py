"""CP-SAT: integers only, scales declared by the formulation, never guessed here.

Column ``c`` of the model is CP-SAT variable ``c`` (created in column order), so a point is
read back in one piece from the response. ``session.cp`` is the native ``CpModel`` and
``session.var(col)`` its variable, for what lives outside the levels (LNS, extra hints).
"""

from __future__ import annotations

import math

import numpy as np
from ortools.sat.python import cp_model

from schedopt.backends import cpsat as backend
from schedopt.core.options import SolveOptions
from schedopt.core.progress import PROGRESS_INTERVAL_S, Progress

from .core import Model
from .session import LevelRun
from .terms import Backend, Expr, Level, RowBlock, Sense, Shape, VarKind

#: A scaled coefficient further than this from an integer is refused, not rounded.
INTEGRAL_TOL = 1e-9


class ScaleError(ValueError):
    """A row or level would need a non-integer coefficient in CP-SAT: a modelling bug (the
    formulation must declare its scale), never a user error."""


def _integral(values: np.ndarray, what: str) -> np.ndarray:
    rounded = np.round(values)
    if np.any(np.abs(values - rounded) > INTEGRAL_TOL * np.maximum(1.0, np.abs(values))):
        bad = values[np.abs(values - rounded) > INTEGRAL_TOL * np.maximum(1.0, np.abs(values))]
        raise ScaleError(f"{what}: non-integer coefficient {bad[0]!r} for CP-SAT; declare a scale")
    return rounded.astype(np.int64)


class CpsatSession:
    method = "cpsat"
    kind = Backend.CPSAT

    def __init__(self, model: Model, linearization_level: int = 1):
        self.model = model
        self.linearization_level = linearization_level
        cp = self.cp = cp_model.CpModel()
        self._vars: list[cp_model.IntVar] = []
        self._scale = np.ones(model.num_cols)
        lb, ub = model.lb, model.ub
        for block in model.vars:
            model.tick()
            lo, hi = (
                lb[block.start : block.start + len(block)],
                ub[block.start : block.start + len(block)],
            )
            if block.kind is VarKind.BINARY:
                self._vars.extend(cp.new_bool_var(f"{block.name}{k}") for k in block.keys)
                continue
            s: float = 1
            if block.kind is VarKind.CONTINUOUS:
                if block.cpsat_scale is None:
                    raise ScaleError(f"variables {block.name}: continuous without a CP-SAT grid")
                s = block.cpsat_scale
                self._scale[block.start : block.start + len(block)] = s
            if block.cpsat_ub is not None:
                hi = np.minimum(hi, block.cpsat_ub)
            if not np.all(np.isfinite(lo)) or not np.all(np.isfinite(hi)):
                raise ScaleError(f"variables {block.name}: CP-SAT needs finite bounds (cpsat_ub)")
            low = np.ceil(lo * s - 1e-9).astype(np.int64)
            high = np.floor(hi * s + 1e-9).astype(np.int64)
            self._vars.extend(
                cp.new_int_var(int(a), int(b), f"{block.name}{k}")
                for a, b, k in zip(low, high, block.keys, strict=True)
            )
        for rows in model.blocks:
            self.add_block(rows)
        self._level: Level | None = None
        self._values: np.ndarray | None = None

    def var(self, col: int) -> cp_model.IntVar:
        return self._vars[col]

    def _coefs(self, cols: np.ndarray, coefs: np.ndarray, scale: float, what: str) -> np.ndarray:
        return _integral(coefs * scale / self._scale[cols], what)

    def add_block(self, block: RowBlock) -> None:
        if Backend.CPSAT not in block.backends or not len(block):
            return
        cp, x = self.cp, self._vars
        coefs = self._coefs(block.cols, block.coefs, block.cpsat_scale, block.cid)
        cols = block.cols.tolist()
        # An integer-valued row keeps the same integer points when its bounds move inwards.
        lo = np.ceil(block.lo * block.cpsat_scale - 1e-9)
        hi = np.floor(block.hi * block.cpsat_scale + 1e-9)
        starts = block.starts.tolist()
        for r in range(len(block)):
            self.model.tick()
            a, b = starts[r], starts[r + 1]
            vs = [x[c] for c in cols[a:b]]
            if block.shape is Shape.AT_MOST_ONE:
                cp.add_at_most_one(vs)
            elif block.shape is Shape.EXACTLY_ONE:
                cp.add_exactly_one(vs)
            elif block.shape is Shape.IMPLICATION:
                cp.add_implication(vs[0], vs[1])
            else:
                low = cp_model.INT_MIN if math.isinf(lo[r]) else int(lo[r])
                high = cp_model.INT_MAX if math.isinf(hi[r]) else int(hi[r])
                expr = cp_model.LinearExpr.weighted_sum(vs, coefs[a:b].tolist())
                cp.add_linear_constraint(expr, low, high)

    def linear(self, expr: Expr, scale: float, what: str) -> cp_model.LinearExpr:
        coefs = self._coefs(expr.cols, expr.coefs, scale, what)
        return cp_model.LinearExpr.weighted_sum([self._vars[c] for c in expr.cols], coefs.tolist())

    def set_level(self, level: Level) -> None:
        objective = self.linear(
            level.expr_for(Backend.CPSAT), level.cpsat_scale, f"level {level.name}"
        )
        if level.sense is Sense.MAXIMIZE:
            self.cp.maximize(objective)
        else:
            self.cp.minimize(objective)
        self._level = level

    def set_hint(self, values: np.ndarray | None) -> None:
        self.cp.clear_hints()
        if values is None:
            return
        scaled = np.round(values * self._scale).astype(np.int64).tolist()
        for v, value in zip(self._vars, scaled, strict=True):
            self.cp.add_hint(v, value)

    def run(self, time_limit_s: float, options: SolveOptions) -> LevelRun:
        solver = backend.make_solver(
            time_limit_s=max(time_limit_s, 0.01),
            mip_gap=options.mip_gap,
            threads=options.threads,
            seed=options.seed,
            verbose=options.verbose,
            linearization_level=self.linearization_level,
            deterministic=options.deterministic,
        )
        level = self._level
        assert level is not None
        scale, constant = level.cpsat_scale, level.expr_for(Backend.CPSAT).constant
        report = options.on_progress
        on_solution = None
        if report is not None:

            def on_solution(objective: float, bound: float) -> None:
                report(
                    Progress(
                        self.method,
                        "improved",
                        incumbent=objective / scale + constant,
                        bound=bound / scale + constant,
                    )
                )

        run = backend.run(self.cp, solver, on_solution, PROGRESS_INTERVAL_S)
        values = None
        if run.status.has_solution:
            values = np.fromiter(solver.response_proto.solution, dtype=float, count=len(self._vars))
            values /= self._scale
        return LevelRun(
            run.status,
            None if run.objective is None else run.objective / scale + constant,
            None if run.bound is None else run.bound / scale + constant,
            values,
            run.stats,
        )

    def close(self) -> None:
        pass
