"""The priced stage-position bound (formulations/reconfig.md, Q7–Q9; #17 item 3).

Q4's LP aggregates pipelines into bands of micro-batches and is slow to solve (seconds at
256 GPUs). Its dual says what a TP group of each type is worth; with such prices ``μ`` fixed,
weak duality needs no LP at all: every pipeline of ``p`` stages running ``m`` micro-batches
costs at least ``C_pm(μ)`` (a knapsack over its positions, Q7), so the hosts'
groups, worth at most ``S(μ)``, run at most ``S(μ)·max m/C_pm`` micro-batches. Each ``m`` is
its own type (no band), and a probe is a few numpy passes. The prices come from one LP (Q8).
"""

from __future__ import annotations

import numpy as np

from schedopt.core.stopping import Deadline

from .instance import ReconfigInstance
from .stage_bound import StageData, build_lp, initial_bands, solve_lp, stage_data
from .validate import physical_bound_us

#: Rounds of prices (each an LP at the bound reached, then a bisection), while they raise it.
PRICE_ROUNDS = 6


def supply_value(sd: StageData, mu: np.ndarray) -> float:
    """S(μ): the most the hosts' groups are worth, each host packed at its richest (Q7)."""
    index = {g: j for j, g in enumerate(sd.types)}
    total = 0.0
    for n, packs in sd.classes:
        best = max(sum(mu[index[g]] * k for g, k in pk.items()) for pk in packs)
        total += n * max(0.0, best)
    return total


def _caps(sd: StageData, p: int, lam: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(m, caps[m, position, type]) of the feasible micro-batch counts of depth ``p`` (Q1–Q3,
    one type per m: θ = ⌊(Λ − α_p)/(m + p − 1)⌋)."""
    left = lam - sd.sync_floor[p]
    if left <= 0:
        return None
    m = np.arange(1, sd.M + 1)
    tau = left // (m + p - 1)
    m, tau = m[tau >= 1], tau[tau >= 1]
    if not len(m):
        return None
    nt = len(sd.types)
    caps = np.zeros((len(m), p, nt), dtype=np.int64)
    for j, (t, kappa) in enumerate(sd.types):
        inner = np.searchsorted(sd.time_n[(t, kappa, False, p > 1)], tau, "right") - 1
        end = np.searchsorted(sd.time_n[(t, kappa, True, p > 1)], tau, "right") - 1
        for i in range(p):  # i = 0 the first stage (f = p), i = p − 1 the last (f = 1)
            f = p - i
            mem = sd.mem_n[(t, f, f == p, f == 1)]
            caps[:, i, j] = np.minimum(end if f == 1 else inner, mem)
    caps = np.clip(caps, 0, sd.L)
    best = caps.max(axis=2)
    ok = (best >= 1).all(axis=1) & (best.sum(axis=1) >= sd.L)
    if not ok.any():
        return None
    return m[ok], caps[ok]


def _least_cost(
    sd: StageData, mu: np.ndarray, caps: np.ndarray, keep: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
    """Q7: the least price of one pipeline per row of ``caps``: one type per position with
    ``cap ≥ 1``, the capacities summing to ≥ L; exact, by dynamic programming over the
    positions and the layers held (capped at L), for every m at once. ``keep``: also the
    choices ``[position, row, layers held]`` (the type taken), for ``cheapest_types``."""
    nm, p, _ = caps.shape
    L = sd.L
    cost = np.full((nm, L + 1), np.inf)
    cost[:, 0] = 0.0
    held = np.arange(L + 1)[None, None, :]
    rows = np.arange(nm)[:, None, None]
    price = np.asarray(mu, float)[None, :, None]
    args = np.full((p, nm, L + 1), -1, dtype=np.int16) if keep else None
    for i in range(p):
        cap = caps[:, i, :]  # (m, type): every type at once
        cand = cost[rows, np.clip(held - cap[:, :, None], 0, L)] + price
        cand[cap < 1] = np.inf
        if args is not None:
            args[i] = cand.argmin(axis=1)  # the first type of least price, as before
        cost = cand.min(axis=1)
    return cost[:, L], args


def cheapest_types(sd: StageData, caps: np.ndarray, args: np.ndarray, row: int) -> list[int]:
    """The types (indices of ``sd.types``, first stage first) of row ``row``'s least price."""
    p = caps.shape[1]
    out, held = [0] * p, sd.L
    for i in range(p - 1, -1, -1):
        j = int(args[i, row, held])
        out[i] = j
        held = max(0, held - int(caps[row, i, j]))
    return out


def least_per_count(sd: StageData, lam: int, mu: np.ndarray) -> np.ndarray:
    """Q9: ``C*(m)`` for m = 0..M, the least price of a pipeline of any depth running at least
    ``m`` micro-batches under ``lam`` (∞ where none can)."""
    best = np.full(sd.M + 1, np.inf)
    for p in sd.depths:
        found = _caps(sd, p, lam)
        if found is None:
            continue
        m, caps = found
        # rows of equal capacities (m's with one stage-time class) priced once
        uniq, inv = np.unique(caps.reshape(len(m), -1), axis=0, return_inverse=True)
        cost = _least_cost(sd, mu, uniq.reshape(len(uniq), p, -1))[0]
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
    sd: StageData, lam: int, mu: np.ndarray, supply: float, k_max: int | None = None
) -> bool:
    """Q7 (and Q9 with ``k_max``, the most pipelines a plan can have): True when the prices
    prove that no physical plan has L1 ≤ ``lam``."""
    c = least_per_count(sd, lam, mu)
    m = np.flatnonzero(np.isfinite(c[1:])) + 1
    if not len(m):
        return True  # no pipeline of any depth holds every layer under lam
    q7 = supply > 0 and (c[m] > 1e-12).all()
    if q7 and float((m / c[m]).max()) * supply < sd.M * (1 - 1e-6):
        return True  # Q7
    return k_max is not None and counted_out(sd, c, supply, k_max)


#: Q8′ with a known plan: the first prices at this fraction of the way from P1–P6's bound to
#: the plan's L1 (P1–P6's bound is far below the end at 256 GPUs: 8.6 s against 12.3 s).
FIRST_PRICES = 0.45
#: Q8′: rounds of column generation for the prices, columns per depth and round, and the
#: micro-batch counts priced per depth (a geometric grid).
COLUMN_ROUNDS = 8
COLUMNS_PER_DEPTH = 8
PRICE_GRID = 64


def column_prices(sd: StageData, lam: int, deadline: Deadline | None) -> np.ndarray | None:
    """Q8′: prices from the master LP over whole-pipeline columns at ``lam`` (each column one
    type per position, credited Q7's ``m``), generated by Q7's program at the master's prices;
    the hosts' packings as supply (``master.py``)."""
    from .master import solve_master  # HiGHS, on first use

    mu = np.array([t for t, _ in sd.types], float)  # start: a price per GPU
    cols: dict[tuple[int, tuple[int, ...]], None] = {}
    got = None
    for _ in range(COLUMN_ROUNDS):
        if deadline is not None and deadline.expired():
            break
        fresh = []
        for p in sd.depths:
            found = _caps(sd, p, lam)
            if found is None:
                continue
            m, caps = found
            grid = np.unique(np.geomspace(1, len(m), min(len(m), PRICE_GRID)).astype(int) - 1)
            m, caps = m[grid], caps[grid]
            cost, args = _least_cost(sd, mu, caps, keep=True)
            assert args is not None
            gain = m - cost
            for r in np.argsort(-gain)[:COLUMNS_PER_DEPTH]:
                if gain[r] > 1e-6 and np.isfinite(cost[r]):
                    col = (int(m[r]), tuple(cheapest_types(sd, caps, args, int(r))))
                    if col not in cols:
                        cols[col] = None
                        fresh.append(col)
        if not fresh:
            break
        values = np.array([float(c[0]) for c in cols])
        need = np.zeros((len(cols), len(sd.types)))
        for i, (_, seq) in enumerate(cols):
            np.add.at(need[i], list(seq), 1.0)
        _, _, duals = solve_master(values, need, sd.types, sd.classes, False, None, deadline)
        if duals is None:
            break
        mu = got = duals
    return got


def lp_prices(sd: StageData, lam: int, deadline: Deadline | None) -> np.ndarray | None:
    """Q8: prices from Q4's LP at ``lam`` (coarse bands): its supply rows' multipliers; a type
    with no row gets the largest price (any prices ≥ 0 are valid, these only tighten)."""
    bands = {p: initial_bands(sd.M, 2.0) for p in sd.depths}
    lp = build_lp(sd, lam, bands)
    if lp is None:
        return None
    found = solve_lp(lp, deadline)
    if found is None or found.duals is None:
        return None
    mu = np.array(
        [
            max(0.0, found.duals[lp.supply_rows[g]]) if g in lp.supply_rows else -1.0
            for g in sd.types
        ]
    )
    top = float(mu.max()) if len(mu) else 0.0
    return np.where(mu < 0, top, mu)


def priced_bound_us(
    inst: ReconfigInstance,
    upper_us: int | None,
    deadline: Deadline | None = None,
    rel_tol: float = 1e-3,
    counts: bool = True,
    columns: bool = True,
) -> tuple[int | None, dict[str, float]]:
    """Q7–Q9: from P1–P6's bound, prices at 10% above it (Q8′'s master over pipeline columns,
    or Q4's LP without ``columns`` or when Q8′ gives none), then a bisection over
    ``Λ`` with the priced test (Q7, and Q9 over every number of pipelines unless ``counts`` is
    False), below ``upper_us``; then prices again at the bound reached, while time is left.
    Anytime: each probe covers every number of pipelines at once, so the bound is valid
    whenever the deadline stops it. (None, …): no physical plan exists."""
    stats: dict[str, float] = {"q_lps": 0.0, "q_priced": 0.0}
    sd = stage_data(inst, True, deadline)
    if sd is None:
        return None, stats
    base = physical_bound_us(inst)
    assert base is not None
    lo = base
    # P2: every pipeline holds the model state on at least G_mem surviving GPUs
    survivors = inst.cluster.num_gpus - len(set(inst.failed_gpus))
    k_max = min(sd.M, survivors // sd.g_mem) if counts else None
    hi = upper_us if upper_us is not None else 4 * base + 1
    probe = min(hi, int(lo * 1.1) + 1)
    top_of_round = hi
    if columns and upper_us is not None:  # Q8′: first prices nearer where the bound ends
        probe = max(probe, int(base + FIRST_PRICES * (upper_us - base)))
        top_of_round = min(hi, int(probe * 1.1))  # the first round searches near it too
    for _ in range(PRICE_ROUNDS):
        if deadline is not None and deadline.expired():
            break
        mu = column_prices(sd, probe, deadline) if columns else None
        if mu is None:
            mu = lp_prices(sd, probe, deadline)
        stats["q_lps"] += 1
        if mu is None:
            break
        supply = supply_value(sd, mu)
        top = top_of_round
        start = lo
        while top - lo > max(1.0, rel_tol * top):
            if deadline is not None and deadline.expired():
                break
            mid = (lo + top) // 2
            stats["q_priced"] += 1
            if priced_out(sd, mid, mu, supply, k_max):
                lo = mid + 1
            else:
                top = mid
        if lo <= start:
            break
        probe = min(hi, lo + max(1, int(lo * 0.02)))
        top_of_round = min(hi, max(top, int(lo * 1.1)))  # later rounds search near lo
    return lo, stats
