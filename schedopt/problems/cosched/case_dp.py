"""A dynamic programme's upper bound on one case of exact pricing (formulations/cosched.md,
"The case's two-pool programme"): over two pools at a time, the most ``Σ π`` of a set of the
case's jobs whose loads fit a cycle no longer than the case's level and every member's SLO,
with a pool used by one member only allowed its switch beyond the cycle. Each row it keeps is
one of the case model's (R3', R4), relaxed (weights rounded down to cells, the other pools,
memory and the step chains left out), so it bounds the case's maximum from above, whatever
CP-SAT proves or leaves open.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from schedopt.core.stopping import Deadline

#: Cells per pool of the programme's table (weights rounded down to ``⌈cap / CELLS⌉`` ms).
CELLS = 160
#: Cells per pool of the finer programme, run on an open case whose bound at :data:`CELLS`
#: would still set θ (refine.py): about 9 × the time; on a pool whose loads are all
#: multiples of ``g`` ms with at most this many cells of ``g``, the cells are ``g`` and no
#: weight is rounded (at 4,096 × 200 every load is a multiple of 100 ms, #17).
FINE_CELLS = 480


def pair_bound(
    v: np.ndarray,
    ok: np.ndarray,
    load: np.ndarray,
    cap: np.ndarray,
    universal: tuple[bool, bool],
    s_bar: int,
    cells: int = CELLS,
    deadline: Deadline | None = None,
) -> float:
    """The most ``Σ v`` over the items (in the order given: SLO descending) of one
    combination each or none, on two pools: ``load`` (items, K, 2) ms with the switch, ``cap``
    (items,) the cycle's most once the item is in (``min(ℓ, S_j)``). On a ``universal`` pool the
    loads fit the cycle; on another, with two users or more too, and one user may exceed it
    by ``s_bar``. Items of ``v ≤ 0`` are left out (they only lower a sum). ``cells`` per pool:
    weights rounded down to cells of ``⌈top / cells⌉`` ms, or of their common divisor when
    that needs no more cells (then none is rounded). Past ``deadline``: Σ of the positive
    ``v`` (a bound too, the trivial one)."""
    top = int(cap.max(initial=0)) + s_bar
    unit = [_unit(load[v > 0][ok[v > 0]][:, d], top, cells) for d in range(2)]
    size = [top // u + 1 for u in unit]
    layers = [(0, 1, 2) if not universal[d] else (2,) for d in range(2)]
    # table[(a, b)]: the most Σ v with a (b) users on the first (second) pool, 2 = two or more
    table = {(a, b): np.full(size, -np.inf) for a in layers[0] for b in layers[1]}
    table[(layers[0][0], layers[1][0])][0, 0] = 0.0
    for i in np.flatnonzero(v > 0):
        if deadline is not None and deadline.expired():
            return float(v[v > 0].sum())
        new = {k: t.copy() for k, t in table.items()}
        for c in np.flatnonzero(ok[i]):
            w = [int(load[i, c, d]) // unit[d] for d in range(2)]
            for (a, b), src in table.items():
                dst = (a, b)
                lim = []
                for d, n in enumerate((a, b)):
                    uses = load[i, c, d] > 0
                    m = n if universal[d] else min(2, n + int(uses))
                    dst = (m, dst[1]) if d == 0 else (dst[0], m)
                    # the cycle's most for this item on; one user may exceed it by s_bar
                    lim.append((int(cap[i]) + (s_bar if m == 1 else 0)) // unit[d])
                if w[0] > lim[0] or w[1] > lim[1]:
                    continue
                out = new[dst][w[0] : lim[0] + 1, w[1] : lim[1] + 1]
                np.maximum(out, src[: lim[0] + 1 - w[0], : lim[1] + 1 - w[1]] + v[i], out=out)
        table = new
    best = max(float(t.max()) for t in table.values())
    return max(0.0, best)


def _unit(loads: np.ndarray, top: int, cells: int) -> int:
    """The cell of one pool's table: the loads' greatest common divisor when ``top`` needs at
    most ``cells`` of it (sums of multiples of ``g`` are exact in cells of ``g``), else
    ``⌈top / cells⌉`` (weights rounded down: a relaxation)."""
    g = math.gcd(*(int(w) for w in np.unique(loads))) if len(loads) else 0
    if g > 0 and top // g + 1 <= cells:
        return g
    return max(1, -(-top // cells))


def case_dp(
    pi: np.ndarray,
    items: np.ndarray,
    ok: np.ndarray,
    load: np.ndarray,
    slo: np.ndarray,
    level: int,
    universal: list[bool],
    s_bar: int,
    cells: int = CELLS,
    deadline: Deadline | None = None,
) -> float:
    """The least :func:`pair_bound` over the pairs of pools (Σ of the positive π with fewer
    than two pools): an upper bound on every group's ``Σ π`` in the case model. With a
    universal pool, only the pairs that hold one (at 4,096 × 200 the pair of the two other
    pools took two thirds of the time and never gave the least bound, 19 of 19 cases)."""
    v = pi[items]
    total = float(v[v > 0].sum())
    P = load.shape[2]
    if P < 2 or not len(items):
        return total
    order = np.argsort(-slo[items], kind="stable")
    cap = np.minimum(slo[items], level)[order]
    best = total
    pairs = list(itertools.combinations(range(P), 2))
    if any(universal):  # a pair of two pools a job may leave both unused binds little
        pairs = [(p, q) for p, q in pairs if universal[p] or universal[q]]
    for p, q in pairs:
        got = pair_bound(
            v[order],
            ok[order],
            load[order][..., [p, q]],
            cap,
            (universal[p], universal[q]),
            s_bar,
            cells,
            deadline,
        )
        best = min(best, got)
    return best
