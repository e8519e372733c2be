"""A decomposition part whose LP has no L2 point is rounded on the whole round's GPU prices
(``price_round.py``, #17): the joined plan stays valid, every part keeps B1 where its LP
reached it, and L2 is far above the L1 point's or the plain water-fill's."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import schedopt
from schedopt.core.options import SolveOptions
from schedopt.core.stopping import Deadline
from schedopt.model import decompose
from schedopt.problems.fairshare import decomp, generate_custom
from schedopt.problems.fairshare.bound import bounds
from schedopt.problems.fairshare.l1_fix import need_gpus
from schedopt.problems.fairshare.price_round import priced_round, unit_rho
from schedopt.problems.fairshare.validate import evaluate


def _joined(inst: Any, with_prices: bool) -> tuple[tuple[float, float, float], float, Any]:
    """The plan joined from parts whose LP had no time (a budget of 0 s), with or without the
    whole round's prices; its levels, B1 and the decomposition."""
    d = decomp.decomposition(inst, SolveOptions(time_limit_s=60), Deadline.after(60), False)
    assert isinstance(d, decompose.Decomposition)
    b1 = d.bound(60).value
    answers = {}
    for p in range(d.count):
        task = d.part(p, decompose.Budget(0.0))
        args = task.args if with_prices else task.args[:2]
        answers[task.key] = task.fn(*args)
    solution, _ = d.join(answers, Deadline.after(0.0))
    assert schedopt.get_problem("fairshare").validate(inst, solution) == []
    assert b1 is not None
    return evaluate(inst, solution), b1, d


@pytest.fixture(scope="module")
def inst() -> Any:
    return generate_custom(gpus=1024, tenants=20, jobs=1250, seed=0)


def test_parts_without_their_lp_keep_b1_and_most_of_l2(inst) -> None:
    """Every part's LP cut: the priced rounding keeps L1 at B1, and L2 is within 20% of the
    whole round's B2 and 1.5 times the plain water-fill's (here 533.6 against 280.4, B2
    638.8; the LP-guided parts given the time: 577.2 at a lower L1)."""
    (l1, l2, _), b1, d = _joined(inst, with_prices=True)
    (l1_plain, l2_plain, _), _, _ = _joined(inst, with_prices=False)
    whole = bounds(inspect.getclosurevars(d.join).nonlocals["data"])
    assert l1 == pytest.approx(b1, rel=1e-9)
    assert l2 >= 0.8 * whole.l2
    assert l2 > 1.5 * l2_plain and l1 >= l1_plain - 1e-12


def test_a_unit_short_of_its_fair_gpus_gets_them_cheaper(inst) -> None:
    """A unit whose jobs' best options by reduced profit hold fewer GPUs than ``m_v(t̂)``
    gets ``ρ_v > 0`` and reaches it in the priced plan (without ρ it stays short)."""
    d = decomp.decomposition(inst, SolveOptions(time_limit_s=60), Deadline.after(60), False)
    assert isinstance(d, decompose.Decomposition)
    d.bound(60)
    prices, b1 = d.part(0, decompose.Budget(0.0)).args[2]
    part = d.part(0, decompose.Budget(0.0)).args[0]
    need = need_gpus(part, b1)
    rho = {v.index: unit_rho(part, prices, float(need[v.index]), v) for v in part.units}
    short = [v for v in part.units if rho[v.index] > 0.0]
    assert short  # (this instance has such units: otherwise the test says nothing)
    state = priced_round(part, prices, b1)
    assert all(state.unit_gpus[v.index] >= need[v.index] for v in short)
