"""The equivalence check fails when an emitter drops or alters a row, a helper's
linearisation or a level's scale (issue 8: "show it once")."""

from __future__ import annotations

import numpy as np
import pytest

from schedopt.model import Expr, Level, Model, Sense
from schedopt.model.emit_cpsat import CpsatSession
from schedopt.model.emit_highs import HighsSession
from schedopt.model.emit_pulp import PulpSession
from schedopt.model.equivalence import check_point


def knapsack() -> Model:
    m = Model("knapsack")
    x = m.add_vars("x", [(i,) for i in range(4)])
    with m.rows("C1") as rows:
        rows.add(x.cols, [3.0, 4.0, 5.0, 6.0], hi=10.0)
    m.at_most_one("C2", [[x[0,], x[1,]]])
    m.add_level(Level("L1", Expr.of(x.cols, [4.0, 5.0, 6.0, 8.0]), Sense.MAXIMIZE, 0.5))
    m.add_level(Level("L2", Expr.of(x.cols, [0.5, 1.5, 1.0, 2.5]), Sense.MINIMIZE, 0, 1e-9, 2))
    return m


#: Feasible, then breaking C1 only, then breaking C2 only.
POINTS = ([0, 1, 0, 1], [0, 0, 1, 1], [1, 1, 0, 0])


def test_the_emitters_agree_on_a_small_model() -> None:
    m = knapsack()
    for p in POINTS:
        assert check_point(m, np.array(p, dtype=float)) == []


@pytest.mark.parametrize("session", [CpsatSession, HighsSession, PulpSession])
@pytest.mark.parametrize("cid", ["C1", "C2"])
def test_a_dropped_block_is_caught(monkeypatch, session, cid: str) -> None:
    real = session.add_block

    def drop(self, block):
        if block.cid != cid:
            real(self, block)

    monkeypatch.setattr(session, "add_block", drop)
    wrong = [check_point(knapsack(), np.array(p, dtype=float)) for p in POINTS]
    assert any(wrong), f"dropping {cid} from {session.__name__} went unnoticed"


def test_an_altered_level_scale_is_caught(monkeypatch) -> None:
    real = CpsatSession.set_level

    def double_scale(self, level):
        real(
            self,
            Level(
                level.name,
                2.0 * level.expr,
                level.sense,
                level.tolerance,
                level.rel_tolerance,
                level.cpsat_scale,
            ),
        )

    monkeypatch.setattr(CpsatSession, "set_level", double_scale)
    assert check_point(knapsack(), np.array(POINTS[0], dtype=float))


def test_an_altered_linearisation_is_caught(monkeypatch) -> None:
    """at_most_one read as exactly-one by an emitter changes the verdict somewhere."""
    from schedopt.model.terms import Shape

    real = CpsatSession.add_block

    def exactly(self, block):
        if block.shape is Shape.AT_MOST_ONE:
            block = type(block)(**{**block.__dict__, "shape": Shape.EXACTLY_ONE})
        real(self, block)

    monkeypatch.setattr(CpsatSession, "add_block", exactly)
    wrong = [check_point(knapsack(), np.array(p, dtype=float)) for p in ([0, 0, 1, 0],)]
    assert any(wrong)
