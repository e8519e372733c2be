"""Do the emitted models say what the formulation says? Fix a point in every one and compare.

For a point ``x`` (one value per column), each back-end's model gets every column fixed to
``x`` by a block of rows; it must then be feasible exactly when ``x`` satisfies the model's own
rows (:meth:`Model.violated_rows`, restricted to the blocks that back-end receives), and each
level's value there must be the level's own value at ``x``. A row an emitter drops or alters
(a constraint block, a helper's linearisation, a level's scale) shows up as a different verdict
or a different value. CP-SAT sees the point on its declared grids (continuous columns rounded
to ``1/cpsat_scale``), which is the discretisation the formulation documents.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from schedopt.core.options import SolveOptions
from schedopt.core.status import Status

from .core import Model
from .lexico import Hooks
from .method import ExactBackend, emit
from .terms import Backend, Expr, Level, RowBlock, Sense, VarKind

#: Seconds per check run. Every column is fixed (presolve decides at once), or the binaries
#: are; still, a verdict is a proof, so this is a limit no run reaches on a loaded machine and
#: only ends a real hang (at 10 s, a check gave "no verdict" beside CPU burners, #17).
CHECK_LIMIT_S = 600.0


@dataclass(frozen=True)
class Disagreement:
    backend: str
    what: str

    def __str__(self) -> str:
        return f"{self.backend}: {self.what}"


def on_grid(model: Model, x: np.ndarray) -> np.ndarray:
    """``x`` as CP-SAT can hold it: continuous columns on their declared grid."""
    out = x.copy()
    for v in model.vars:
        if v.cpsat_scale:
            s = slice(v.start, v.start + len(v))
            out[s] = np.round(out[s] * v.cpsat_scale) / v.cpsat_scale
    return out


def check_point(
    model: Model, x: np.ndarray, backends: tuple[ExactBackend, ...] = tuple(ExactBackend)
) -> list[Disagreement]:
    """Where the emitted models disagree with ``model`` about the point ``x``."""
    out: list[Disagreement] = []
    options = SolveOptions(time_limit_s=CHECK_LIMIT_S)
    for backend in backends:
        kind = Backend.CPSAT if backend is ExactBackend.CPSAT else Backend.MILP
        point = on_grid(model, x) if kind is Backend.CPSAT else x
        feasible = not model.violated_rows(point, backend=kind)
        session = emit(model, backend, options, Hooks())
        for block in _fix_all(model, point):
            session.add_block(block)
        levels = model.levels if feasible else model.levels[:1]
        for level in levels:
            session.set_level(level)
            run = session.run(CHECK_LIMIT_S, options)
            if run.status not in (Status.OPTIMAL, Status.INFEASIBLE):
                out.append(Disagreement(backend.value, f"{level.name}: no verdict ({run.status})"))
                break
            if (run.status is Status.OPTIMAL) != feasible:
                said = "feasible" if run.status is Status.OPTIMAL else "infeasible"
                broken = ", ".join(model.violated_rows(point, backend=kind)) or "nothing"
                out.append(Disagreement(backend.value, f"says {said}; the model breaks {broken}"))
                break
            want = level.expr_for(kind).value(point)
            got = run.objective
            tol = 1e-6 * max(1.0, abs(want)) + 0.5 / level.cpsat_scale * (kind is Backend.CPSAT)
            if feasible and (got is None or abs(got - want) > tol):
                out.append(Disagreement(backend.value, f"{level.name} = {got}, model says {want}"))
        session.close()
    return out


def check_decisions(
    model: Model, x: np.ndarray, backends: tuple[ExactBackend, ...] = tuple(ExactBackend)
) -> list[Disagreement]:
    """Fix only the binary columns of ``x`` and let each back-end complete the rest: every
    back-end must reach the same verdict, and the same first-level optimum. With the derived
    columns free, a flipped binary breaks one block alone far more often than with every
    column fixed, so a block one emitter drops shows up as a lone "feasible"."""
    options = SolveOptions(time_limit_s=CHECK_LIMIT_S)
    verdicts: dict[str, tuple[Status, float | None]] = {}
    binary = [v for v in model.vars if v.kind is VarKind.BINARY]
    for backend in backends:
        session = emit(model, backend, options, Hooks())
        for block in _fix_all(model, x, binary):
            session.add_block(block)
        level = model.levels[0]
        session.set_level(level)
        run = session.run(CHECK_LIMIT_S, options)
        verdicts[backend.value] = (run.status, run.objective)
        session.close()
    out = []
    statuses = {s for s, _ in verdicts.values()}
    if len(statuses) > 1 or not statuses <= {Status.OPTIMAL, Status.INFEASIBLE}:
        said = ", ".join(f"{b} {s.value}" for b, (s, _) in verdicts.items())
        out.append(Disagreement("all", f"verdicts differ with the binaries fixed: {said}"))
    elif statuses == {Status.OPTIMAL}:
        # Optima are compared between the MILP back-ends only: with the binaries fixed, the
        # continuous columns left free sit on CP-SAT's grid there (moe's shares: its L1 above
        # the MILPs' by up to the documented δ), so its optimum may differ by that much.
        values = [v for b, (_, v) in verdicts.items() if v is not None and b != "cpsat"]
        level = model.levels[0]
        tol = 1e-6 * max([1.0, *map(abs, values)])
        if len(values) > 1 and max(values) - min(values) > tol:
            out.append(Disagreement("all", f"{level.name} optima differ: {verdicts}"))
    return out


def _fix_all(model: Model, x: np.ndarray, blocks_of=None) -> list[RowBlock]:
    """One block per variable block: ``s·x_c = s·v`` with ``s`` its CP-SAT grid (1 if none)."""
    blocks = []
    for v in model.vars if blocks_of is None else blocks_of:
        n = len(v)
        if not n:
            continue
        s = v.cpsat_scale or 1
        value = x[v.start : v.start + n]
        blocks.append(
            RowBlock(
                f"point_{v.name}",
                np.arange(n + 1),
                np.arange(v.start, v.start + n),
                np.full(n, float(s)),
                value * s,
                value * s,
            )
        )
    return blocks


def witnesses(
    model: Model, rng: np.random.Generator, tries: int = 3
) -> list[tuple[str, frozenset[Backend], np.ndarray]]:
    """For each block, a point that breaks that block alone among the blocks one kind of
    back-end receives (CP-SAT for a CP-SAT-only block, else MILP): those blocks without this
    one, plus one of its rows with the bound turned round, solved by HiGHS (by CP-SAT for a
    CP-SAT block, so the point is on its grids). A block implied by the others (moe's C2 by
    C3 and C4) has no witness: dropping it changes nothing. A witness is kept
    only if the model's own check agrees that it breaks just that block, so a wrong HiGHS
    answer costs a witness, never a false alarm."""
    out = []
    options = SolveOptions(time_limit_s=CHECK_LIMIT_S)
    for block in model.blocks:
        kind = Backend.MILP if Backend.MILP in block.backends else Backend.CPSAT
        others = [
            replace(b, backends=frozenset(Backend))  # all of them for HiGHS to see
            for b in model.blocks
            if kind in b.backends and b is not block
        ]
        for r in rng.permutation(len(block))[:tries].tolist():
            x = _break_one_row(model, others, block, r, options, kind)
            if x is not None and model.violated_rows(x, backend=kind) == [block.cid]:
                out.append((block.cid, block.backends, x))
                break
    return out


def _break_one_row(
    model: Model,
    others: list[RowBlock],
    block: RowBlock,
    r: int,
    options: SolveOptions,
    kind: Backend,
) -> np.ndarray | None:
    cols, coefs = block.row(r)
    integral = bool(np.all(model.kinds()[cols] == 1) and np.all(coefs == np.round(coefs)))
    candidates = []
    for side, bound in (("above", block.hi[r]), ("below", block.lo[r])):
        if np.isinf(bound):
            continue
        step = 1.0 if integral else 1e-3 * max(1.0, abs(bound))
        if kind is Backend.CPSAT:  # one unit of the row's grid
            step = max(step, 1.0 / block.cpsat_scale)
        lo, hi = (bound + step, np.inf) if side == "above" else (-np.inf, bound - step)
        candidates.append((lo, hi))
    for lo, hi in candidates:
        probe = Model(f"{model.name}-without-{block.cid}")
        probe.vars, probe._lb, probe._ub, probe.num_cols = (
            model.vars,
            model._lb,
            model._ub,
            model.num_cols,
        )
        probe.blocks = list(others)
        probe.add_rows("broken", [0, len(cols)], cols, coefs, lo, hi, cpsat_scale=block.cpsat_scale)
        probe.add_level(Level("any", Expr.of([], []), Sense.MINIMIZE))
        # A CP-SAT block's witness comes from CP-SAT: a point on its grids.
        solver = ExactBackend.CPSAT if kind is Backend.CPSAT else ExactBackend.HIGHS
        session = emit(probe, solver, options, Hooks())
        session.set_level(probe.levels[0])
        run = session.run(CHECK_LIMIT_S, options)
        session.close()
        if run.values is not None:
            return run.values
    return None


def backends_of(kinds: frozenset[Backend]) -> tuple[ExactBackend, ...]:
    """The exact back-ends that receive blocks meant for ``kinds``."""
    cpsat = ExactBackend.CPSAT
    return tuple(
        b for b in ExactBackend if (Backend.CPSAT if b is cpsat else Backend.MILP) in kinds
    )
