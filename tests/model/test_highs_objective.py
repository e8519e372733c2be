"""HiGHS gets a level with many integer objective columns as one continuous column (#16 item 1):
its MIP setup partitions the objective's binaries into cliques in quadratic time, unchecked by
any time limit (fair share's L2 at 16,384 GPUs: 70.8 s on a 10 s limit)."""

from __future__ import annotations

import highspy
import numpy as np
import pytest

from schedopt.core.options import SolveOptions
from schedopt.core.status import Status
from schedopt.model import Expr, Level, Model, Sense, emit_highs
from schedopt.model.emit_highs import OBJECTIVE_ROW_MIN_INTEGERS, HighsSession


def pairs_model(n: int) -> tuple[Model, np.ndarray]:
    """``n`` binaries in pairs (at most one of each pair), at most n/4 chosen, the value of
    each column its weight: the optimum takes the n/4 heaviest of the pairs' better halves."""
    rng = np.random.default_rng(0)
    m = Model("pairs")
    x = m.add_vars("x", [(i,) for i in range(n)])
    m.at_most_one("P1", [[x[i,], x[i + 1,]] for i in range(0, n - 1, 2)])
    with m.rows("P2") as rows:
        rows.add(x.cols, [1.0] * n, hi=n // 4)
    weights = rng.integers(1, 1000, n).astype(float)
    m.add_level(Level("L1", Expr.of(x.cols, weights), Sense.MAXIMIZE, 0.5))
    return m, weights


def presolved_objective_nonzeros(session: HighsSession) -> int:
    h = session.highs
    h.setOptionValue("output_flag", False)
    assert h.presolve() == highspy.HighsStatus.kOk
    return int(np.count_nonzero(np.asarray(h.getPresolvedLp().col_cost_)))


def test_a_large_integer_objective_reaches_highs_setup_as_one_column() -> None:
    n = 2 * OBJECTIVE_ROW_MIN_INTEGERS
    m, _ = pairs_model(n)
    session = HighsSession(m)
    session.set_hint(np.zeros(n))  # the start every later level has: bounds z (the cutoff)
    session.set_level(m.levels[0])
    session._cutoff()
    # Presolve must not substitute the objective column back (it does when z is free).
    assert presolved_objective_nonzeros(session) <= 1


@pytest.mark.parametrize("hinted", [False, True])
def test_the_objective_column_changes_no_answer(monkeypatch, hinted: bool) -> None:
    n = 400
    m, weights = pairs_model(n)
    best = np.sort(np.maximum(weights[0::2], weights[1::2]))[::-1][: n // 4].sum()
    options = SolveOptions(time_limit_s=30.0)
    for threshold in (10**9, 0):  # the columns as they are; one objective column
        monkeypatch.setattr(emit_highs, "OBJECTIVE_ROW_MIN_INTEGERS", threshold)
        session = HighsSession(m)
        session.set_level(m.levels[0])
        session.set_hint(np.zeros(n) if hinted else None)
        run = session.run(30.0, options)
        assert run.status is Status.OPTIMAL
        assert run.objective == pytest.approx(best)
        assert run.values is not None and len(run.values) == n
        assert float(weights @ run.values) == pytest.approx(best)
        assert run.bound == pytest.approx(best)


def test_a_cutoff_that_empties_the_level_proves_nothing(monkeypatch) -> None:
    """A start better than every point (here: infeasible) makes the cutoff empty the level:
    NO_SOLUTION, never a false INFEASIBLE."""
    monkeypatch.setattr(emit_highs, "OBJECTIVE_ROW_MIN_INTEGERS", 0)
    n = 40
    m, _ = pairs_model(n)
    session = HighsSession(m)
    session.set_level(m.levels[0])
    session.set_hint(np.ones(n))  # breaks P1 and P2, worth more than any feasible point
    run = session.run(30.0, SolveOptions(time_limit_s=30.0))
    assert run.status is not Status.INFEASIBLE
