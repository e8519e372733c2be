"""The swap step's idle legs (formulations/fairshare.md, "Decomposition", the swap step):
an idle job ``C`` takes the place of a job ``B`` that may move at no restart (``B`` to idle,
``C`` on ``B``'s (type, GPUs)), where ``e_C − e_B > 0`` on that kind.

Each such leg keeps every type's GPUs; ``C``'s unit gets ``n`` more GPUs and ``B``'s ``n``
fewer (none when they are one unit), so a leg is taken only where ``B``'s unit has ``n`` to
spare above ``m_v(t̂)``. It raises L2 and restarts nothing ``B``'s move did not already restart
(``B`` is placed not as before); the swap step checks each on the board as its pairs (L3 not
higher, L2 higher) and spends the L2 they gain on returns. On 16,384-GPU plans after the
pairs, these were most of the L2 any one- or two-job move still gained (about 0.36 of it, the
moves across types with as many GPUs, across counts and three-way cycles about 0.01 together).
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from .heuristics import _State
from .l3_bound import need_gpus

#: Idle jobs (best ``e`` first) and jobs that may move (least ``e`` first) looked at per kind.
TOP = 256
#: Least L2 a leg must gain (the sums of e in another order).
GAIN_TOL = 1e-9

#: An idle leg: (ΔL2 estimate, C, B, C's option on B's kind).
Leg = tuple[float, int, int, int]


def idle_legs(
    state: _State,
    eff: np.ndarray,
    opt_of: np.ndarray,
    unit: np.ndarray,
    kix: dict[tuple[str, int], int],
    by_kind: dict[tuple[str, int], np.ndarray],
    used: Collection[int],
) -> list[Leg]:
    """The legs (module docstring), each job in at most one, most L2 first, chosen greedily
    so that every unit that gives GPUs keeps ``m_v(t̂)`` (``eff``, ``opt_of``, ``unit``,
    ``kix``: ``l3_pairs.Tables``; ``by_kind``: ``l3_pairs.pools``; jobs in ``used`` left out)."""
    data = state.data
    taken = np.zeros(len(data.jobs), dtype=bool)
    taken[list(used)] = True
    idle = np.array(
        [
            j.index
            for j in data.jobs
            if j.options and state.raw[j.index].option is None and not taken[j.index]
        ],
        dtype=np.int64,
    )
    if len(idle) == 0:
        return []
    gains, cs, bs, ns, opts = [], [], [], [], []
    for (y, n), pool in sorted(by_kind.items()):
        k = kix[y, n]
        pool = pool[~taken[pool]]
        e_c = eff[idle, k]
        ok = np.flatnonzero(np.isfinite(e_c))
        c = idle[ok[np.argsort(-e_c[ok], kind="stable")][:TOP]]
        b = pool[np.argsort(eff[pool, k], kind="stable")][:TOP]
        gain = eff[c, k][:, None] - eff[b, k][None, :]
        ci, bi = np.nonzero(gain > GAIN_TOL)
        gains.append(gain[ci, bi])
        cs.append(c[ci])
        bs.append(b[bi])
        ns.append(np.full(len(ci), n, dtype=np.int64))
        opts.append(opt_of[c[ci], k])
    if not gains:
        return []
    g = np.concatenate(gains)
    order = np.argsort(-g, kind="stable")
    t_hat = data.min_share([float(x) for x in state.unit_gpus])
    slack = np.asarray(state.unit_gpus, dtype=np.float64) - need_gpus(data, t_hat)
    slack[[not v.included for v in data.units]] = np.inf
    seen: set[int] = set()
    out: list[Leg] = []
    cols = (np.concatenate(cs), np.concatenate(bs), np.concatenate(ns), np.concatenate(opts))
    for gain_, c_, b_, n_, o_ in zip(
        g[order].tolist(), *(col[order].tolist() for col in cols), strict=True
    ):
        if c_ in seen or b_ in seen:
            continue
        ub, uc = unit[b_], unit[c_]
        if ub != uc:
            if slack[ub] < n_:
                continue
            slack[ub] -= n_
            slack[uc] += n_
        seen.update((c_, b_))
        out.append((gain_, c_, b_, o_))
    return out


__all__ = ["idle_legs"]
