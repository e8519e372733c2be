"""Gavel's pairs as a co-location table by job type (``TimeshareInstance.colocation``).

Gavel hands a policy every pair of jobs with equal scale factors, each with its co-location
throughputs, which Gavel reads from a table by job type (``simulation_throughputs.json``:
worker type → job type → other job type → rates). Recognising the types turns 523,776 pairs
of a 1,024-job round into 351 table entries, and the LP into one over classes of identical
jobs. The recognition is checked, not assumed: jobs with the same scale factor and the same
throughputs alone are taken as one type, every pair's rates must equal its two types' rates
exactly, and every pair the table implies must be among the pairs given; otherwise the
pairs go over one by one (same optimum, more time).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np

from schedopt.core.limits import MAX_RATE, MIN_POSITIVE

#: Beyond this many recognised types the pairs go one by one (the check holds a types² array).
MAX_KINDS = 2048


def by_job_type(
    first: np.ndarray,
    second: np.ndarray,
    tables: list[Mapping[str, Any]],
    docs: dict[str, dict[str, Any]],
) -> list[dict[str, Any]] | None:
    """The table of the pairs of jobs (``first[i]``, ``second[i]``) (positions in ``docs``)
    sharing at ``tables[i]`` (worker type → the two rates), with ``job_type`` set in ``docs``
    (job id → instance document); None where the pairs are not such a table."""
    kinds: dict[tuple, int] = {}
    type_of = np.array(
        [
            kinds.setdefault(
                (d["scale_factor"], tuple(sorted(d["throughput"].items()))), len(kinds)
            )
            for d in docs.values()
        ],
        dtype=np.int64,
    )
    if len(kinds) > MAX_KINDS:
        return None  # nearly every job its own type: a table would save little
    workers = sorted(tables[0])
    count = len(tables)
    try:
        pick = itemgetter(*workers) if len(workers) > 1 else (lambda t: (t[workers[0]],))
        # every rate in one flat pass (an array of 2·10^6 nested lists took 2.3 s), once
        # every entry is known to hold two rates (else the flat list would misalign)
        entries = list(chain.from_iterable(map(pick, tables)))  # read once
        sizes = np.fromiter(map(len, entries), np.int64, count * len(workers))
        if np.any(sizes != 2):
            return None
        rates = np.fromiter(chain.from_iterable(entries), np.float64, count * len(workers) * 2)
        rates = rates.reshape(count, len(workers), 2)
    except (KeyError, TypeError, ValueError):
        return None  # a pair with other worker types or malformed rates: checked one by one
    if not np.all((rates == 0) | ((rates >= MIN_POSITIVE) & (rates <= MAX_RATE))):
        return None  # a bad rate: the pairs go one by one, and pydantic names the pair
    # orient every pair: the job listed first takes the first rate (the instance's rule)
    swap = first > second
    first, second = np.where(swap, second, first), np.where(swap, first, second)
    rates[swap] = rates[swap][:, :, ::-1]
    n = len(docs)
    pair_code = np.sort(first * n + second)
    if np.any(pair_code[1:] == pair_code[:-1]) or np.any(first == second):
        return None  # a pair given twice (both ways round), or a job with itself
    ta, tb = type_of[first], type_of[second]
    # a type pair's rates, the first type's first (the earlier job's first within one type)
    flip = ta > tb
    lo, hi = np.where(flip, tb, ta), np.where(flip, ta, tb)
    canon = rates.copy()
    canon[flip] = canon[flip][:, :, ::-1]
    code = lo * len(kinds) + hi
    some = np.zeros(len(kinds) ** 2, dtype=np.int64)
    some[code] = np.arange(count)  # one pair of each type pair (whichever is written last)
    if not np.array_equal(canon, canon[some[code]]):
        return None  # two pairs of the same types at different rates: no table
    codes = np.flatnonzero(np.bincount(code, minlength=len(kinds) ** 2))
    where = some[codes]
    counts = np.bincount(type_of, minlength=len(kinds))
    a, b = codes // len(kinds), codes % len(kinds)
    implied = np.where(a == b, counts[a] * (counts[a] - 1) // 2, counts[a] * counts[b])
    if int(implied.sum()) != count:
        return None  # the table would let pairs share that Gavel did not list
    names = [f"type{k}" for k in range(len(kinds))]
    for jid, k in zip(docs, type_of.tolist(), strict=True):
        docs[jid]["job_type"] = names[k]
    return [
        {
            "job_types": [names[x], names[y]],
            "throughput": {w: canon[i, k].tolist() for k, w in enumerate(workers)},
        }
        for x, y, i in zip(a.tolist(), b.tolist(), where.tolist(), strict=True)
    ]
