"""Kelley's cutting planes in a trust region (``model.lp_bound.cutting_plane_ascent``): on a
concave piecewise-linear function of y ≥ 0 it finds the maximum, never reports more than a
value it evaluated, and stops at its deadline."""

from __future__ import annotations

import time

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from schedopt.model.lp_bound import cutting_plane_ascent


def _pieces(seed: int, dims: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    slopes = rng.normal(size=(count, dims)) * 3.0
    return rng.normal(size=count) * 5.0, slopes


def _f(offsets: np.ndarray, slopes: np.ndarray):  # type: ignore[no-untyped-def]
    def evaluate(y: np.ndarray) -> tuple[float, np.ndarray]:
        values = offsets + slopes @ y
        i = int(np.argmin(values))
        return float(values[i]), slopes[i]

    return evaluate


def _true_max(offsets: np.ndarray, slopes: np.ndarray) -> float:
    import highspy

    dims = slopes.shape[1]
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.addVars(dims + 1, np.append(np.zeros(dims), -1e6), np.full(dims + 1, 1e6))
    h.changeColsCost(dims + 1, np.arange(dims + 1, dtype=np.int32), np.append(np.zeros(dims), -1.0))
    for a, b in zip(offsets, slopes, strict=True):  # θ ≤ a + b·y
        h.addRow(-1e30, a, dims + 1, np.arange(dims + 1, dtype=np.int32), np.append(-b, 1.0))
    h.run()
    return -h.getInfo().objective_function_value


@settings(derandomize=True, deadline=None, max_examples=40)
@given(seed=st.integers(0, 10_000), dims=st.integers(1, 4))
def test_reaches_the_maximum_and_never_passes_it(seed: int, dims: int) -> None:
    offsets, slopes = _pieces(seed, dims, 4 * dims + 3)
    # bounded above on y ≥ 0: add pieces falling in every coordinate
    slopes = np.vstack([slopes, -np.eye(dims) * 2.0 - 0.5])
    offsets = np.append(offsets, np.full(dims, 20.0))
    evaluate = _f(offsets, slopes)
    truth = _true_max(offsets, slopes)
    value, y = cutting_plane_ascent(
        evaluate, np.ones(dims), time.perf_counter() + 30, max_steps=200
    )
    assert value <= truth + 1e-9
    assert value == evaluate(y)[0]  # the value of the point returned, as evaluated
    assert (y >= 0).all()
    assert value >= truth - 1e-3 * max(1.0, abs(truth))


def test_stops_at_its_deadline() -> None:
    offsets, slopes = _pieces(0, 3, 10)
    calls = []

    def slow(y: np.ndarray) -> tuple[float, np.ndarray]:
        calls.append(1)
        time.sleep(0.02)
        return _f(offsets, slopes)(y)

    started = time.perf_counter()
    cutting_plane_ascent(slow, np.ones(3), started + 0.1, max_steps=1000)
    assert time.perf_counter() - started < 0.5
    assert 1 <= len(calls) <= 10


def _fresh_model_ascent(evaluate, start, max_steps):  # type: ignore[no-untyped-def]
    """The steps with a new HiGHS model holding every cut at each step (the code before
    one model was kept): the points it evaluates, in order."""
    import highspy

    from schedopt.backends.highs_quiet import quiet_highs
    from schedopt.model.lp_bound import CUTS_REL_TOL

    y = np.maximum(np.asarray(start, dtype=np.float64), 0.0)
    n = len(y)
    unit = np.maximum(np.abs(y), 1e-3)
    best, best_y, width, cuts, seen = -np.inf, y.copy(), 1.0, [], []
    idx = np.arange(n + 1, dtype=np.int32)
    for _ in range(max_steps):
        seen.append(y.copy())
        value, grad = evaluate(y)
        cuts.append((value, np.asarray(grad, dtype=np.float64), y.copy()))
        if value > best:
            best, best_y, width = value, y.copy(), min(1.5 * width, 4.0)
        else:
            width *= 0.5
        h = quiet_highs()
        lo = np.maximum(0.0, best_y - width * unit)
        h.addVars(
            n + 1,
            np.append(lo, -highspy.kHighsInf),
            np.append(best_y + width * unit, highspy.kHighsInf),
        )
        h.changeColsCost(n + 1, idx, np.append(np.zeros(n), -1.0))
        for v, g, at in cuts:
            h.addRow(-highspy.kHighsInf, v - float(g @ at), n + 1, idx, np.append(-g, 1.0))
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            break
        point = np.asarray(h.getSolution().col_value, dtype=np.float64)
        if point[n] - best <= CUTS_REL_TOL * max(1.0, abs(best)):
            break
        y = np.maximum(point[:n], 0.0)
    return seen


@settings(derandomize=True, deadline=None, max_examples=30)
@given(seed=st.integers(0, 10_000), dims=st.integers(1, 5))
def test_one_model_steps_as_a_fresh_model_each_step(seed: int, dims: int) -> None:
    """The kept model (a cut added and the box moved per step, solved cold) visits the same
    points, bit for bit, as a fresh model with every cut at each step, on random cuts."""
    offsets, slopes = _pieces(seed, dims, 6 * dims + 5)
    slopes = np.vstack([slopes, -np.eye(dims) * 2.0 - 0.5])
    offsets = np.append(offsets, np.full(dims, 20.0))
    evaluate = _f(offsets, slopes)
    seen: list[np.ndarray] = []

    def recorded(y: np.ndarray) -> tuple[float, np.ndarray]:
        seen.append(y.copy())
        return evaluate(y)

    start = np.random.default_rng(seed).uniform(0.0, 3.0, size=dims)
    cutting_plane_ascent(recorded, start, time.perf_counter() + 30, max_steps=60)
    fresh = _fresh_model_ascent(evaluate, start, 60)
    assert len(seen) == len(fresh)
    for a, b in zip(seen, fresh, strict=True):
        assert np.array_equal(a, b)
