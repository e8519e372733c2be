"""W7: plans from pipeline columns at a target L1 (formulations/reconfig.md, W7; #17 item 3).

The bound's pricing (Q7, ``price_bound._least_cost``) says, for prices of the TP group types,
the cheapest choice of one group type per position for every (depth, micro-batches) under a
target ``Λ``. Here the same dynamic program generates **pipeline columns** over the groups a
cut of the surviving GPUs offers (W1): a master LP (hold the most micro-batches with the
groups) gives the prices, the cheapest columns at those prices enter, a few rounds; then a
MILP over the columns, integer copies of each, says whether whole pipelines hold ``M``
micro-batches under ``Λ``. Such pipelines are realised on the cut's groups and split again per
stage (W2); a bisection over ``Λ`` keeps the best. A heuristic: the validator judges every
plan, and nothing here is a proof.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from schedopt.core.stopping import Deadline

from .budgets import phase_deadline
from .design import Chain, Partitioner
from .master import solve_master
from .pricing import _caps, _least_cost, cheapest_types
from .stage_bound import StageData

#: Column-generation rounds per target, and columns entering per depth and round.
ROUNDS = 6
PER_DEPTH = 6
#: Micro-batch counts priced per depth (a geometric grid over those that fit).
GRID = 48
#: Of the time left, the most one MILP over the columns takes (one took 8 s of a 10 s run at
#: 256 GPUs; one cut short without a plan says nothing of its target: ``Columns.cut``).
MILP_SHARE = 0.5
#: Of the time left at a target, the most its pricing rounds take (the columns kept from
#: earlier targets may hold ``M`` already; at 10 s the rounds took all of it, #17).
PRICE_SHARE = 0.4
#: The all-reduce levels the MILP chooses among: a plan's L1 adds its largest pipeline
#: all-reduce (the smallest pipeline's) to every pipeline's 1F1B time (#17: at 1,024 GPUs a
#: plan for 5.144 s came out at 5.184 s, one 40-GPU pipeline's all-reduce on the rest).
LEVELS = 6

Column = tuple[int, tuple[int, ...]]  # (micro-batches, type index per position, first first)


class Columns:
    """Pipeline columns over a fixed supply of groups (a W1 cut, ``groups``) or, with
    ``groups=None``, over the hosts' packings (Q4's supply: the master chooses how each host
    is cut, and its groups are realised host by host), at targets ``Λ``."""

    def __init__(
        self,
        sd: StageData,
        part: Partitioner,
        groups: list[tuple[str, ...]] | None,
        seqs: set[tuple[int, ...]] | None = None,
    ) -> None:
        self.sd, self.part = sd, part
        self.pools: dict[int, list[tuple[str, ...]]] = defaultdict(list)
        index = {g: j for j, g in enumerate(sd.types)}
        for g in groups or ():
            j = index.get((len(g), part.kappa(g)))
            if j is not None:
                self.pools[j].append(g)
        self.packed = groups is None
        if self.packed:
            self.supply = np.array([float(sd.offered.get(g, 0)) for g in sd.types])
        else:
            self.supply = np.array([len(self.pools[j]) for j in range(len(sd.types))], float)
        self.depths = [p for p in sd.depths if p <= part.inst.max_stages]
        self._shape: dict[tuple[int, ...], tuple[int, int] | None] = {}  # (τ, all-reduce)
        self.offered = np.flatnonzero(self.supply > 0)  # the types the supply offers
        # every sequence priced so far, at any target and (shared, ``seqs``) over any supply:
        # a column is a sequence of types, whatever supplies them
        self.seqs: set[tuple[int, ...]] = set() if seqs is None else seqs
        #: the packings' hosts ``g`` of the best plan known (a start for the MILP, W7)
        self.start: np.ndarray | None = None
        #: the best plan's largest all-reduce (µs): the MILP's one level, once known
        self.level: int | None = None
        #: each column credited with its own all-reduce instead (optimistic, W7)
        self.own = False
        #: the last ``plan`` found none because its MILP reached its time share (or had none
        #: left): its target is unknown, not failed (W7; #17: at 1,024 GPUs the target 5.1009 s,
        #: cut and counted as failed, kept the search above it: 5.0981 s, 5.0833 s below)
        self.cut = False

    def _caps(self, p: int, lam: int) -> tuple[np.ndarray, np.ndarray] | None:
        found = _caps(self.sd, p, lam)
        if found is None or not len(self.offered):
            return None
        m, caps = found
        caps = caps[:, :, self.offered]  # only the types the cut offers
        best = caps.max(axis=2)
        ok = (best >= 1).all(axis=1) & (best.sum(axis=1) >= self.sd.L)
        return (m[ok], caps[ok]) if ok.any() else None

    def price(self, lam: int, mu: np.ndarray) -> list[tuple[float, Column]]:
        """The cheapest type sequence of every (depth, m) at prices ``mu`` (m on a grid), the
        best few per depth by reduced value ``m − price``; each becomes a column holding the
        most micro-batches its groups run under ``lam`` (W2's split, the real all-reduce)."""
        out: list[tuple[float, Column]] = []
        for p in self.depths:
            found = self._caps(p, lam)
            if found is None:
                continue
            m, caps = found
            grid = np.unique(np.geomspace(1, len(m), min(len(m), GRID)).astype(int) - 1)
            m, caps = m[grid], caps[grid]
            cost, args = _least_cost(self.sd, mu[self.offered], caps, keep=True)
            assert args is not None
            gain = m - cost
            rows = np.argsort(-gain)  # best first, while some gain is left (∞ cost: -∞)
            rows = rows[np.isfinite(cost[rows]) & (gain[rows] > 1e-6)]
            seen: set[tuple[int, ...]] = set()
            for picked in cheapest_types(self.sd, caps, args, rows).tolist():
                if len(seen) == PER_DEPTH:
                    break
                seq = tuple(int(self.offered[j]) for j in picked)
                if seq in seen:
                    continue
                seen.add(seq)
                held = self.holds(seq, lam)
                if held >= 1:
                    out.append((held - float(mu[list(seq)].sum()), (held, seq)))
        return out

    def holds(self, seq: tuple[int, ...], lam: int) -> int:
        """The most micro-batches (≤ M) a pipeline of these group types runs under ``lam``
        (its split and stage time do not depend on ``lam``: W2 once per sequence)."""
        if seq not in self._shape:
            kinds = [self.sd.types[j] for j in seq]
            found = self.part.split(kinds)
            gpus = sum(t for t, _ in kinds)
            self._shape[seq] = None if found is None else (found[1], self.part.c.sync_us(gpus))
        shape = self._shape[seq]
        if shape is None:
            return 0
        return int(min(self.sd.M, max(0, (lam - shape[1]) // shape[0] - len(seq) + 1)))

    def levels(self, cols: list[Column], lam: int) -> np.ndarray:
        """(levels × columns) the micro-batches each column holds under ``lam`` when the
        plan's largest all-reduce is a level ``A`` (0 for a column whose own is above ``A``):
        up to LEVELS of the columns' all-reduces, evenly by rank, the largest among them, or
        only ``level`` (the best plan's) once set: one level keeps the MILP as light as
        before (with six it took 2-3 s a target at 1,024 GPUs); with ``own``, each column's
        own all-reduce (the plan may then run over ``lam``)."""
        if self.own:
            return np.array([[float(h) for h, _ in cols]])
        shapes = [self._shape[q] for _, q in cols]
        sync = np.array([0 if s is None else s[1] for s in shapes])
        uniq = np.unique(sync)
        ranks = np.unique(np.linspace(0, len(uniq) - 1, min(LEVELS, len(uniq))).round())
        chosen = uniq[ranks.astype(int)] if self.level is None else np.array([self.level])
        out = np.zeros((len(chosen), len(cols)))
        for k, a in enumerate(chosen):
            for i, (s, (_, q)) in enumerate(zip(shapes, cols, strict=True)):
                if s is not None and s[1] <= a:
                    out[k, i] = min(self.sd.M, max(0, (lam - int(a)) // s[0] - len(q) + 1))
        return out

    def _solve(
        self,
        cols: list[Column],
        integer: bool,
        deadline: Deadline | None,
        levels: np.ndarray | None = None,
        nodes: int | None = None,
    ) -> tuple[float, np.ndarray | None, np.ndarray | None]:
        """The master over ``cols`` and the cut's supply: (held, y, prices); ``nodes``: the
        MILP's node budget."""
        need = np.zeros((len(cols), len(self.sd.types)))
        for i, (_, seq) in enumerate(cols):
            np.add.at(need[i], list(seq), 1.0)
        values = np.array([float(c[0]) for c in cols])
        # the LP uncapped (capped at M its prices vanish once it holds M); the MILP capped
        cap = float(self.sd.M) if integer else None
        supply = self.sd.classes if self.packed else self.supply
        start = self.start if integer and self.packed else None
        return solve_master(
            values, need, self.sd.types, supply, integer, cap, deadline, start, levels, nodes
        )

    def plan(
        self, lam: int, deadline: Deadline | None, nodes: int | None = None
    ) -> list[Chain] | None:
        """Whole pipelines holding ``M`` micro-batches under ``lam``, realised on the cut's
        groups and split per stage (W2); None when the columns found do not hold ``M`` (and
        ``cut`` when the MILP was stopped by its time share before it said so). ``nodes``
        (deterministic mode): the MILP's node budget, and neither the pricing nor the MILP
        takes a share of ``deadline`` (the runaway cap): their rounds and nodes end them; a
        MILP its budget stopped without a plan counts as failed (the same in every run)."""
        sd = self.sd
        self.cut = False
        mu = np.array([t for t, _ in sd.types], float) * sd.M / max(1.0, self.gpus())
        mu[self.supply <= 0] = np.inf
        offer = self.supply > 0
        cols: list[Column] = [(self.holds(q, lam), q) for q in sorted(self.seqs)]
        cols = [c for c in cols if c[0] >= 1 and offer[list(c[1])].all()]
        # the pricing takes at most PRICE_SHARE of the time left: the MILP over the columns
        # kept from earlier targets (and supplies) gets its turn
        pricing = phase_deadline(deadline, PRICE_SHARE, nodes is not None)
        for _ in range(ROUNDS):
            if pricing is not None and pricing.expired():
                break
            fresh = [c for gain, c in self.price(lam, mu) if gain > 1e-6 and c not in cols]
            if not fresh:
                break
            cols += fresh
            self.seqs.update(q for _, q in fresh)
            _, _, duals = self._solve(cols, False, pricing)
            if duals is None:
                break
            mu = np.where(self.supply > 0, np.maximum(duals, 0.0), np.inf)
        if not cols:  # (none priced in the time: unknown too)
            self.cut = pricing is not None and pricing.expired()
            return None
        # one MILP takes at most MILP_SHARE of the time left, so later targets get a turn
        capped = phase_deadline(deadline, MILP_SHARE, nodes is not None)
        held = self.levels(cols, lam)  # the plan's L1 counts its largest all-reduce
        value, y, _ = self._solve(cols, True, capped, held, nodes)
        if y is None or value < sd.M - 0.5:
            # HiGHS ends at its time limit after ``capped`` (its clock starts later): a MILP
            # that ended before it answered for itself (no point holding M, under the cut-off)
            self.cut = capped is not None and nodes is None and capped.expired()
            return None
        x = np.rint(y).astype(int)
        level = held[int(np.argmax(x[len(x) - len(held) :]))]  # the level chosen
        g = x[len(cols) : len(x) - len(held)]
        if self.packed:
            self.start = g.astype(float)  # the next (lower) target starts here
        pools = self.realise(g) if self.packed else None
        if pools is None:
            pools = {j: list(gs) for j, gs in self.pools.items()}
        chains = []
        for col, copies, h in zip(cols, x[: len(cols)], level, strict=True):
            for _ in range(copies if h >= 1 else 0):  # none above the level's all-reduce
                if any(not pools.get(j) for j in col[1]):
                    return None  # a packing not realised on its hosts (it cannot happen)
                groups = [pools[j].pop() for j in col[1]]
                ch = self.part.chain(groups)
                if ch is not None:
                    chains.append(ch)
        return chains

    def realise(self, g: np.ndarray) -> dict[int, list[tuple[str, ...]]]:
        """The groups of ``g`` hosts of each class packed by each packing, on concrete hosts:
        a host's groups, most demanding speed first, each take the slowest of its GPUs that
        are fast enough (eligibility is nested, so this fills every group a packing of the
        host's speeds allows); a group whose members all beat its type's κ only runs faster."""
        inst, slow = self.part.inst, self.part.inst.slow_factor
        failed = set(inst.failed_gpus)
        hosts = self._hosts()
        index = {t: j for j, t in enumerate(self.sd.types)}
        pools: dict[int, list[tuple[str, ...]]] = defaultdict(list)
        at = 0
        for (_, packs), key in zip(self.sd.classes, sorted(hosts), strict=True):
            free = list(hosts[key])
            for pk in packs:
                for _ in range(int(g[at])):
                    h = free.pop()
                    left = sorted(
                        (x for x in inst.cluster.gpus_on(h) if x not in failed),
                        key=lambda x: slow.get(x, 1.0),
                    )
                    for t, kappa in sorted(pk.elements(), key=lambda tk: -tk[1]):
                        fit = [x for x in left if slow.get(x, 1.0) >= kappa][:t]
                        if len(fit) < t:
                            break
                        pools[index[(t, kappa)]].append(tuple(fit))
                        left = [x for x in left if x not in fit]
                at += 1
        return pools

    def _hosts(self) -> dict[tuple[float, ...], list[str]]:
        """The hosts of each class (its surviving GPUs' speeds, sorted: ``sd.classes``' order)."""
        inst, slow = self.part.inst, self.part.inst.slow_factor
        failed = set(inst.failed_gpus)
        hosts: dict[tuple[float, ...], list[str]] = defaultdict(list)
        for h in inst.cluster.hosts():
            gpus = [x for x in inst.cluster.gpus_on(h) if x not in failed]
            if gpus:
                hosts[tuple(sorted(slow.get(x, 1.0) for x in gpus))].append(h)
        return hosts

    def seq(self, ch: Chain) -> tuple[int, ...] | None:
        """A pipeline's column: its groups' types, first stage first (None: a type no host
        packing offers)."""
        index = {g: j for j, g in enumerate(self.sd.types)}
        found = [index.get((len(g), self.part.kappa(g))) for g in ch.groups]
        return None if any(j is None for j in found) else tuple(int(j or 0) for j in found)

    def packings_of(self, chains: list[Chain]) -> np.ndarray | None:
        """The hosts per packing (``g``, ``sd.classes``' order) a plan's groups fit: each
        host it uses, the first maximal packing of its class that offers the host's groups
        (None if one offers none; the hosts it leaves idle are not counted)."""
        host_of = {
            x: h for h in self.part.inst.cluster.hosts() for x in self.part.inst.cluster.gpus_on(h)
        }
        used: dict[str, Counter] = defaultdict(Counter)
        for ch in chains:
            for g in ch.groups:
                used[host_of[g[0]]][(len(g), self.part.kappa(g))] += 1
        g_of = np.zeros(sum(len(ps) for _, ps in self.sd.classes))
        at = 0
        for (_, packs), key in zip(self.sd.classes, sorted(hosts := self._hosts()), strict=True):
            for h in hosts[key]:
                if h not in used:
                    continue
                fit = [
                    i for i, pk in enumerate(packs) if all(pk[t] >= n for t, n in used[h].items())
                ]
                if not fit:
                    return None
                g_of[at + fit[0]] += 1
            at += len(packs)
        return g_of

    def gpus(self) -> float:
        return float(sum(t * n for (t, _), n in zip(self.sd.types, self.supply, strict=True)))
