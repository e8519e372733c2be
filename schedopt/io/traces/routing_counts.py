"""Loaders for MoE routing-count logs, returning plain frozen records.

**The documented CSV** (:func:`load_routing_counts`), header on line 1::

    layer,expert,count[,batch]

one row per (layer, expert[, batch]): ``count`` tokens of that batch were routed to that expert
(with top-k routing a token counts once for each of its k experts). ``layer`` and ``expert`` are
0-based integers, ``count`` a whole number >= 0, ``batch`` an optional 0-based batch index.
Rows of the same (layer, expert, batch) are summed; a (layer, expert) that never appears has
count 0. Malformed rows raise :class:`~schedopt.core.errors.InvalidInstanceError` naming
``"<file>:line <n>.<column>"``.

**The OLMoE routing outputs** (:func:`load_olmoe_counts`) as converted in
``shared/data/olmoe-routing/expert_counts.csv`` (allenai/OLMoE, Apache-2.0)::

    model,variant,domain,layer,expert,count

with ``model`` ``olmoe`` (64 experts, top-8), ``olmoe-sft``, ``olmoe-dpo`` or ``mistral``
(Mixtral-8x7B, 8 experts, top-2); ``variant`` ``expert_counts`` (all top-k choices) or
``expert_counts_top1``; ``domain`` the text domain (arxiv, book, c4, github, wikipedia, tulu).

This module does not depend on any problem package; ``schedopt.problems.moe_placement``'s
``from_counts`` builds an instance from :meth:`RoutingCounts.matrix`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ._csv import read_rows

COLUMNS = ("layer", "expert", "count")
OLMOE_COLUMNS = ("model", "variant", "domain", "layer", "expert", "count")


@dataclass(frozen=True)
class RoutingCount:
    """Tokens of one batch (``None``: all batches) routed to one expert of one layer."""

    layer: int
    expert: int
    count: int
    batch: int | None = None
    model: str = ""
    variant: str = ""
    domain: str = ""

    def __post_init__(self) -> None:
        if self.layer < 0 or self.expert < 0 or self.count < 0:
            raise ValueError(f"layer, expert and count must be >= 0 (got {self})")
        if self.batch is not None and self.batch < 0:
            raise ValueError(f"batch must be >= 0 (got {self.batch})")


@dataclass(frozen=True)
class RoutingCounts:
    """What a loader returns: the records, in file order."""

    records: tuple[RoutingCount, ...]

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[RoutingCount]:
        return iter(self.records)

    def layers(self) -> tuple[int, ...]:
        return tuple(sorted({r.layer for r in self.records}))

    def batches(self) -> tuple[int, ...]:
        return tuple(sorted({r.batch for r in self.records if r.batch is not None}))

    def select(self, **equal: object) -> RoutingCounts:
        """The records whose fields equal the given values (e.g. ``model="olmoe"``); a value
        may also be a set or tuple of allowed values."""

        def keep(r: RoutingCount) -> bool:
            for name, want in equal.items():
                got = getattr(r, name)
                if isinstance(want, (set, frozenset, tuple, list)):
                    if got not in want:
                        return False
                elif got != want:
                    return False
            return True

        return RoutingCounts(tuple(r for r in self.records if keep(r)))

    def matrix(
        self, layers: Iterable[int] | None = None, experts: int | None = None
    ) -> list[list[int]]:
        """``counts[i][e]``: tokens summed over batches (and anything else not selected) for the
        i-th of ``layers`` (default: every layer present, ascending); ``experts`` defaults to
        1 + the largest expert id seen."""
        chosen = list(self.layers() if layers is None else layers)
        n = (
            experts
            if experts is not None
            else 1 + max((r.expert for r in self.records), default=-1)
        )
        row_of = {layer: i for i, layer in enumerate(chosen)}
        out = [[0] * n for _ in chosen]
        for r in self.records:
            i = row_of.get(r.layer)
            if i is not None and r.expert < n:
                out[i][r.expert] += r.count
        return out


def load_routing_counts(path: str | Path) -> RoutingCounts:
    """Read the documented ``layer,expert,count[,batch]`` CSV (see the module docstring)."""
    path = Path(path)
    records: dict[tuple[int, int, int | None], int] = {}
    for row in read_rows(path, COLUMNS):
        layer, expert, count = row.integer("layer"), row.integer("expert"), row.integer("count")
        for name, value in (("layer", layer), ("expert", expert), ("count", count)):
            if value < 0:
                raise row.error(name, f"must be >= 0 (got {value})")
        batch = None
        if "batch" in row.values and (row.values.get("batch") or "").strip() != "":
            batch = row.integer("batch")
            if batch < 0:
                raise row.error("batch", f"must be >= 0 (got {batch})")
        key = (layer, expert, batch)
        records[key] = records.get(key, 0) + count
    return RoutingCounts(
        tuple(
            RoutingCount(layer=k[0], expert=k[1], batch=k[2], count=v) for k, v in records.items()
        )
    )


def load_olmoe_counts(path: str | Path) -> RoutingCounts:
    """Read ``model,variant,domain,layer,expert,count`` (the OLMoE routing outputs)."""
    path = Path(path)
    out = []
    for row in read_rows(path, OLMOE_COLUMNS):
        layer, expert, count = row.integer("layer"), row.integer("expert"), row.integer("count")
        for name, value in (("layer", layer), ("expert", expert), ("count", count)):
            if value < 0:
                raise row.error(name, f"must be >= 0 (got {value})")
        out.append(
            RoutingCount(
                layer=layer,
                expert=expert,
                count=count,
                model=row.text("model"),
                variant=row.text("variant"),
                domain=row.text("domain"),
            )
        )
    return RoutingCounts(tuple(out))
