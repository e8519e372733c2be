"""Gavel's entity arguments of water filling (``priority_reweighting_policies``,
``entity_weights``, ``entity_to_job_mapping``), checked and turned into the arrays of
``schedopt.problems.timeshare.waterfill_entities``. Bad input names the argument and entity."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from schedopt.core.errors import InvalidInstanceError
from schedopt.problems.timeshare.waterfill_entities import Entities

RULES = ("fairness", "fifo")


def check_rules(rules: Any) -> dict[Hashable, str] | None:
    """Gavel's ``priority_reweighting_policies``: entity → ``'fairness'`` or ``'fifo'``."""
    if rules is None:
        return None
    if not isinstance(rules, Mapping):
        raise InvalidInstanceError(
            "priority_reweighting_policies", "a dict of entity → 'fairness' or 'fifo'"
        )
    for e, rule in rules.items():
        if rule not in RULES:
            raise InvalidInstanceError(
                f"priority_reweighting_policies[{e!r}]",
                f"{rule!r}: Gavel's rules are 'fairness' and 'fifo'",
            )
    return dict(rules)


def entities(
    rules: Mapping[Hashable, str],
    entity_weights: Mapping[Hashable, Any] | None,
    mapping: Mapping[Hashable, Any] | None,
    row_of: Mapping[Hashable, int],
) -> Entities:
    """The entities of the round's jobs (``row_of``: Gavel's job key → the job's row). Every
    job of the round must be in exactly one entity; jobs of the mapping not in the round are
    left out (they have left, or get no time this round)."""
    if mapping is None:
        raise InvalidInstanceError(
            "entity_to_job_mapping", "required when priority_reweighting_policies is given"
        )
    if entity_weights is None:
        raise InvalidInstanceError(
            "entity_weights", "required when priority_reweighting_policies is given"
        )
    n = len(row_of)
    entity_of = np.full(n, -1, dtype=np.int64)
    rank = np.zeros(n, dtype=np.int64)
    weight: list[float] = []
    fifo: list[bool] = []
    for e, jobs in mapping.items():
        if e not in rules:
            raise InvalidInstanceError(
                "priority_reweighting_policies", f"entity {e!r} has no rule ('fairness', 'fifo')"
            )
        w = _weight(e, entity_weights)
        index = len(weight)
        weight.append(w)
        fifo.append(rules[e] == "fifo")
        for position, key in enumerate(_sorted(jobs)):
            row = row_of.get(key)
            if row is None:
                continue
            if entity_of[row] >= 0:
                raise InvalidInstanceError(
                    f"entity_to_job_mapping[{e!r}]", f"job {key!r} is in two entities"
                )
            entity_of[row], rank[row] = index, position
    missing = [k for k, r in row_of.items() if entity_of[r] < 0]
    if missing:
        raise InvalidInstanceError(
            "entity_to_job_mapping", f"job {missing[0]!r} of the round is in no entity"
        )
    return Entities(entity_of, np.array(weight), np.array(fifo, dtype=bool), rank)


def _weight(e: Hashable, entity_weights: Mapping[Hashable, Any]) -> float:
    where = f"entity_weights[{e!r}]"
    if e not in entity_weights:
        raise InvalidInstanceError(where, "missing")
    try:
        w = float(entity_weights[e])
    except (TypeError, ValueError):
        raise InvalidInstanceError(where, f"not a number: {entity_weights[e]!r}") from None
    if not (math.isfinite(w) and w > 0):
        raise InvalidInstanceError(where, f"must be a finite number > 0 (got {w!r})")
    return w


def _sorted(jobs: Any) -> list[Hashable]:
    """Gavel sorts an entity's jobs (``fifo`` serves them in that order)."""
    jobs = list(jobs)
    try:
        return sorted(jobs)
    except TypeError:
        return jobs
