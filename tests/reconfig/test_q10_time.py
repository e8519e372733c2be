"""Q10's time at short limits (formulations/reconfig.md Q10; #17): each call credits a
sequence once, and a call gets most of the time left (the bisection after it is short)."""

from __future__ import annotations

import numpy as np

import schedopt.problems.reconfig.dw_prices as dwm
import schedopt.problems.reconfig.price_bound as pbm
from schedopt.core.stopping import Deadline
from schedopt.problems.reconfig.generate import generate_custom
from schedopt.problems.reconfig.stage_bound import stage_data


def _inst():  # type: ignore[no-untyped-def]
    return generate_custom(4, 8, "llama2-70b", 64, 2, 2, seed=0)


def test_a_q10_call_credits_each_sequence_once_with_the_same_answer(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # the credits at Λ do not change between a call's rounds: each sequence is credited once
    # (the old rounds credited the whole pool again, 20% of a call at 1,024 GPUs), and the
    # answer is the one crediting afresh every round gives
    inst = _inst()
    sd = stage_data(inst)
    assert sd is not None
    lam = 12_180_000
    real = dwm._credit
    seen: list[tuple[int, ...]] = []

    def counting(sd_, seqs, lam_):  # type: ignore[no-untyped-def]
        seen.extend(seqs)
        return real(sd_, seqs, lam_)

    monkeypatch.setattr(dwm, "_credit", counting)
    mu, ended = dwm.dw_prices(sd, lam, None, {})
    assert seen and len(seen) == len(set(seen))
    monkeypatch.setattr(dwm, "_credit", real)
    mu2, ended2 = dwm.dw_prices(sd, lam, None, {})
    assert ended == ended2
    assert mu is not None and mu2 is not None and np.allclose(mu, mu2)


def test_a_q10_call_gets_most_of_the_time_left(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # at 10 s the bound has about 3 s; with 30% of what was left (0.4 s at 1,024 GPUs) the
    # first Q10 call stopped short of ruling its probe out (it needs about 0.5 s there)
    real = pbm.dw_prices
    shares: list[float] = []
    whole = Deadline.after(120.0)

    def spy(sd, lam, pricing, pool, k_max=None):  # type: ignore[no-untyped-def]
        assert pricing is not None
        shares.append(pricing.remaining() / whole.remaining())
        return real(sd, lam, pricing, pool, k_max)

    monkeypatch.setattr(pbm, "dw_prices", spy)
    bound, _ = pbm.priced_bound_us(_inst(), 17_000_000, whole)
    assert bound is not None and shares
    assert min(shares) >= 0.6, shares
