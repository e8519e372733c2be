"""Loader for the Astraea artifact's tenant shares (``share-production.csv``, TPDS'22).

Format, header on line 1::

    name,share

one tenant (Philly virtual cluster, anonymised) per row with its integer share. The shares are
weights: :func:`load_astraea_shares` returns plain :class:`TenantShare` records in file order,
and ``normalise=True`` scales them to sum to 1. Malformed rows raise
:class:`~schedopt.core.errors.InvalidInstanceError` naming ``"<file>:line <n>.<column>"``;
duplicate names and non-positive shares are errors too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from schedopt.core.errors import InvalidInstanceError

from ._csv import read_rows

COLUMNS = ("name", "share")


@dataclass(frozen=True)
class TenantShare:
    name: str
    share: float


def load_astraea_shares(path: str | Path, *, normalise: bool = False) -> list[TenantShare]:
    path = Path(path)
    out: list[TenantShare] = []
    seen: dict[str, int] = {}
    for row in read_rows(path, COLUMNS):
        name = row.text("name")
        if not name:
            raise row.error("name", "empty tenant name")
        if name in seen:
            raise row.error("name", f"duplicate tenant {name!r} (also line {seen[name]})")
        seen[name] = row.line
        share = row.number("share")
        if share <= 0:
            raise row.error("share", f"must be > 0 (got {share:g})")
        out.append(TenantShare(name, share))
    if not out:
        raise InvalidInstanceError(f"{path.name}:line 2", "no tenants in the file")
    if normalise:
        total = sum(t.share for t in out)
        out = [TenantShare(t.name, t.share / total) for t in out]
    return out
