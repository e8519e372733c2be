"""The typed helpers and their linearisations mean the same on every back-end: at every 0/1
point (and each value of a max variable), every emitter agrees with the model's own check."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from schedopt.model import Expr, Level, Model, Sense, VarKind
from schedopt.model.equivalence import check_point


def helpers_model() -> Model:
    m = Model("helpers")
    x = m.add_vars("x", [(i,) for i in range(3)])
    top = m.add_vars("top", [()], VarKind.CONTINUOUS, 0.0, 10.0, cpsat_scale=1)
    m.at_most_one("H1", [[x[0,], x[1,]]])
    m.exactly_one("H2", [[x[1,], x[2,]]])
    m.implications("H3", [(x[0,], x[2,])])
    # top >= 2·x0 + 1 and top >= 3·x1: with top minimised, top = max(2·x0 + 1, 3·x1).
    m.at_least_each("H4", top[()], [Expr.of([x[0,]], [2.0], 1.0), Expr.of([x[1,]], [3.0])])
    m.add_level(Level("L1", Expr.of([top[()]], [1.0]), Sense.MINIMIZE, 0.5))
    m.add_level(Level("L2", Expr.of(x.cols, [1.0, 2.0, 4.0]), Sense.MAXIMIZE, 0.5))
    return m


POINTS = [(*bits, top) for bits in itertools.product((0, 1), repeat=3) for top in (0, 1, 2, 3)]


@pytest.mark.parametrize("point", POINTS, ids=lambda p: "".join(map(str, p)))
def test_every_emitter_agrees_with_the_helpers(point) -> None:
    m = helpers_model()
    x = np.array(point, dtype=float)
    assert check_point(m, x) == []


def test_the_helpers_say_what_they_are_named() -> None:
    m = helpers_model()
    feasible = {p for p in POINTS if not m.violated_rows(np.array(p, dtype=float))}
    for x0, x1, x2, top in POINTS:
        ok = x0 + x1 <= 1 and x1 + x2 == 1 and x0 <= x2 and top >= max(2 * x0 + 1, 3 * x1)
        assert ((x0, x1, x2, top) in feasible) == ok


def repeated_column_model() -> Model:
    """A row naming x0 twice: x0 + x1 + x0 ≤ 1, i.e. 2·x0 + x1 ≤ 1."""
    m = Model("repeated")
    x = m.add_vars("x", [(i,) for i in range(2)])
    with m.rows("R1") as rows:
        rows.add([x[0,], x[1,], x[0,]], [1.0, 1.0, 1.0], hi=1.0)
    m.add_level(Level("L1", Expr.of(x.cols, [1.0, 1.0]), Sense.MAXIMIZE, 0.5))
    return m


@pytest.mark.parametrize("point", list(itertools.product((0, 1), repeat=2)))
def test_a_column_named_twice_in_a_row_adds_up_on_every_back_end(point) -> None:
    """CP-SAT added the terms, PuLP kept the last one and HiGHS refused the whole block (the
    cosched model's first version): the model layer now writes the column once, summed."""
    m = repeated_column_model()
    x = np.array(point, dtype=float)
    assert bool(m.violated_rows(x)) == (2 * point[0] + point[1] > 1)
    assert check_point(m, x) == []
    (block,) = m.blocks
    assert block.cols.tolist() == [0, 1] and block.coefs.tolist() == [2.0, 1.0]


def test_highs_refusing_rows_is_an_error_not_a_dropped_constraint() -> None:
    from dataclasses import replace

    from schedopt.model.emit_highs import HighsSession

    m = repeated_column_model()
    (block,) = m.blocks
    # written behind the model layer's back: a repeated column, which HiGHS refuses
    m.blocks[0] = replace(
        block, starts=np.array([0, 3]), cols=np.array([0, 1, 0]), coefs=np.ones(3)
    )
    with pytest.raises(RuntimeError, match="R1"):
        HighsSession(m)


def test_a_row_with_no_terms_that_cannot_hold_is_infeasible_everywhere() -> None:
    """0 ≥ 8 (nothing can carry a demand): the PuLP emitter raised ValueError, so CBC and
    ``schedopt export`` crashed on such a model (reconfig's infeasible golden); it is now
    written on a variable fixed at 0, and every back-end says infeasible as the model does."""
    m = Model("empty")
    x = m.add_vars("x", [(0,)])
    m.add_rows("E1", np.array([0, 0]), np.array([], dtype=np.int64), np.array([]), 8.0, np.inf)
    m.add_level(Level("L1", Expr.of(x.cols, [1.0]), Sense.MAXIMIZE, 0.5))
    for value in (0.0, 1.0):
        point = np.array([value])
        assert m.violated_rows(point) == ["E1"]
        assert check_point(m, point) == []


@pytest.mark.parametrize("empty", [0, 1, 2], ids=["first", "middle", "last"])
def test_an_empty_row_anywhere_has_activity_zero(empty: int) -> None:
    """np.add.reduceat read an empty row's start as an index and failed on an empty last row
    (IndexError: timeshare with a zero-rate last GPU type under ``auto``, #16)."""
    m = Model("empty-rows")
    x = m.add_vars("x", [(i,) for i in range(2)])
    terms = [[x[0,], x[1,]], [x[1,]], [x[0,]]]
    terms[empty] = []
    with m.rows("E2") as rows:
        for cols in terms:
            rows.add(cols, [1.0] * len(cols), hi=1.5)
    m.add_level(Level("L1", Expr.of(x.cols, [1.0, 1.0]), Sense.MAXIMIZE, 0.5))
    point = np.array([1.0, 1.0])
    (block,) = m.blocks
    expected = [float(len(cols)) for cols in terms]
    assert block.activity(point).tolist() == expected
    assert bool(m.violated_rows(point)) == (max(expected) > 1.5)
    assert check_point(m, point) == []
