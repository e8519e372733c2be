"""``decomp:rate`` with ``deterministic=True`` (#17): its search, its hand-over and its bound's
pricing run to the solve's deadline itself, the runaway cap, instead of shares of what the
clock says is left; so their steps end by themselves and the answer does not follow the clock
(the answer itself: tests/conformance/test_deterministic.py)."""

from __future__ import annotations

import pytest

import schedopt
from schedopt.problems.reconfig import generate, price_bound, rate


@pytest.mark.parametrize("deterministic", [True, False])
def test_the_search_and_the_pricing_run_to_the_deadline_itself(
    monkeypatch, deterministic: bool
) -> None:
    seen: dict[str, object] = {}
    real_search, real_priced = rate.search, price_bound.priced_bound_us

    def search(data, start, deadline):
        seen["search_end"] = deadline.end
        return real_search(data, start, deadline)

    def priced(inst, upper, deadline=None, *args, **kwargs):
        seen["bound_end"] = deadline.end
        seen["pricing_deterministic"] = kwargs.get("deterministic", False)
        return real_priced(inst, upper, deadline, *args, **kwargs)

    monkeypatch.setattr(rate, "search", search)
    monkeypatch.setattr(price_bound, "priced_bound_us", priced)
    inst = generate("tiny", 0)
    result = schedopt.solve(inst, "decomp:rate", time_limit_s=1.0, deterministic=deterministic)
    assert result.solution is not None
    assert seen["pricing_deterministic"] is deterministic
    if deterministic:  # the same deadline: the runaway cap
        assert seen["search_end"] == seen["bound_end"]
    else:  # the search's share ends before what the bound is left
        assert seen["search_end"] < seen["bound_end"]
