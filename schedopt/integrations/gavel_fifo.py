"""Gavel's rule-based policies as drop-ins (``fifo.py``, ``isolated.py``): no optimisation, so
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
        m = len(throughputs)
        out: Allocation = {}
        for k, rates in throughputs.items():
            x = {w: float(cluster_spec[w]) / m / float(scale_factors[k]) for w in rates}
            total = max(1.0, sum(x.values()))
            out[k] = {w: v / total for w, v in x.items()}
        return out


FIFOPolicy = FIFO
FIFOPolicyWithPerf = FIFOPerf
FIFOPolicyWithPacking = FIFOPacking
IsolatedPolicy = Isolated
