"""PuLP (and through it MPS/LP files): CBC as a watched child process, and ``schedopt export``.

Variables are named after their block and key (``x_3_0_1``) and rows after their constraint
id and position (``C3_17``), so an exported file reads against the formulation.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pulp

from schedopt.backends.milp import MilpSolver, solve_pulp
from schedopt.core.options import SolveOptions
from schedopt.core.stopping import level_limits

from .core import Model
from .session import LevelRun
from .terms import Backend, Level, RowBlock, Sense, VarKind

_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def _name(prefix: str, key: tuple) -> str:
    return _UNSAFE.sub("_", "_".join([prefix, *map(str, key)]))


class PulpSession:
    def __init__(self, model: Model, solver: MilpSolver = MilpSolver.CBC):
        self.model, self.solver = model, solver
        self.method = f"milp:{solver.value}"
        self.kind = Backend.MILP
        prob = self.prob = pulp.LpProblem(model.name, pulp.LpMinimize)
        lb, ub = model.lb, model.ub
        self._vars: list[pulp.LpVariable] = []
        for block in model.vars:
            model.tick()
            cat = pulp.LpContinuous if block.kind is VarKind.CONTINUOUS else pulp.LpInteger
            if block.kind is VarKind.BINARY:
                cat = pulp.LpBinary
            for i, key in enumerate(block.keys):
                c = block.start + i
                self._vars.append(
                    prob.add_variable(
                        _name(block.name, key),
                        None if math.isinf(lb[c]) else float(lb[c]),
                        None if math.isinf(ub[c]) else float(ub[c]),
                        cat=cat,
                    )
                )
        self._rows = 0
        self._empty: pulp.LpVariable | None = None
        self._in_rows: set[int] = set()  # columns with a coefficient in some row
        for rows in model.blocks:
            self.add_block(rows)
        self._hint: np.ndarray | None = None
        self._level: Level | None = None

    def add_block(self, block: RowBlock) -> None:
        if Backend.MILP not in block.backends:
            return
        x, prob = self._vars, self.prob
        cols, coefs = block.cols.tolist(), block.coefs.tolist()
        starts = block.starts.tolist()
        self._in_rows.update(cols)
        for r in range(len(block)):
            self.model.tick()
            a, b = starts[r], starts[r + 1]
            expr = pulp.LpAffineExpression(
                list(zip((x[c] for c in cols[a:b]), coefs[a:b], strict=True))
            )
            lo, hi = float(block.lo[r]), float(block.hi[r])
            name = f"{block.cid}_{r}"
            if a == b:  # CBC calls a model with an empty row invalid
                if lo <= 0 <= hi:
                    continue  # 0 within its bounds: no constraint
                # infeasible as it stands (e.g. nothing can carry a demand): written on a
                # variable fixed at 0, so the file and CBC say INFEASIBLE as the model does
                expr = pulp.LpAffineExpression([(self._zero(), 1.0)])
            if lo == hi:
                prob += expr == lo, name
                continue
            if not math.isinf(lo):
                prob += expr >= lo, name if math.isinf(hi) else f"{name}_lo"
            if not math.isinf(hi):
                prob += expr <= hi, name if math.isinf(lo) else f"{name}_hi"

    def _zero(self) -> pulp.LpVariable:
        """A variable fixed at 0, made once, for rows with no terms."""
        if self._empty is None:
            self._empty = self.prob.add_variable("empty_row_zero", 0.0, 0.0)
        return self._empty

    def objective(self, level: Level) -> pulp.LpAffineExpression:
        """The level in its integer resolution (``Level.cpsat_scale``): CBC deduces its cutoff
        increment from integral objective coefficients (admission at 1,024 GPUs × 1,000 jobs:
        no L1 solution in 5 s with tier values in 1/1000 units, 6,540 with them ×1000)."""
        scale = float(level.cpsat_scale)
        pairs = list(
            zip(
                (self._vars[c] for c in level.expr.cols.tolist()),
                (scale * level.expr.coefs).tolist(),
                strict=True,
            )
        )
        # A column in no row and not in the objective gets a BOUNDS line but no COLUMNS line
        # in PuLP's MPS, and CBC rejects the file ("No match for column"; fair share's t when
        # no unit is counted): such columns join the objective with coefficient 0.
        used = self._in_rows.union(level.expr.cols.tolist())
        pairs += [(v, 0.0) for c, v in enumerate(self._vars) if c not in used]
        if not pairs and self._vars:
            # An empty objective makes PuLP add a `__dummy` column that then stays in the
            # model, in no row: CBC rejects such a file ("No match for column").
            pairs = [(self._vars[0], 0.0)]
        return pulp.LpAffineExpression(pairs, constant=scale * level.expr.constant)

    def set_level(self, level: Level) -> None:
        self.prob.sense = pulp.LpMaximize if level.sense is Sense.MAXIMIZE else pulp.LpMinimize
        self.prob.setObjective(self.objective(level))
        self._level = level

    def set_hint(self, values: np.ndarray | None) -> None:
        self._hint = values

    def run(self, time_limit_s: float, options: SolveOptions) -> LevelRun:
        hint = None
        if self._hint is not None:
            hint = dict(zip(self._vars, self._hint.tolist(), strict=True))
        # Deterministic mode (SolveOptions.deterministic), as HighsSession: a MIP level stops on
        # CBC's node limit (the budget HiGHS gets), with one seed and no ``-threads`` (CBC's
        # serial search); the wall clock only caps a runaway run. An LP is solved to the end.
        nodes, time_limit_s = level_limits(time_limit_s, options.deterministic)
        max_nodes = nodes if self.prob.isMIP() else None
        threads = 1 if options.deterministic else options.threads
        run = solve_pulp(
            self.prob,
            self.solver,
            time_limit_s=max(time_limit_s, 0.01),
            max_nodes=max_nodes,
            mip_gap=options.mip_gap,
            threads=threads,
            seed=options.seed,
            hint=hint,
            msg=options.verbose,
        )
        values = None
        if run.status.has_solution:
            values = np.array([v.varValue or 0.0 for v in self._vars], dtype=float)
        handover_s = float(run.stats.get("handover_s", 0.0))
        scale = self._level.cpsat_scale if self._level is not None else 1
        objective = None if run.objective is None else run.objective / scale
        bound = None if run.bound is None else run.bound / scale
        return LevelRun(run.status, objective, bound, values, run.stats, handover_s)

    def close(self) -> None:
        pass
