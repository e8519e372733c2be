"""The swap step's idle legs (formulations/fairshare.md, "Decomposition", the swap step):
an idle job ``C`` takes the place of a job ``B`` that may move at no restart (``B`` to idle,
``C`` on ``B``'s (type, GPUs)), where ``e_C − e_B > 0`` on that kind.

Each such leg keeps every type's GPUs; ``C``'s unit gets ``n`` more GPUs and ``B``'s ``n``
fewer (none when they are one unit), so a leg alone is taken only where ``B``'s unit has
``n`` to spare above ``m_v(t̂)``. Where it has not, a second leg gives them back (a chain,
``_Refill``): ``B`` itself, or an idle job ``D`` of ``B``'s unit, takes the place of a job
``E`` that may move at no restart on a kind of ``n' ≥ n −`` (the unit's spare) GPUs, ``E``
to idle, ``E``'s unit able to give ``n'`` (or ``C``'s, which got ``n``); the chain's ΔL2 is
both legs' together. A leg raises L2 and restarts nothing ``B``'s (and ``E``'s) move did not
already restart (they are placed not as before); the swap step checks each leg and chain on
the board as its pairs (L3 not higher, L2 higher, every touched unit at ``t̂``) and spends
the L2 they gain on returns. On 16,384-GPU plans after the pairs, the legs were most of the
L2 any one- or two-job move still gained (about 0.36 of it, the moves across types with as
many GPUs, across counts and three-way cycles about 0.01 together), and on a plan after
the step the legs ``m_v(t̂)`` held back were 25.7 more (their ``B`` mostly of the five units
at it): the chains take part of that (on a captured plan the legs gained 0.31 of L2 where
the legs alone gained 0.22, and the step saved 7,027 s of L3 where it saved 6,548).
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from .l1_fix import need_gpus
from .l3_pairs import Move
from .plan import Plan

#: Idle jobs (best ``e`` first) and jobs that may move (least ``e`` first) looked at per kind.
TOP = 256
#: Least L2 a leg must gain (the sums of e in another order).
GAIN_TOL = 1e-9

#: Movable jobs (least ``e`` first) a chain's second leg looks at per kind.
CHAIN_TOP = 256

#: An idle leg or a chain of two: (ΔL2 estimate, its moves: ``B`` to idle, ``C`` on its
#: option of ``B``'s kind, then for a chain ``E`` to idle and ``D`` on ``E``'s kind).
Leg = tuple[float, list[Move]]


def idle_legs(
    state: Plan,
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
    # each kind's jobs that may move, least e first (B here, E in a chain's second leg)
    movers: dict[int, np.ndarray] = {}
    for kind, pool in by_kind.items():
        free, k = pool[~taken[pool]], kix[kind]
        movers[k] = free[np.argsort(eff[free, k], kind="stable")]
    gains, cs, bs, ns, opts = [], [], [], [], []
    for y, n in sorted(by_kind):
        k = kix[y, n]
        c = idle[_best_first(eff[idle, k])[:TOP]]
        b = movers[k][:TOP]
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
    spare = np.asarray(state.unit_gpus, dtype=np.float64) - need_gpus(data, t_hat)
    spare[[not v.included for v in data.units]] = np.inf
    slack: list[float] = spare.tolist()
    seen: set[int] = set()
    out: list[Leg] = []
    c_all, b_all = np.concatenate(cs), np.concatenate(bs)
    cols = (c_all, b_all, np.concatenate(ns), np.concatenate(opts), unit[c_all], unit[b_all])
    refill = _Refill(eff, opt_of, unit, kix, by_kind, idle, movers, seen)
    failed: dict[tuple[int, int], int] = {}  # (unit, n): legs made when no chain was found
    for gain_, c_, b_, n_, o_, uc, ub in zip(
        g[order].tolist(), *(col[order].tolist() for col in cols), strict=True
    ):
        if c_ in seen or b_ in seen:
            continue
        moves: list[Move] = [(b_, None), (c_, o_)]
        if ub != uc and slack[ub] < n_:
            # B's unit at m_v(t̂): a chain (_Refill), not tried again for B's unit and count
            # until another leg is made
            if failed.get((ub, n_)) == len(out):
                continue
            got = refill.best(ub, uc, n_, gain_, slack, (b_, c_))
            if got is None:
                failed[ub, n_] = len(out)
                continue
            gain_, d_, e_, n2, o2 = got
            # (D is B itself where B moves to E's place rather than to idle)
            moves = [(e_, None), (d_, o2), (c_, o_)] if d_ == b_ else [*moves, (e_, None), (d_, o2)]
            slack[ub] += n2
            slack[int(unit[e_])] -= n2
            seen.update((d_, e_))
        if ub != uc:
            slack[ub] -= n_
            slack[uc] += n_
        seen.update((c_, b_))
        out.append((gain_, moves))
    return out


def _best_first(e: np.ndarray) -> np.ndarray:
    """The places of the finite ``e``, best (largest) first (ties in place order)."""
    ok = np.flatnonzero(np.isfinite(e))
    return ok[np.argsort(-e[ok], kind="stable")]


class _Refill:
    """Chains of two legs (formulations/fairshare.md, the swap step, "Idle legs"): where
    ``B``'s unit ``w`` has no GPUs to spare, an idle job ``D`` of ``w`` takes the place of a
    movable job ``E`` of kind ``(Y', n')``, ``n' ≥ n −`` (``w``'s spare), whose unit can give
    ``n'`` GPUs (or is ``C``'s, which gets ``n``): ``w`` keeps ``m_v(t̂)``, and the chain's
    ``ΔL2`` is both legs' together."""

    def __init__(
        self,
        eff: np.ndarray,
        opt_of: np.ndarray,
        unit: np.ndarray,
        kix: dict[tuple[str, int], int],
        by_kind: dict[tuple[str, int], np.ndarray],
        idle: np.ndarray,
        movers: dict[int, np.ndarray],
        seen: set[int],
    ):
        self.eff, self.opt_of, self.unit, self.seen = eff, opt_of, unit, seen
        self.kinds = [(n, kix[y, n]) for y, n in sorted(by_kind)]
        # each kind's movable jobs and their e, least first (E; ``movers``: ``idle_legs``')
        self.movers: dict[int, list[tuple[int, float]]] = {}
        for k, free in movers.items():
            top = free[:CHAIN_TOP]
            self.movers[k] = list(zip(top.tolist(), eff[top, k].tolist(), strict=True))
        self.idle: dict[int, list[int]] = {}  # each unit's idle jobs
        for i, u in zip(idle.tolist(), unit[idle].tolist(), strict=True):
            self.idle.setdefault(u, []).append(i)
        self.ranked: dict[tuple[int, int], list[tuple[int, float]]] = {}

    def _ranked(self, w: int, k: int) -> list[tuple[int, float]]:
        """Unit ``w``'s idle jobs with an option of kind ``k`` and their e, best first."""
        if (w, k) not in self.ranked:
            mine = np.asarray(self.idle.get(w, ()), dtype=np.int64)
            e = self.eff[mine, k]
            ok = _best_first(e)
            self.ranked[w, k] = list(zip(mine[ok].tolist(), e[ok].tolist(), strict=True))
        return self.ranked[w, k]

    def best(
        self, w: int, uc: int, n: int, gain: float, slack: list[float], busy: tuple[int, int]
    ) -> tuple[float, int, int, int, int] | None:
        """The best chain's (ΔL2 of both legs, D, E, n', D's option), or None; ``busy``:
        ``(B, C)``, and ``D`` may be ``B`` itself (on another kind, not idle)."""
        b = busy[0]
        e_b = self.eff[b].tolist()
        spare = slack[w] - n
        best: tuple[float, int, int, int, int] | None = None
        for n2, k in self.kinds:
            if spare + n2 < 0:
                continue
            d, e_d = next(
                ((i, e) for i, e in self._ranked(w, k) if i not in self.seen and i not in busy),
                (b, e_b[k]),
            )
            if e_b[k] > e_d:
                d, e_d = b, e_b[k]
            if e_d == -np.inf or (best is not None and gain + e_d <= best[0]):
                continue
            for e, e_e in self.movers.get(k, ()):
                if e in self.seen or e in busy or self.unit[e] == w:
                    continue
                ue = int(self.unit[e])
                if slack[ue] + (n if ue == uc else 0) < n2:
                    continue
                total = gain + e_d - e_e
                if total > GAIN_TOL and (best is None or total > best[0]):
                    best = (total, d, e, n2, int(self.opt_of[d, k]))
                break  # (the least e that may go: later ones gain less)
        return best
