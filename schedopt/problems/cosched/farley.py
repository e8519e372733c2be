"""The Farley bound of the group master over the relaxed column space R (formulations/cosched.md,
"Column-generation bound on L1").

Given duals ``(π, y)`` of any restricted master, every column of R falls in a *case*
``(T-level, h)``: its hosts ``h`` and the level of its members' smallest SLO. Per case, a
0/1 knapsack per pool (its load, and its resident memory) bounds ``Σ_{j∈S} π_j`` from above
(:func:`_knapsack`, weights rounded down: a relaxation). Then ``θ = min c(h) / (U + y·h)`` over
the cases makes ``θ (π, y)`` dual feasible for the master over all of R, whose LP value is then
at least ``θ z_RMP`` — a lower bound on L1 of the whole problem.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from schedopt.core.stopping import Deadline
from schedopt.executor import Executor

from .data import JobData, ModelData
from .refine import CaseState, _Case, refine

#: Knapsack capacities are cut into at most this many buckets (weights rounded down).
BUCKETS = 400
#: SLO levels the cases are grouped into (a case admits every job whose SLO reaches the level
#: below it and caps the cycle at its own level: a relaxation of each exact SLO).
LEVELS = 16
#: Seconds CP-SAT may take on one case's exact bound (stopped, its proven bound still holds).
CASE_S = 0.25
#: Option combinations listed per job; a job with more makes the bound fall back to the
#: aggregate one (the generator's jobs have at most 18).
MAX_COMBOS = 512


class Combos:
    """Every option combination of one job, as arrays over the combinations."""

    def __init__(self, data: ModelData, job: JobData):
        P = len(data.pools)
        sizes = [len(ph) for ph in job.phases]
        #: every combination is listed (the bound needs them all), else only the first ones
        self.complete = math.prod(sizes) <= MAX_COMBOS
        every = itertools.product(*job.phases) if all(sizes) else iter(())
        combos = list(itertools.islice(every, MAX_COMBOS))
        k = len(combos)
        self.options = combos
        self.need = np.zeros((k, P), dtype=np.int64)  # hosts the devices need (R1)
        self.mem = np.zeros((k, P), dtype=np.int64)  # resident MiB (R2)
        self.load = np.zeros((k, P), dtype=np.int64)  # ms on the pool, with the switch (R3)
        self.chain = np.zeros(k, dtype=np.int64)  # R5 left side
        for i, c in enumerate(combos):
            used = set()
            for o in c:
                self.need[i, o.pool] = max(
                    self.need[i, o.pool], -(-o.gpus // data.per_host[o.pool])
                )
                self.mem[i, o.pool] += o.resident_mib
                self.load[i, o.pool] += o.duration
                used.add(o.pool)
            for p in used:
                self.load[i, p] += job.switch
            cross = c[0].pool != c[-1].pool
            self.chain[i] = sum(o.duration for o in c) + (job.sync_ms if cross else 0)


_BIG = np.int64(1) << 60


class Stack:
    """The jobs' combinations stacked into (jobs, K, pools) arrays, padded (``real`` False)."""

    def __init__(self, combos: list[Combos], P: int):
        J, K = len(combos), max(1, max(len(c.chain) for c in combos))
        self.real = np.zeros((J, K), dtype=bool)
        self.need = np.zeros((J, K, P), dtype=np.int64)
        self.mem = np.zeros((J, K, P), dtype=np.int64)
        self.load = np.zeros((J, K, P), dtype=np.int64)
        self.chain = np.zeros((J, K), dtype=np.int64)
        for j, c in enumerate(combos):
            k = len(c.chain)
            self.real[j, :k] = True
            self.need[j, :k], self.mem[j, :k] = c.need, c.mem
            self.load[j, :k], self.chain[j, :k] = c.load, c.chain


def _knapsack(values: np.ndarray, weights: np.ndarray, capacity: int) -> float:
    """Max value of a 0/1 knapsack, an upper bound: weights rounded down to buckets."""
    take = values > 0
    values, weights = values[take], weights[take]
    if not len(values):
        return 0.0
    if capacity <= 0:
        return float(values[weights <= 0].sum())
    unit = max(1, -(-capacity // BUCKETS))
    cap = capacity // unit
    w = weights // unit
    free = float(values[w == 0].sum())
    best = np.zeros(cap + 1)
    for v, wi in zip(values[w > 0], w[w > 0], strict=True):
        if wi <= cap:
            best[wi:] = np.maximum(best[wi:], best[: cap + 1 - wi] + v)
    return free + float(best[cap])


def _fractional(values: np.ndarray, weights: np.ndarray, capacities: np.ndarray) -> np.ndarray:
    """Dantzig's bound (the LP relaxation) of the 0/1 knapsack of every column ``s`` of
    ``weights`` (items × S) with capacity ``capacities[s]`` ≥ 0: the items by value per weight,
    whole while they fit, then a fraction of the next. An upper bound on each knapsack's value,
    for every column at once in a few array operations (the dynamic programme's screen)."""
    take = values > 0
    v, w = values[take].astype(float), weights[take].astype(float)
    if not len(v):
        return np.zeros(len(capacities))
    cap = np.asarray(capacities, dtype=float)
    density = np.divide(v[:, None], w, out=np.full(w.shape, np.inf), where=w > 0)
    order = np.argsort(-density, axis=0, kind="stable")
    ws = np.take_along_axis(w, order, axis=0)
    vs = v[order]
    used = np.cumsum(ws, axis=0)
    whole = used <= cap
    k = whole.sum(axis=0)  # items taken whole (a prefix: the used weight only grows)
    out = (vs * whole).sum(axis=0)
    part = k < len(v)
    if part.any():
        s = np.flatnonzero(part)
        before = np.where(k[s] > 0, used[np.maximum(k[s] - 1, 0), s], 0.0)
        out[s] += vs[k[s], s] * np.clip((cap[s] - before) / ws[k[s], s], 0.0, 1.0)
    return out


def _mixes(P: int) -> np.ndarray:
    """The surrogate multipliers λ (whole numbers): each pool alone, each pair of pools in
    ratios 1:3, 1:1, 3:1, and all pools alike."""
    rows = [np.eye(P, dtype=np.int64)[p] * 4 for p in range(P)]
    for a, b in itertools.combinations(range(P), 2):
        for wa in (1, 2, 3):
            r = np.zeros(P, dtype=np.int64)
            r[a], r[b] = wa, 4 - wa
            rows.append(r)
    if P > 2:
        rows.append(np.ones(P, dtype=np.int64))
    return np.array(rows)


def farley_theta(
    data: ModelData,
    pi: np.ndarray,
    y: np.ndarray,
    deadline: Deadline | None = None,
    exact: Deadline | None = None,
    found: list[tuple[tuple[int, int], ...]] | None = None,
    combos: list[Combos] | None = None,
    state: CaseState | None = None,
    executor: Executor | None = None,
) -> float | None:
    """``θ`` with ``θ (π, y)`` feasible for the dual of the master over R' (None: out of time).
    ``y`` must be ≤ 0 (the capacity rows' duals of a minimisation). With ``exact``, the cases
    of least surrogate ratio get CP-SAT's exact bound (:mod:`.pricing`) until that deadline or
    until no case left can lower θ; the groups CP-SAT finds go to ``found`` as (job,
    combination) pairs; ``state`` keeps each case's last group to start CP-SAT from;
    ``executor``: the case models run on its workers when it has two or more and ``state`` is
    not deterministic (:mod:`.refine`)."""
    P = len(data.pools)
    if state is not None:
        state.undecided = 0  # the refinement counts its open cases (none: θ is exact)
    s_bar = max(j.switch for j in data.jobs)
    combos = combos or [Combos(data, j) for j in data.jobs]
    if not all(c.complete for c in combos):
        return None
    stack = Stack(combos, P)  # (≈ 1 ms at 40 jobs)
    slo = np.array([j.slo for j in data.jobs])
    factor = 1 + np.array([j.sigma for j in data.jobs])
    switch = np.array([j.switch for j in data.jobs])
    levels = sorted(set(np.quantile(slo, np.linspace(0, 1, LEVELS)).astype(np.int64)) | {slo.max()})
    # Beyond N_p hosts of pool p no job's devices or the members' memory gain anything: the
    # case's U stops growing while c(h) grows and y·h falls, so larger h are never the minimum.
    # A group has at most k members: their least total loads fit P pools of the longest cycle.
    least = np.sort(np.where(stack.real, stack.load.sum(axis=2), np.inf).min(axis=1))
    k = int(np.searchsorted(np.cumsum(least), P * (int(slo.max()) + s_bar), side="right"))
    top = []
    for p in range(P):
        need = int(stack.need[..., p].max(initial=0))
        most = np.sort(np.where(stack.real, stack.mem[..., p], 0).max(axis=1))[::-1]
        mem = int(most[: max(k, 1)].sum())
        top.append(max(need, -(-mem // data.memory_mib[p]) if data.memory_mib[p] else need))
    mix = _mixes(P)
    loads = stack.load @ mix.T  # (J, K, S): each combination's surrogate loads

    def surrogate(
        idx: np.ndarray, ok: np.ndarray, level: int, h: tuple[int, ...], screen: bool = False
    ) -> float:
        """The knapsack bound U of a case on its items ``idx`` (admissible ``ok``); with
        ``screen``, each knapsack by its LP relaxation (cheaper, never below it)."""
        v = pi[idx]
        okm = ok[..., None]
        W = np.where(okm, loads[idx], _BIG).min(axis=1)  # (items, S)
        M = np.where(okm, stack.mem[idx], _BIG).min(axis=1)  # (items, P)
        U = float(v.sum())
        # R3' (C11 with switches): in a group of two or more members, a pool every item
        # uses in every admissible combination has two or more users, so its load with
        # every member's switch is at most the cycle; another pool may have one user,
        # whose switch is not paid: its load may exceed the cycle by that switch.
        uses = np.where(okm, stack.load[idx] > 0, True).all(axis=(0, 1))  # (P,)
        slack = np.where(uses, 0, int(switch[idx].max()))
        # Surrogate knapsacks: for λ ≥ 0, Σ_p λ_p load_p ≤ Σ_p λ_p (ℓ + slack_p) holds in
        # every group of two or more members of the case, so each λ bounds Σ π from above.
        caps = mix.sum(axis=1) * level + mix @ slack
        memory = [p for p in range(P) if data.memory_mib[p]]
        if memory:
            W = np.concatenate([W, M[:, memory]], axis=1)
            caps = np.concatenate([caps, [data.memory_mib[p] * h[p] for p in memory]])
        if screen:  # Dantzig's bounds, each ≥ its knapsack's value
            U = min(U, float(_fractional(v, W, caps).min()))
        else:
            for s_ in range(W.shape[1]):
                U = min(U, _knapsack(v, W[:, s_], int(caps[s_])))
        return max(U, float(v.max()))  # a group of one member: its own π

    theta = math.inf
    cases: list[_Case] = []
    lo = 0
    for level in levels:
        member = (slo >= lo) & (pi > 0)
        lo = int(level) + 1
        # R5 with R4: a member's step fits 1 + σ_j cycles of at most min(ℓ, S_j), its own SLO
        # capping the cycle too (at 4,096 × 200 it leaves out 22 combinations of 51 case
        # models, and one case's bound falls 11.6% → 4.6% over its maximum, #17)
        own = factor * np.minimum(slo, int(level))
        chain_ok = stack.real & (stack.chain <= own[:, None])
        for h in itertools.product(*(range(t + 1) for t in top)):
            if deadline is not None and deadline.expired():
                return None
            cost = sum(data.cost[p] * h[p] for p in range(P))
            if cost <= 0:
                continue
            hv = np.array(h)
            ok = chain_ok & (stack.need <= hv).all(axis=2)  # (J, K)
            ok &= (stack.mem <= np.array(data.memory_mib) * hv).all(axis=2)  # R2 alone
            items = member & ok.any(axis=1)
            if not items.any():
                continue
            idx = np.flatnonzero(items)
            yh = float(np.dot(y, hv))
            denom = float(pi[idx].sum()) + yh  # with U = Σ π: the least ratio of the case
            if denom <= 1e-12 or cost / denom >= (1.0 if exact is not None else theta):
                continue  # no group of the case can lower θ (below 1 with ``exact``)
            if exact is not None:
                cases.append(_Case(cost / denom, int(level), h, cost, yh, idx, ok[idx]))
                continue
            # Dantzig's bounds first: the case is dropped when they show it cannot lower θ
            denom = surrogate(idx, ok[idx], int(level), h, True) + yh
            if denom <= 1e-12 or cost / denom >= theta:
                continue
            denom = min(denom, surrogate(idx, ok[idx], int(level), h) + yh)
            if denom > 1e-12:
                theta = min(theta, cost / denom)
    if exact is not None and cases:
        theta = refine(
            data,
            pi,
            stack,
            slo,
            factor,
            switch,
            cases,
            surrogate,
            exact,
            found,
            state,
            CASE_S,
            executor,
        )
    return 1.0 if theta == math.inf else min(1.0, theta)


def farley_bound(
    data: ModelData,
    pi: np.ndarray,
    y: np.ndarray,
    deadline: Deadline | None = None,
    exact: Deadline | None = None,
    found: list[tuple[tuple[int, int], ...]] | None = None,
    combos: list[Combos] | None = None,
    state: CaseState | None = None,
    executor: Executor | None = None,
) -> float | None:
    """``θ (Σ π + Σ y H)``: a lower bound on L1 (formulation); None if out of time. The dual
    objective is recomputed from the duals themselves (``y`` clipped to ≤ 0)."""
    y = np.minimum(y, 0.0)
    dual = float(pi.sum() + np.dot(y, np.array(data.hosts, dtype=float)))
    theta = farley_theta(data, pi, y, deadline, exact, found, combos, state, executor)
    if theta is None:
        return None
    return theta * dual if dual > 0 else None
