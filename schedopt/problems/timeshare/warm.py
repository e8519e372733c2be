"""Round to round: the simplex basis of level 1, keyed by job and GPU type.

A scheduler's next round differs from the last by a few arrivals, departures and revised
throughputs. HiGHS re-solves the 2,048-job LP from the last basis, mapped onto the new model,
in a handful of iterations (8 against 2,271 cold; 7 ms against 50 ms, measured in
benchmarks/timeshare_rounds.py). New columns start at their lower bound and new rows with
their slack basic; when departures leave the count of basic variables off, it is repaired
(surplus basic columns made nonbasic, missing ones taken from row slacks) and HiGHS's own
basis repair handles any singularity. Any basis gives the same optimum: only the time differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import highspy
import numpy as np

from .instance import Policy
from .model import TimeshareModel

_BASIC = highspy.HighsBasisStatus.kBasic
_LOWER = highspy.HighsBasisStatus.kLower
ColKey = tuple[str, str | None, str]
RowKey = tuple[str, str]


@dataclass(frozen=True)
class Basis:
    """The bases of a timeshare LP's levels (``Result.warm_start``; pass it back as
    ``warm_start`` with the next round's instance). ``second``: level 2's, whose model has
    level 1's fixing row last (``fix``)."""

    policy: Policy
    cols: dict[ColKey, highspy.HighsBasisStatus]
    t: highspy.HighsBasisStatus
    rows: dict[RowKey, highspy.HighsBasisStatus]
    second: Basis | None = None
    fix: highspy.HighsBasisStatus = _BASIC


def _col_keys(tm: TimeshareModel) -> list[ColKey]:
    ids = tm.data.ids
    c = tm.columns
    return [
        (ids[a], None if b < 0 else ids[b], tm.data.types[w])
        for a, b, w in zip(c.first.tolist(), c.second.tolist(), c.type.tolist(), strict=True)
    ]


def _row_keys(tm: TimeshareModel) -> list[RowKey]:
    ids = tm.data.ids
    return [("C1", j) for j in ids] + [("C2", w) for w in tm.data.types] + [("C3", j) for j in ids]


def capture(tm: TimeshareModel, highs: highspy.Highs) -> Basis | None:
    """The basis ``highs`` holds now: the model's rows, and a level-fixing row after them if
    there is one (level 2)."""
    basis = highs.getBasis()
    if not basis.valid:
        return None
    col_status, row_status = list(basis.col_status), list(basis.row_status)
    x0, n_rows = tm.x.start, 2 * tm.data.num_jobs + tm.data.num_types
    cols = dict(zip(_col_keys(tm), col_status[x0 : x0 + len(tm.columns)], strict=True))
    rows = dict(zip(_row_keys(tm), row_status[:n_rows], strict=True))
    fix = row_status[n_rows] if len(row_status) > n_rows else _BASIC
    return Basis(tm.data.policy, cols, col_status[tm.t[()]], rows, fix=fix)


def apply(tm: TimeshareModel, highs: highspy.Highs, warm: Basis, fixed: bool = False) -> bool:
    """Start ``highs`` (holding ``tm``'s model, and with ``fixed`` level 1's fixing row) from
    ``warm``; False when the basis does not fit (another policy) and the solve starts cold."""
    if warm.policy is not tm.data.policy:
        return False
    cols = [warm.cols.get(k, _LOWER) for k in _col_keys(tm)]
    cols.append(warm.t)  # t is the column after x (model.py)
    rows = [warm.rows.get(k, _BASIC) for k in _row_keys(tm)]
    if fixed:
        rows.append(warm.fix)
    _repair(cols, rows)
    basis = highs.getBasis()
    basis.col_status, basis.row_status, basis.valid = cols, rows, True
    return highs.setBasis(basis) == highspy.HighsStatus.kOk


def _repair(cols: list, rows: list) -> None:
    """Make the number of basic variables equal the number of rows."""
    basic = sum(s == _BASIC for s in cols) + sum(s == _BASIC for s in rows)
    need = len(rows)
    if basic > need:
        for i in np.flatnonzero([s == _BASIC for s in cols[:-1]])[: basic - need]:
            cols[i] = _LOWER
    elif basic < need:
        for i in np.flatnonzero([s != _BASIC for s in rows])[: need - basic]:
            rows[i] = _BASIC
