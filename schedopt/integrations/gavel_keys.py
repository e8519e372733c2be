"""Gavel's dict keys read by position, and the answer written back under them.

A packed Gavel round of 2,048 jobs has 2,098,176 keys (every job, every equal-scale pair).
Asking each key what it is (``is_pair()``, ``singletons()``) and hashing Gavel's
``JobIdPair`` objects (a Python ``__hash__`` and ``__eq__``) took most of the round's 18 s
(issue 19). Here each key is read once, in the order of the dict: Gavel's keys by
``as_tuple()`` (two job numbers), ints and 2-tuples as they are, anything else through
``members``; a pair's members become positions among the single keys (one dict of the
members' numbers, then numpy), and the answer is a list aligned with the keys, turned into
the dict at the end, with no key hashed on the way.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, compress, repeat
from operator import methodcaller
from typing import Any

import numpy as np

from schedopt.core.errors import InvalidInstanceError

Key = Hashable


def members(key: Key) -> tuple[Key, ...] | None:
    """The two jobs of a pair key, or None for a single job's key."""
    if type(key) is int or type(key) is str:  # the common single keys, without a lookup
        return None
    is_pair = getattr(key, "is_pair", None)
    if callable(is_pair):
        return tuple(key.singletons()) if is_pair() else None  # type: ignore[attr-defined]
    if isinstance(key, tuple) and len(key) == 2:
        return key
    return None


@dataclass(frozen=True)
class RoundKeys:
    """The keys of one ``throughputs`` dict."""

    keys: list[Key]
    #: Where each single key and each pair key sits in ``keys``.
    single_at: np.ndarray
    pair_at: np.ndarray
    singles: list[Key]
    pairs: list[Key]
    #: The positions of each pair's two members among ``singles``.
    first: np.ndarray
    second: np.ndarray

    def pair_tables(self, throughputs: Mapping[Key, Any]) -> list[Any]:
        """The pairs' rate tables, in the order of ``pairs`` (read by position)."""
        flags = np.zeros(len(self.keys), dtype=bool)
        flags[self.pair_at] = True
        return list(compress(throughputs.values(), flags.tolist()))


def read_keys(throughputs: Mapping[Key, Any]) -> RoundKeys:
    keys = list(throughputs)
    raw = _raw_members(keys)
    if raw is None:  # keys of another kind: asked one by one
        found = [members(k) for k in keys]
        is_pair = [m is not None for m in found]
        singles = [k for k, p in zip(keys, is_pair, strict=True) if not p]
        single_of: dict[Any, int] = {k: i for i, k in enumerate(singles)}
        pair_members = [m for m in found if m is not None]
    else:
        is_pair, single_ids, pair_members = raw
        single_of = {x: i for i, x in enumerate(single_ids)}
        singles = list(compress(keys, [not p for p in is_pair]))
    flags = np.fromiter(is_pair, dtype=bool, count=len(keys))
    pair_at = np.flatnonzero(flags)
    pairs = [keys[i] for i in pair_at.tolist()]
    count = 2 * len(pairs)
    try:
        where = np.fromiter(
            map(single_of.__getitem__, chain.from_iterable(pair_members)), np.int64, count
        )
    except KeyError as err:
        raise InvalidInstanceError(
            "throughputs", f"a pair names job {err.args[0]!r}, which has no key of its own"
        ) from None
    return RoundKeys(
        keys,
        np.flatnonzero(~flags),
        pair_at,
        singles,
        pairs,
        where[0::2].copy(),
        where[1::2].copy(),
    )


def _raw_members(keys: Sequence[Key]) -> tuple[list[bool], list[Any], list[Any]] | None:
    """(is each key a pair, each single's job, each pair's two jobs) where the keys say it
    without a Python call per key: Gavel's ``JobIdPair`` (``as_tuple()``: the job number,
    and None or the other's), or ints with 2-tuples of ints. None for other keys."""
    if not keys:
        return [], [], []
    kinds = set(map(type, keys))
    if len(kinds) == 1:
        (kind,) = kinds
        if callable(getattr(kind, "as_tuple", None)) and callable(getattr(kind, "is_pair", None)):
            tuples = list(map(methodcaller("as_tuple"), keys))
            seconds = [t[1] for t in tuples]
            is_pair = [b is not None for b in seconds]
            firsts = [t[0] for t in tuples]
            singles = list(compress(firsts, [not p for p in is_pair]))
            pairs = list(compress(tuples, is_pair))
            return is_pair, singles, pairs
    if kinds <= {int, tuple}:
        is_pair = list(map(isinstance, keys, repeat(tuple)))
        pairs = list(compress(keys, is_pair))
        if pairs and set(map(len, pairs)) != {2}:
            return None
        return is_pair, list(compress(keys, [not p for p in is_pair])), pairs
    return None


def write_allocation(
    rk: RoundKeys,
    throughputs: Mapping[Key, Mapping[str, Any]],
    alone: tuple[np.ndarray, Sequence[str], np.ndarray],
    together: tuple[np.ndarray, Sequence[str], np.ndarray],
    workers: Sequence[str] | None,
) -> dict[Key, dict[str, float]]:
    """Gavel's output: every key of the input with every worker type, zeros included, and
    the fractions: ``alone`` = (single positions, type names, fractions), ``together`` =
    (pair positions, type names, fractions). ``workers``: the types of every key (Gavel
    gives every key its first job's), or None to take each key's own."""
    n = len(rk.keys)
    if workers is not None:
        template = dict.fromkeys(workers, 0.0)
        values = list(map(dict.copy, repeat(template, n)))
    else:
        values = [dict.fromkeys(throughputs[k], 0.0) for k in rk.keys]
    for at, (idx, names, fractions) in ((rk.single_at, alone), (rk.pair_at, together)):
        targets = at[idx].tolist()
        for i, w, f in zip(targets, names, fractions.tolist(), strict=True):
            values[i][w] = f
    return dict(zip(rk.keys, values, strict=True))


def same_workers(throughputs: Mapping[Key, Mapping[str, Any]], singles: list[Key]) -> list | None:
    """The worker types of every single key when they are the same for all (then every key's
    answer lists them, as Gavel's does), else None."""
    if not singles:
        return None
    first = throughputs[singles[0]].keys()
    if all(throughputs[k].keys() == first for k in singles):
        return list(first)
    return None
