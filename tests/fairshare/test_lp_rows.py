"""The part LP built straight into arrays (``lp_rows.part_lp``) is the LP relaxation of
``build_model``'s MILP rows: the same columns, bounds, rows and level objectives."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings

from schedopt.model.lp_bound import relax, relax_objective
from schedopt.problems.fairshare import generate_custom
from schedopt.problems.fairshare.data import build_data
from schedopt.problems.fairshare.decomp import _host_groups, part_data, scale_units, split
from schedopt.problems.fairshare.lp_rows import part_lp
from schedopt.problems.fairshare.model import build_model
from schedopt.problems.fairshare.strategies import instances

SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow]
)


def _rows(starts, cols, coefs, lo, hi) -> list[tuple]:
    """Every row as (sorted nonzero entries, lo, hi), sorted: a multiset of rows."""
    out = []
    for i in range(len(starts) - 1):
        s, e = starts[i], starts[i + 1]
        entries = tuple(
            sorted(
                (int(c), round(float(a), 12))
                for c, a in zip(cols[s:e], coefs[s:e], strict=True)
                if a
            )
        )
        out.append((entries, float(lo[i]), float(hi[i])))
    return sorted(out)


def _same_lp(data) -> None:
    fm = build_model(data)
    l1, l2, l3 = fm.model.levels
    whole = relax(fm.model, l1.expr, l1.sense)
    mine = part_lp(data)
    r = mine.relaxation
    np.testing.assert_array_equal(r.lb, whole.lb)
    np.testing.assert_array_equal(r.ub, whole.ub)
    assert _rows(r.starts, r.cols, r.coefs, r.lo, r.hi) == _rows(
        whole.starts, whole.cols, whole.coefs, whole.lo, whole.hi
    )
    n = len(r.c)
    for level, expr, maximise in ((l1, mine.l1, True), (l2, mine.l2, True), (l3, mine.l3, False)):
        np.testing.assert_allclose(
            expr.objective(n, maximise), relax_objective(fm.model, level.expr, level.sense)
        )
        assert expr.constant == level.expr.constant
    for j in data.jobs:
        if j.options:
            assert mine.x_start[j.index] == fm.x[j.index, 0]
    for j in data.jobs:
        assert mine.k_col[j.index] == (fm.k[j.index,] if j.keepable else -1)


@SETTINGS
@given(inst=instances(max_jobs=6, max_hosts=4))
def test_part_lp_is_the_models_relaxation(inst) -> None:
    _same_lp(build_data(inst, check_size=False))


def test_part_lp_on_decomposition_parts() -> None:
    # parts as decomp makes them: running jobs kept on their hosts, scaled accounts
    inst = generate_custom(gpus=256, tenants=8, jobs=300, seed=3)
    data = build_data(inst, check_size=False)
    groups = _host_groups(data, 3, False, 0)
    job_parts = split(data, 3, False, 0)
    parts = scale_units(data, [part_data(data, ix, p, groups) for p, ix in enumerate(job_parts)])
    assert any(j.keepable for part in parts for j in part.jobs)
    for part in parts:
        _same_lp(part)
