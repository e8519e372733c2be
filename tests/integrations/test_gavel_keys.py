"""Gavel's keys read by position (issue 19): Gavel's own ``JobIdPair`` (``as_tuple``), ints
with 2-tuples, and any other key through ``is_pair``/``singletons`` give the same answer."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from schedopt.core.errors import InvalidInstanceError
from schedopt.integrations.gavel import MaxMinFairnessPerf
from schedopt.integrations.gavel_keys import read_keys

from .test_gavel import JobIdPair, packed_round

GAVEL = Path("/work/gavel/scheduler")


class GavelKey:
    """Gavel's ``scheduler/job_id_pair.py`` interface (not imported): ordered members,
    ``as_tuple()`` with None for a single job, a hash of its own."""

    def __init__(self, a: int, b: int | None = None):
        self._t = (a, None) if b is None else (min(a, b), max(a, b))

    def as_tuple(self) -> tuple[int, int | None]:
        return self._t

    def is_pair(self) -> bool:
        return self._t[1] is not None

    def singletons(self) -> tuple[GavelKey, ...]:
        a, b = self._t
        return (self,) if b is None else (GavelKey(a), GavelKey(b))

    def __hash__(self) -> int:
        return hash(self._t)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GavelKey) and self._t == other._t

    def __repr__(self) -> str:
        return repr(self._t)


def rekey(tput, sf, pw, make):
    def key(k: JobIdPair):
        return make(k.a) if k.b is None else make(k.a, k.b)

    return (
        {key(k): v for k, v in tput.items()},
        {key(k): v for k, v in sf.items()},
        {key(k): v for k, v in pw.items()},
    )


def as_plain(out) -> dict:
    """An allocation with every key as (a, b or None)."""

    def plain(k):
        if isinstance(k, int):
            return (k, None)
        if isinstance(k, tuple):
            return (min(k), max(k))
        if hasattr(k, "as_tuple"):
            return k.as_tuple()
        return (k.a, k.b)

    return {plain(k): v for k, v in out.items()}


def kinds_of_keys():
    yield "generic", lambda a, b=None: JobIdPair(a, b)
    yield "as_tuple", GavelKey
    yield "ints and tuples", lambda a, b=None: a if b is None else (a, b)
    if (GAVEL / "job_id_pair.py").exists():
        sys.path.insert(0, str(GAVEL))
        try:
            from job_id_pair import JobIdPair as Real  # type: ignore[import-not-found]
        finally:
            sys.path.remove(str(GAVEL))
        yield "Gavel's own", lambda a, b=None: Real(a, b)


def test_every_kind_of_key_gives_the_same_allocation() -> None:
    tput, sf, pw, spec = packed_round(12)
    answers = {}
    for name, make in kinds_of_keys():
        t, s, p = rekey(tput, sf, pw, make)
        out = MaxMinFairnessPerf().get_allocation(t, s, p, spec)
        assert list(out) == list(t)  # every key, in the input's order
        answers[name] = as_plain(out)
    first = answers.pop("generic")
    assert any(v > 0 for k, a in first.items() if k[1] is not None for v in a.values())
    for name, other in answers.items():
        assert other.keys() == first.keys(), name
        for k, alloc in first.items():
            assert other[k] == pytest.approx(alloc, abs=1e-9), (name, k)


@pytest.mark.parametrize("make", [GavelKey, lambda a, b=None: a if b is None else (a, b)])
def test_pair_members_are_positions_among_the_single_keys(make) -> None:
    keys = {make(5): 0, make(2): 0, make(2, 5): 0, make(9): 0, make(5, 9): 0}
    rk = read_keys(keys)
    assert rk.singles == [make(5), make(2), make(9)]
    assert rk.first.tolist() == [1, 0] and rk.second.tolist() == [0, 2]
    assert rk.pair_at.tolist() == [2, 4] and rk.single_at.tolist() == [0, 1, 3]


def test_a_pair_of_an_unknown_job_names_the_field() -> None:
    with pytest.raises(InvalidInstanceError, match="throughputs"):
        read_keys({1: {}, (1, 7): {}})
