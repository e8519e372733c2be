"""Gavel's rule-based policies as drop-ins (``fifo.py``, ``isolated.py``, ``gandiva.py``): no
optimisation, so
nothing to prove; each is written from Gavel's definition, with Gavel's names, constructors and
``get_allocation(throughputs, scale_factors, cluster_spec)``. formulations/timeshare.md,
"Rule-based policies", states each rule.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping
from typing import Any

from .gavel_base import members

Key = Hashable
Allocation = dict[Key, dict[str, float]]


def _in_order(keys: list[Key]) -> list[Key]:
    """Arrival order: Gavel sorts its job ids; keys that do not sort keep the caller's order."""
    try:
        return sorted(keys)  # type: ignore[type-var]
    except TypeError:
        return keys


class FIFO:
    """``FIFOPolicy``: jobs in arrival order each get a whole type for the round (x = 1) while
    GPUs last; ``mode='base'`` keeps a job where it was placed until it leaves and picks a
    type at random (``seed``), ``'perf'`` re-places everyone every round on the fastest type
    with room, ``'packing'`` does so and then lets waiting jobs share with placed ones."""

    name = "FIFO"

    def __init__(self, mode: str = "base", seed: int | None = None, packing_threshold=1.5):
        if mode not in ("base", "perf", "packing"):
            raise ValueError(f"mode must be 'base', 'perf' or 'packing', not {mode!r}")
        self.mode, self.packing_threshold = mode, float(packing_threshold)
        self._rng = random.Random(seed)
        #: the type each placed job (or pair key) runs on
        self._placed: dict[Key, str] = {}

    def get_allocation(
        self,
        throughputs: Mapping[Key, Mapping[str, Any]],
        scale_factors: Mapping[Key, int],
        cluster_spec: Mapping[str, int],
    ) -> Allocation:
        free = {w: int(n) for w, n in cluster_spec.items()}
        if self.mode != "base":
            self._placed = {}
        singles = [k for k in throughputs if members(k) is None]
        waiting = [k for k in _in_order(singles) if k not in self._placed]
        # base mode: jobs that left free their GPUs; a partner left alone waits again
        for key in _in_order(list(self._placed)):
            w = self._placed[key]
            if key in throughputs:
                free[w] -= int(scale_factors[key])
                continue
            del self._placed[key]
            waiting = _in_order(waiting + [k for k in (members(key) or ()) if k in throughputs])
            head = waiting[0] if waiting else None
            if (
                head is not None
                and int(scale_factors[head]) <= free[w]
                and float(throughputs[head][w]) > 0
            ):
                waiting.pop(0)
                self._placed[head] = w
                free[w] -= int(scale_factors[head])
        self._fill(waiting, throughputs, scale_factors, free)
        if self.mode == "packing":
            self._pack(waiting, throughputs, scale_factors)
        out: Allocation = {k: dict.fromkeys(cluster_spec, 0.0) for k in throughputs}
        for key, w in self._placed.items():
            out[key][w] = 1.0
        return out

    def _fill(self, waiting, throughputs, scale_factors, free) -> None:
        """Place waiting jobs in order until one fits no type with GPUs left (none jumps the
        queue); a job with no speed on the type chosen for it is skipped."""
        while waiting and any(n > 0 for n in free.values()):
            job = waiting.pop(0)
            s = int(scale_factors[job])
            room = sorted(w for w, n in free.items() if n > 0 and n >= s)
            if not room:
                break
            if self.mode == "base":
                w = room[self._rng.randrange(len(room))]
            else:  # the fastest type with room (the first in name order on a tie)
                w = max(room, key=lambda t: (float(throughputs[job][t]), -room.index(t)))
            if float(throughputs[job][w]) > 0:
                self._placed[job] = w
                free[w] -= s

    def _pack(self, waiting, throughputs, scale_factors) -> None:
        """In order, each waiting job joins the placed single job (same scale factor) with
        which the two normalised rates, Σ T^P/T, are largest and above ``packing_threshold``;
        the first job that joins none ends the packing."""
        pair_of = {frozenset(two): k for k in throughputs if (two := members(k)) is not None}
        while waiting:
            job = waiting.pop(0)
            best, partner = self.packing_threshold, None
            for placed, w in self._placed.items():
                if members(placed) is not None or scale_factors[placed] != scale_factors[job]:
                    continue
                key = pair_of.get(frozenset((placed, job)))
                if key is None:
                    continue
                a, b = members(key)  # type: ignore[misc]
                gain = sum(
                    float(r) / float(throughputs[m][w])
                    for m, r in zip((a, b), throughputs[key][w], strict=True)
                    if float(r) > 0
                )
                if gain > best:
                    best, partner = gain, placed
            if partner is None:
                break
            w = self._placed.pop(partner)
            self._placed[pair_of[frozenset((partner, job))]] = w


class FIFOPerf(FIFO):
    """``FIFOPolicyWithPerf``: FIFO on the fastest type with room, re-placed every round."""

    name = "FIFO_Perf"

    def __init__(self, packing: bool = False):
        super().__init__(mode="perf")


class FIFOPacking(FIFO):
    """``FIFOPolicyWithPacking``: :class:`FIFOPerf`, then waiting jobs share with placed ones."""

    name = "FIFO_Packing"

    def __init__(self, packing_threshold=1.5):
        super().__init__(mode="packing", packing_threshold=packing_threshold)


def _equal_split(
    combos: list[Key], scale: Mapping[Key, int], cluster_spec: Mapping[str, int], types
) -> Allocation:
    """Every combination 1/m of every type, divided by its scale factor, scaled down to at most
    the whole round (the isolated split over ``combos``)."""
    out: Allocation = {}
    for k in combos:
        x = {w: float(cluster_spec[w]) / len(combos) / float(scale[k]) for w in types}
        total = max(1.0, sum(x.values()))
        out[k] = {w: v / total for w, v in x.items()}
    return out


class Gandiva:
    """``GandivaPolicy`` (``Gandiva_Packing``): the isolated split while the jobs' GPUs fit the
    cluster; otherwise jobs are paired at random (``seed``; two jobs of one scale factor whose
    pair is offered) and every pair or unpaired job gets an equal split. A pair stays until a
    member leaves or its normalised throughput, Σ over types and members of T^P/T, falls
    below 1."""

    name = "Gandiva_Packing"

    def __init__(self, seed: int | None = None):
        self._rng = random.Random(seed)
        #: job -> (its combination's key, its partner or None)
        self._combos: dict[Key, tuple[Key, Key | None]] = {}

    def get_allocation(
        self,
        throughputs: Mapping[Key, Mapping[str, Any]],
        scale_factors: Mapping[Key, int],
        cluster_spec: Mapping[str, int],
    ) -> Allocation | None:
        singles = _in_order([k for k in throughputs if members(k) is None])
        if not singles:
            return None
        types = sorted(throughputs[singles[0]])
        pair_of = {frozenset(two): k for k in throughputs if (two := members(k)) is not None}
        self._drop_stale(throughputs, types)
        scale = {k: int(scale_factors[k]) for k in singles}
        if sum(scale.values()) <= sum(int(cluster_spec[w]) for w in types):
            split = _equal_split(singles, scale, cluster_spec, types)
        else:
            waiting = [k for k in singles if k not in self._combos]
            for _ in range(len(waiting)):
                if len(waiting) < 2:
                    break
                a, b = self._rng.sample(waiting, 2)
                key = pair_of.get(frozenset((a, b)))
                if scale[a] != scale[b] or key is None:
                    continue
                waiting.remove(a)
                waiting.remove(b)
                self._combos[a], self._combos[b] = (key, b), (key, a)
            for k in waiting:
                self._combos[k] = (k, None)
            combos = list(dict.fromkeys(c for c, _ in self._combos.values()))
            for c in combos:
                two = members(c)
                if two is not None:  # a pair uses its members' (equal) scale factor
                    scale[c] = scale[two[0]]
            split = _equal_split(combos, scale, cluster_spec, types)
        out: Allocation = {k: dict.fromkeys(types, 0.0) for k in throughputs}
        out.update(split)
        return out

    def _drop_stale(self, throughputs, types) -> None:
        """Forget the combinations with a member gone or a normalised throughput below 1."""
        stale = set()
        for job, (combo, partner) in self._combos.items():
            gone = job not in throughputs or (partner is not None and partner not in throughputs)
            if gone or _packed_gain(combo, throughputs, types) < 1.0:
                stale |= {job, partner}
        for job in stale:
            self._combos.pop(job, None)


def _packed_gain(combo: Key, throughputs, types) -> float:
    """Σ over types and members of T^P/T (0 for a job alone, or a member with no rate)."""
    two = members(combo)
    if two is None:
        return 0.0
    total = 0.0
    for w in types:
        for m, r in zip(two, throughputs[combo][w], strict=True):
            if float(r) <= 0:
                return 0.0
            total += float(r) / float(throughputs[m][w])
    return total


class Isolated:
    """``IsolatedPolicy``: every job 1/|J| of every type, divided by its scale factor and
    scaled down to at most the whole round (formulations/timeshare.md, the isolated split).
    As in Gavel, time is given on every type, also where the job's rate is 0."""

    name = "Isolated"

    def get_allocation(
        self,
        throughputs: Mapping[Key, Mapping[str, Any]],
        scale_factors: Mapping[Key, int],
        cluster_spec: Mapping[str, int],
    ) -> Allocation | None:
        if not throughputs:
            return None
        types = sorted(next(iter(throughputs.values())))
        return _equal_split(list(throughputs), scale_factors, cluster_spec, types)


FIFOPolicy = FIFO
FIFOPolicyWithPerf = FIFOPerf
FIFOPolicyWithPacking = FIFOPacking
IsolatedPolicy = Isolated
GandivaPolicy = Gandiva
