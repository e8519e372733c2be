"""``lp_bound.highs_of``: a relaxation handed to HiGHS as it is, or with integral columns."""

from __future__ import annotations

import numpy as np

from schedopt.model.lp_bound import Relaxation, highs_of


def _knapsack() -> Relaxation:
    # max 5a + 4b + 3c : 2a + 2b + 2c <= 3, 0 <= a, b, c <= 1
    return Relaxation(
        c=np.array([5.0, 4.0, 3.0]),
        starts=np.array([0, 3]),
        cols=np.array([0, 1, 2]),
        coefs=np.array([2.0, 2.0, 2.0]),
        lo=np.array([-np.inf]),
        hi=np.array([3.0]),
        lb=np.zeros(3),
        ub=np.ones(3),
    )


def _solve(h) -> np.ndarray:
    h.run()
    return np.asarray(h.getSolution().col_value)


def test_the_relaxation_alone_is_the_lp() -> None:
    x = _solve(highs_of(_knapsack()))
    assert np.allclose(x, [1.0, 0.5, 0.0])


def test_integral_columns_make_it_a_milp() -> None:
    x = _solve(highs_of(_knapsack(), np.array([True, True, True])))
    assert np.allclose(x, [1.0, 0.0, 0.0])
    y = _solve(highs_of(_knapsack(), np.array([True, False, False])))
    assert np.allclose(y, [1.0, 0.5, 0.0])
