"""``deterministic=True`` in ``decomp:layer`` and ``milp:scenario`` (#17): their HiGHS runs
are sized by the limit, not by what the wall clock says is left, so that the same work is done
on a machine emulated many times slower (tests/slower.py). The end-to-end property (the same
answer) is tests/conformance/test_deterministic.py's; these ask for the budgets themselves,
which on small instances decide the answer only when a run is cut short."""

from __future__ import annotations

import pytest

import schedopt
from schedopt.model.emit_highs import HighsSession
from schedopt.problems.moe_placement import decompose, generate
from tests.slower import slower_machine

LIMIT_S = 1.0


def test_the_parts_models_get_their_share_of_the_limit_as_work(monkeypatch) -> None:
    """Each part's model runs deterministic, on PARTS_SHARE of the limit over the layers
    split between its stages, quiet and 20 x slower alike."""
    inst = generate("tiny", 0)
    calls: list[tuple[float, bool]] = []
    real = decompose._solve_model

    def spy(sub, start, seconds, seed, deterministic=False):
        calls.append((round(seconds, 9), deterministic))
        return real(sub, start, seconds, seed, deterministic)

    monkeypatch.setattr(decompose, "_solve_model", spy)
    schedopt.solve(inst, "decomp:layer", time_limit_s=LIMIT_S, deterministic=True)
    quiet = list(calls)
    calls.clear()
    with slower_machine(20.0):
        schedopt.solve(inst, "decomp:layer", time_limit_s=LIMIT_S, deterministic=True)
    assert quiet and quiet == calls
    per_part = decompose.PARTS_SHARE * LIMIT_S / len(inst.layers)
    assert all(det for _, det in quiet)
    assert {s for s, _ in quiet} <= {round(per_part / n, 9) for n in (1, 2)}


@pytest.mark.parametrize("deterministic", [True, False])
def test_the_scenario_milp_is_sized_by_the_limit(monkeypatch, deterministic: bool) -> None:
    """The scenario MILP's HiGHS run gets the limit itself in deterministic mode (its node
    budget, emit_highs.py), whatever the clock says is left; without it, the time left."""
    inst = generate("tiny", 0)
    given: list[float] = []
    real = HighsSession.run

    def spy(self, time_limit_s, options):
        given.append(time_limit_s)
        return real(self, time_limit_s, options)

    monkeypatch.setattr(HighsSession, "run", spy)
    with slower_machine(4.0):
        schedopt.solve(inst, "milp:scenario", time_limit_s=LIMIT_S, deterministic=deterministic)
    assert len(given) == 1
    if deterministic:
        assert given[0] == LIMIT_S
    else:
        assert given[0] < LIMIT_S
