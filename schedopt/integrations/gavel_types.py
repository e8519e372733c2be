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
from operator import eq, itemgetter
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
    count, kind_count = len(tables), len(kinds)
    lo_pos, hi_pos = np.minimum(first, second), np.maximum(first, second)
    pair_code = np.sort(lo_pos * len(docs) + hi_pos)
    if np.any(pair_code[1:] == pair_code[:-1]) or np.any(first == second):
        return None  # a pair given twice (both ways round), or a job with itself
    # A type pair's rates are written the first type's first (the earlier job's first
    # within one type); a pair lists them its first job's first: reversed or not.
    ta, tb = type_of[lo_pos], type_of[hi_pos]
    reversed_ = (first > second) ^ (ta > tb)
    code = np.minimum(ta, tb) * kind_count + np.maximum(ta, tb)
    group = code * 2 + reversed_
    some = np.zeros(2 * kind_count**2, dtype=np.int64)
    some[group] = np.arange(count)  # one pair of each group (whichever is written last)
    try:
        # every pair's table equals that of its group's pair: compared as Python dicts of
        # lists, in C (reading 1.3·10^7 floats into an array took 1.3 s at 2,048 jobs)
        if not all(map(eq, tables, map(tables.__getitem__, some[group].tolist()))):
            return None  # two pairs of the same types at different rates: no table
        # the rates of one pair of each group, as numbers, the type pair's way round
        pick = itemgetter(*workers) if len(workers) > 1 else (lambda t: (t[workers[0]],))
        groups = np.flatnonzero(np.bincount(group, minlength=len(some)))
        firsts = map(tables.__getitem__, some[groups].tolist())
        entries = list(chain.from_iterable(map(pick, firsts)))
        sizes = np.fromiter(map(len, entries), np.int64, len(entries))
        if len(entries) != len(groups) * len(workers) or np.any(sizes != 2):
            return None  # a pair with other than two rates: checked one by one
        rates = np.fromiter(chain.from_iterable(entries), np.float64, 2 * len(entries))
    except (KeyError, TypeError, ValueError):
        return None  # a pair with other worker types or malformed rates: checked one by one
    rates = rates.reshape(len(groups), len(workers), 2)
    turned = groups % 2 == 1
    rates[turned] = rates[turned][:, :, ::-1]
    codes, first_of, group_code = np.unique(groups // 2, return_index=True, return_inverse=True)
    if not np.array_equal(rates, rates[first_of][group_code.reshape(-1)]):
        return None  # the two ways round disagree: no table
    if not np.all((rates == 0) | ((rates >= MIN_POSITIVE) & (rates <= MAX_RATE))):
        return None  # a bad rate: the pairs go one by one, and pydantic names the pair
    canon = rates[first_of]
    counts = np.bincount(type_of, minlength=kind_count)
    a, b = codes // kind_count, codes % kind_count
    implied = np.where(a == b, counts[a] * (counts[a] - 1) // 2, counts[a] * counts[b])
    if int(implied.sum()) != count:
        return None  # the table would let pairs share that Gavel did not list
    names = [f"type{k}" for k in range(len(kinds))]
    for jid, k in zip(docs, type_of.tolist(), strict=True):
        docs[jid]["job_type"] = names[k]
    return [
        {
            "job_types": [names[x], names[y]],
            "throughput": {w: canon[i][k].tolist() for k, w in enumerate(workers)},
        }
        for i, (x, y) in enumerate(zip(a.tolist(), b.tolist(), strict=True))
    ]
