"""Q7 and Q9's priced test (formulations/reconfig.md; #17 item 3): with prices ``μ ≥ 0`` of
the TP group types fixed, every pipeline of ``p`` stages running ``m`` micro-batches under a
target ``Λ`` costs at least ``C_pm(μ)`` (a program over its positions, Q7), and the hosts'
groups are worth at most ``S(μ)``; ``priced_out`` says when that proves ``L1 > Λ``. Shared by
the bound's searches (``price_bound``, ``dw_prices``) and W7's columns (``columns``).
"""

from __future__ import annotations

import numpy as np

from .stage_bound import StageData

#: Q8′ and Q10: columns entering per depth and round of column generation, and the
#: micro-batch counts priced per depth on the grid (geometric).
COLUMNS_PER_DEPTH = 8
PRICE_GRID = 64


def supply_value(sd: StageData, mu: np.ndarray) -> float:
    """S(μ): the most the hosts' groups are worth, each host packed at its richest (Q7)."""
    index = {g: j for j, g in enumerate(sd.types)}
    total = 0.0
    for n, packs in sd.classes:
        best = max(sum(mu[index[g]] * k for g, k in pk.items()) for pk in packs)
        total += n * max(0.0, best)
    return total


#: The Λ whose capacities ``_caps`` keeps (a master's rounds, Q8′ and Q10, price one Λ again
#: and again, and W8 prices the rows of its 5 targets at each of its prices).
CAPS_KEPT = 6


def _caps(sd: StageData, p: int, lam: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(m, caps[m, position, type]) of the feasible micro-batch counts of depth ``p`` (Q1–Q3,
    one type per m: θ = ⌊(Λ − α_p)/(m + p − 1)⌋). They depend on Λ only, not on any prices:
    kept for the last CAPS_KEPT values of Λ and handed out read-only (the same arrays)."""
    at = sd.caps_at.get(lam)
    if at is None:
        if len(sd.caps_at) >= CAPS_KEPT:
            del sd.caps_at[next(iter(sd.caps_at))]  # the oldest Λ
        at = sd.caps_at[lam] = {}
    if p not in at:
        found = _capacities(sd, p, lam)
        if found is not None:
            for a in found:
                a.flags.writeable = False
        at[p] = found
    return at[p]


def _capacities(sd: StageData, p: int, lam: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``_caps`` computed."""
    left = lam - sd.sync_floor[p]
    if left <= 0:
        return None
    m = np.arange(1, sd.M + 1)
    tau = left // (m + p - 1)
    m, tau = m[tau >= 1], tau[tau >= 1]
    if not len(m):
        return None
    # (m, type): the layers a stage of each type holds in time, inside and as the last stage
    inner, end = _in_time(sd, False, p > 1, tau), _in_time(sd, True, p > 1, tau)
    mem = _in_memory(sd, p)
    caps = np.empty((len(m), p, len(sd.types)), dtype=np.int64)
    caps[:, : p - 1, :] = inner[:, None, :] - 1
    caps[:, p - 1, :] = end - 1
    np.minimum(caps, mem[None, :, :], out=caps)
    np.clip(caps, 0, sd.L, out=caps)
    best = caps.max(axis=2)
    ok = (best >= 1).all(axis=1) & (best.sum(axis=1) >= sd.L)
    if not ok.any():
        return None
    return m[ok], caps[ok]


def _in_time(sd: StageData, last: bool, deep: bool, tau: np.ndarray) -> np.ndarray:
    """(stage time, type): ``searchsorted(sd.time_n[(t, κ, last, deep)], τ, "right")`` of
    every type at once, from a table built once per ``sd``: the stage times at which some
    type's count steps (all of them, sorted) and each type's count at each; between two
    steps no count changes, so a τ's counts are those of the last step at or below it."""
    key = ("time", last, deep)
    if key not in sd.tables:
        times = [sd.time_n[(t, k, last, deep)] for t, k in sd.types]
        steps = np.unique(np.concatenate(times))
        counts = np.zeros((len(steps) + 1, len(times)), dtype=np.intp)  # below every step: 0
        counts[1:] = np.stack([np.searchsorted(ts, steps, "right") for ts in times], 1)
        sd.tables[key] = (steps, counts)
    steps, counts = sd.tables[key]
    return counts[np.searchsorted(steps, tau, "right")]


def _in_memory(sd: StageData, p: int) -> np.ndarray:
    """(position, type): the layers a stage of each type holds in memory at each position of
    a ``p``-stage pipeline; i = 0 the first stage (f = p), i = p − 1 the last (f = 1). Built
    once per ``sd`` and depth (it depends on neither Λ nor m)."""
    key = ("memory", p)
    if key not in sd.tables:
        sd.tables[key] = np.array(
            [[sd.mem_n[(t, p - i, i == 0, i == p - 1)] for t, _ in sd.types] for i in range(p)]
        )
    return sd.tables[key]


def _least_cost(
    sd: StageData, mu: np.ndarray, caps: np.ndarray, keep: bool = False
) -> tuple[np.ndarray, Choices | None]:
    """Q7: the least price of one pipeline per row of ``caps``: one type per position with
    ``cap ≥ 1``, the capacities summing to ≥ L; exact, by dynamic programming over the
    positions and the layers held (capped at L), for every m at once. ``keep``: also the
    choices (the type taken at each position and layers held), for ``cheapest_types``.

    Every number is the sum the program over every row, position, type and layers held
    gives, in the same order, so the least prices and the choices are the same bit for bit;
    three things are left out (#17: 2.2-2.7x less CPU on the bound's and W8's calls):
    - the types some other type beats at a row and position (``_undominated``; 5 of 16 types
      on average at 256 GPUs);
    - the work of rows that share their capacities at the first positions: those rows are
      one state there (``_Runs``; rows in ``unique_rows``' order or in m share them
      consecutively; at 256 GPUs 42% of the row-positions);
    - the layers held after a position that no row can use: above what its positions so far
      hold (∞ there), and below what it still needs, ``L`` less the most its later positions
      hold (never read again; at 256 GPUs the two leave 19% of the cells)."""
    p = caps.shape[1]
    L = sd.L
    width = L + 1
    runs = _Runs(caps)
    order, cap, extra = _undominated(runs.vectors(caps), np.asarray(mu, float), p)
    most = caps.max(axis=2)  # (row, position): the most layers a position holds
    upto = np.minimum(np.cumsum(most, axis=1).max(axis=0), L)  # the most held after each
    still = np.cumsum(most[:, ::-1], axis=1)[:, ::-1]  # the most held from each on
    need = np.full(p, L, dtype=np.int64)
    need[:-1] = np.maximum(0, L - still[:, 1:]).min(axis=0)  # the least any row still reads
    cost = np.full((1, width), np.inf)  # before the first position: one state, nothing held
    cost[0, 0] = 0.0
    taken: list[tuple[int, np.ndarray, np.ndarray]] = []
    for i, (n, at_run, part) in enumerate(runs.positions()):
        lo, hi = int(need[i]), max(int(upto[i]), int(need[i]) - 1)
        held = np.arange(lo, hi + 1, dtype=np.intp)
        # where each candidate reads the cost so far (its run's row, the layers held before)
        at = held - cap[part, :, None]
        np.maximum(at, 0, out=at)
        at += (at_run * width)[:, None, None]
        cand = cost.ravel().take(at)  # one flat gather (2x the two-array indexing, #17)
        cand += extra[part, :, None]  # a type must hold a layer; the padding is never taken
        cost = np.full((n, width), np.inf)
        cost[:, lo : hi + 1] = cand.min(axis=1)
        if keep:  # the first type of least price, as over every type (argmin's first)
            taken.append((lo, cand.argmin(axis=1), order[part]))
    last = cost[runs.run[p - 1], L]
    return last, (Choices(runs.run, taken, np.isfinite(last)) if keep else None)


class _Runs:
    """Rows of ``caps`` that share their capacities at positions ``0..i`` (consecutive rows,
    in the given order) are one state of Q7's program up to ``i``: ``run[i, row]`` is the row's
    state there, and each state of ``i`` extends one state of ``i − 1``."""

    def __init__(self, caps: np.ndarray) -> None:
        nm, p, _ = caps.shape
        new = np.ones((p, nm), dtype=bool)  # where a row's state differs from the row before
        if nm > 1:
            step = (caps[1:] != caps[:-1]).any(axis=2)  # (row, position)
            new[:, 1:] = np.logical_or.accumulate(step, axis=1).T
        self.run = np.cumsum(new, axis=1) - 1
        self.firsts = [np.flatnonzero(f) for f in new]  # each state's first row

    def vectors(self, caps: np.ndarray) -> np.ndarray:
        """Each state's capacities at its position, position after position: (state, type)."""
        return np.concatenate([caps[f, i, :] for i, f in enumerate(self.firsts)])

    def positions(self) -> list[tuple[int, np.ndarray, slice]]:
        """Per position: its states, the state before of each (the one before the first
        position is 0), and their slice of ``vectors``."""
        out, off = [], 0
        for i, f in enumerate(self.firsts):
            before = self.run[i - 1, f] if i else np.zeros(len(f), dtype=np.intp)
            out.append((len(f), before, slice(off, off + len(f))))
            off += len(f)
        return out


class Choices:
    """Q7's program's choices (``_least_cost(keep=True)``): at each position, from its first
    layers held kept, the index of the type taken among its state's kept types, and those
    types; read for the rows of finite least price (the others took nothing)."""

    def __init__(
        self, run: np.ndarray, taken: list[tuple[int, np.ndarray, np.ndarray]], finite: np.ndarray
    ) -> None:
        self.run, self.taken, self.finite = run, taken, finite

    def types_at(self, rows: np.ndarray, position: int, held: np.ndarray) -> np.ndarray:
        """The type each of ``rows`` takes at ``position`` with ``held`` layers held there."""
        lo, best, order = self.taken[position]
        state = self.run[position, rows]
        return order[state, best[state, held - lo]]


def _undominated(
    caps: np.ndarray, price: np.ndarray, p: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the capacities ``caps[..., type]`` of positions of ``p``-stage pipelines and the
    types' prices: (the types with ``cap ≥ 1`` that no other type beats at their row and
    position, in index order, padded to the most any keeps; their capacities; their prices,
    ∞ on the padding). Type ``k`` beats ``j`` where its capacity is at least ``j``'s and its
    price at most ``j``'s with ``k`` first (argmin's first of a tie), or lower by more than
    the rounding of a sum of ``p + 1`` prices can close: then its candidate is never above
    ``j``'s, nor equal to it with ``j`` first, so leaving ``j`` out changes neither the least
    price nor the choice."""
    idx = np.arange(len(price))
    margin = 1e-12 * (p + 1) * max(1.0, float(price.max(initial=0.0)))
    lower = price[:, None] < price[None, :] - margin
    beats = lower | ((price[:, None] <= price[None, :]) & (idx[:, None] < idx[None, :]))
    beaten = ((caps[..., :, None] >= caps[..., None, :]) & beats).any(axis=-2)
    use = ~beaten & (caps >= 1)
    width = max(1, int(use.sum(axis=-1).max(initial=0)))
    order = np.argsort(~use, axis=-1, kind="stable")[..., :width]  # kept types first, in order
    kept = np.take_along_axis(use, order, -1)
    return order, np.take_along_axis(caps, order, -1), np.where(kept, price[order], np.inf)


def unique_rows(caps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(caps.reshape(len(caps), -1), axis=0, return_inverse=True)``, the same
    arrays (for rows in any order), sooner: ``_caps``' rows are monotone in ``m`` (θ falls as
    m grows), so equal rows are consecutive and only the first of each run is sorted, by
    ``np.lexsort`` over the columns (np.unique's order for integers; its row-as-record sort
    took 6 ms a call on W8's pooled rows at 256 GPUs, the lexsort 0.6 ms; #17)."""
    flat = caps.reshape(len(caps), -1)
    if len(flat) < 2:
        return np.unique(flat, axis=0, return_inverse=True)
    new = _starts(flat)
    run = np.cumsum(new) - 1  # each row's run
    firsts = flat[new]
    order = np.lexsort(firsts.T[::-1])  # the first column the primary key
    ranked = firsts[order]
    distinct = _starts(ranked)
    inv = np.empty(len(firsts), dtype=np.intp)
    inv[order] = np.cumsum(distinct) - 1
    return ranked[distinct], inv[run]


def _starts(flat: np.ndarray) -> np.ndarray:
    """Where a row differs from the one before it (the first row always)."""
    new = np.empty(len(flat), dtype=bool)
    new[0] = True
    np.any(flat[1:] != flat[:-1], axis=1, out=new[1:])
    return new


def cheapest_types(sd: StageData, caps: np.ndarray, args: Choices, rows: np.ndarray) -> np.ndarray:
    """The types (indices of ``sd.types``, first stage first) of the least price of each of
    ``rows`` (rows of finite least price: ``args.finite``), one row of the result each; every
    row at once, position after position from the last."""
    rows = np.asarray(rows, dtype=np.intp)
    if not args.finite[rows].all():
        raise ValueError("a row without a pipeline has no types to read")
    p = caps.shape[1]
    out = np.empty((len(rows), p), dtype=np.intp)
    held = np.full(len(rows), sd.L, dtype=np.intp)
    for i in range(p - 1, -1, -1):
        out[:, i] = took = args.types_at(rows, i, held)
        held = np.maximum(0, held - caps[rows, i, took])
    return out


def best_columns(
    sd: StageData, mu: np.ndarray, m: np.ndarray, caps: np.ndarray, count: int
) -> tuple[np.ndarray, list[tuple[int, list[int]]]]:
    """Q8′/Q10's pricing of the rows ``caps`` (their micro-batches ``m``) at ``mu``: (the
    least price of each row, and (row, its cheapest types) for the ``count`` rows of best
    reduced value ``m − price``, those of positive value only, best first). The choices are
    kept for those rows alone: each row's program is its own, so they are the choices of a
    pass over every row (which kept them for all, at twice the cost of the prices; #17)."""
    cost = _least_cost(sd, mu, caps)[0]
    gain = m - cost
    top = [int(r) for r in np.argsort(-gain)[:count] if gain[r] > 1e-6 and np.isfinite(cost[r])]
    if not top:
        return cost, []
    few = caps[top]
    args = _least_cost(sd, mu, few, keep=True)[1]
    assert args is not None
    types = cheapest_types(sd, few, args, np.arange(len(top))).tolist()
    return cost, list(zip(top, types, strict=True))


def least_per_count(
    sd: StageData, lam: int, mu: np.ndarray, memo: dict[tuple[int, bytes], float] | None = None
) -> np.ndarray:
    """Q9: ``C*(m)`` for m = 0..M, the least price of a pipeline of any depth running at least
    ``m`` micro-batches under ``lam`` (∞ where none can). ``memo``: Q7's least price of each
    row of capacities (depth, its bytes) already priced **at these prices ``mu``** (a
    bisection's probes share most rows: the capacities are step functions of ``lam``)."""
    best = np.full(sd.M + 1, np.inf)
    for p in sd.depths:
        found = _caps(sd, p, lam)
        if found is None:
            continue
        m, caps = found
        # rows of equal capacities (m's with one stage-time class) priced once
        uniq, inv = unique_rows(caps)
        if memo is None:
            cost = _least_cost(sd, mu, uniq.reshape(len(uniq), p, -1))[0]
        else:
            keys = [(p, row.tobytes()) for row in uniq]
            new = [i for i, k in enumerate(keys) if k not in memo]
            if new:
                priced = _least_cost(sd, mu, uniq[new].reshape(len(new), p, -1))[0]
                memo.update((keys[i], float(c)) for i, c in zip(new, priced, strict=True))
            cost = np.array([memo[k] for k in keys])
        np.minimum.at(best, m, cost[inv.ravel()])
    return np.minimum.accumulate(best[::-1])[::-1]  # running fewer is always possible


def counted_out(sd: StageData, c: np.ndarray, supply: float, k_max: int) -> bool:
    """Q9: True when, for every number of pipelines ``k = 1..k_max``, the least price of ``k``
    pipelines running ``M`` micro-batches between them exceeds ``S(μ)``: no physical plan has
    L1 ≤ Λ (``c`` is ``least_per_count`` at Λ). One min-plus pass per ``k`` over the
    micro-batch counts."""
    M = sd.M
    ms = np.flatnonzero(np.isfinite(c[1:])) + 1
    if not len(ms):
        return True
    room = supply + 1e-6 * max(1.0, abs(supply))
    F = np.full(M + 1, np.inf)  # least price of the pipelines so far, by micro-batches (≥ M at M)
    F[0] = 0.0
    for _ in range(k_max):
        G = np.full(M + 1, np.inf)
        for m in ms:
            np.minimum(G[m:], F[: M + 1 - m] + c[m], out=G[m:])
            G[M] = min(G[M], float(F[M + 1 - m :].min()) + c[m])
        F = G
        if F[M] <= room:
            return False
    return True


def priced_out(
    sd: StageData,
    lam: int,
    mu: np.ndarray,
    supply: float,
    k_max: int | None = None,
    memo: dict[tuple[int, bytes], float] | None = None,
) -> bool:
    """Q7 (and Q9 with ``k_max``, the most pipelines a plan can have): True when the prices
    prove that no physical plan has L1 ≤ ``lam`` (``memo``: as in ``least_per_count``)."""
    return _ruled_out(sd, least_per_count(sd, lam, mu, memo), supply, k_max)


def _ruled_out(sd: StageData, c: np.ndarray, supply: float, k_max: int | None) -> bool:
    """Q7 (and Q9 with ``k_max``) from ``c`` = ``least_per_count`` at Λ and ``supply`` = S(μ)."""
    m = np.flatnonzero(np.isfinite(c[1:])) + 1
    if not len(m):
        return True  # no pipeline of any depth holds every layer under lam
    q7 = supply > 0 and (c[m] > 1e-12).all()
    if q7 and float((m / c[m]).max()) * supply < sd.M * (1 - 1e-6):
        return True  # Q7
    return k_max is not None and counted_out(sd, c, supply, k_max)
