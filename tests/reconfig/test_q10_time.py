"""Q10's time at short limits (formulations/reconfig.md Q10; #17): each call credits a
sequence once, and a call cut short by its share goes on at the same probe."""

from __future__ import annotations

import numpy as np

import schedopt.problems.reconfig.dw_prices as dwm
import schedopt.problems.reconfig.price_bound as pbm
from schedopt.core.stopping import Deadline
from schedopt.problems.reconfig.dw_prices import STOPPED
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


def test_a_q10_call_cut_short_goes_on_at_the_same_probe(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # at 10 s the first Q10 call at 1,024 GPUs got 30% of the time left (0.4 s, where it needs
    # about 0.5 s), its prices proved nothing, and the search stopped with 0.7 s left; now the
    # call goes on once at the same probe with RETRY_SHARE of the time left (old: no 2nd call)
    real, real_out = pbm.dw_prices, pbm.priced_out
    calls: list[tuple[int, float]] = []
    whole = Deadline.after(120.0)

    def spy(sd, lam, pricing, pool, k_max=None):  # type: ignore[no-untyped-def]
        assert pricing is not None
        calls.append((lam, pricing.remaining() / whole.remaining()))
        if len(calls) == 1:  # cut short by its share, before any exact round
            mu, _ = real(sd, lam, Deadline.after(0.0), pool, k_max)
            return (np.array([t for t, _ in sd.types], float) if mu is None else mu), STOPPED
        return real(sd, lam, pricing, pool, k_max)

    def nothing_after_the_cut(*a, **k):  # type: ignore[no-untyped-def]
        return False if len(calls) == 1 else real_out(*a, **k)

    monkeypatch.setattr(pbm, "dw_prices", spy)
    monkeypatch.setattr(pbm, "priced_out", nothing_after_the_cut)
    bound, _ = pbm.priced_bound_us(_inst(), 17_000_000, whole)
    assert bound is not None
    assert len(calls) >= 2, calls
    assert calls[1][0] == calls[0][0]  # the same probe
    assert 0.25 <= calls[0][1] <= 0.35 and calls[1][1] >= 0.6, calls
