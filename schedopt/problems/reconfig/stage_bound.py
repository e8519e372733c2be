"""The stage-position bound over the physical plan space (formulations/reconfig.md, Q1–Q6; #17).

P1–P6 (``validate.physical_bound_us``) count work per GPU and ignore where a stage sits: in
1F1B the stage with ``f`` stages after it (itself included) holds ``f`` micro-batches of
activations, so the layers a TP group can hold depend on its position as much as on its
speed. Here, with the first level fixed at ``Λ``, every (group type, position, depth, stage
time) gets its exact layer capacity from the validator's cost model (Q1); pipelines of one
depth and one band of micro-batches are aggregated (Q2, Q3); one LP over the hosts' packings
into TP groups (any GPUs, slow ones as they are) says whether the groups can hold ``M``
micro-batches at all (Q4). Its weak-duality value below ``M`` proves ``L1 > Λ`` (Q5); a
bisection over ``Λ`` gives the bound, with micro-batch bands split where the LP uses them (Q6).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from schedopt.core.memo import once_per_solve
from schedopt.core.stopping import Deadline, Ticker

from .instance import ReconfigInstance
from .templates import Tick
from .validate import _Costs, physical_bound_us

if TYPE_CHECKING:  # the model layer's LP code is imported when an LP is first built
    from schedopt.model.lp_bound import LpBound, Relaxation

GroupType = tuple[int, float]  # (t, κ of its slowest GPU)


def host_packings(
    speeds: tuple[float, ...], degrees: tuple[int, ...], tick: Tick = lambda: None
) -> list[Counter]:
    """Every maximal packing of one host's surviving GPUs (their speeds) into TP groups of the
    allowed degrees, a group typed by (size, its slowest GPU's speed): any GPUs of the host in
    any group, several slow GPUs in one group included (the physical space). GPUs of one speed
    are interchangeable, so the host is a count per speed."""
    found = every_packing(speeds, degrees, tick)
    tick()
    return maximal(found) or [Counter()]


def every_packing(
    speeds: tuple[float, ...], degrees: tuple[int, ...], tick: Tick = lambda: None
) -> list[Counter]:
    """``host_packings`` before the maximal ones are kept: every packing, maximal or not."""

    def picks(avail: tuple[tuple[float, int], ...], k: int) -> list[tuple[int, ...]]:
        """Counts per speed of ``k`` GPUs taken from ``avail``."""
        if not avail:
            return [()] if k == 0 else []
        out = []
        for n in range(min(k, avail[0][1]) + 1):
            out += [(n, *rest) for rest in picks(avail[1:], k - n)]
        return out

    @cache
    def packs(rem: tuple[tuple[float, int], ...]) -> frozenset[tuple[GroupType, ...]]:
        tick()
        if not rem:
            return frozenset({()})
        s0 = rem[0][0]  # ascending: the slowest left, the κ of the group that takes it
        first = ((s0, rem[0][1] - 1),) if rem[0][1] > 1 else ()
        rest = (*first, *rem[1:])
        out = set(packs(rest))  # this GPU left out
        for t in degrees:
            for take in picks(rest, t - 1):
                left = tuple((sp, n - k) for (sp, n), k in zip(rest, take, strict=True) if n > k)
                for pk in packs(left):
                    out.add(tuple(sorted((*pk, (t, s0)))))
        return frozenset(out)

    return [Counter(pk) for pk in packs(tuple(sorted(Counter(speeds).items())))]


def maximal(found: list[Counter]) -> list[Counter]:
    """The packings of ``found`` (distinct multisets of group types) that no other one covers
    (at least as many groups of every type), in their order; every pair at once (#17: pair by
    pair, most of the stage data's 0.13 CPU s at 256 GPUs)."""
    kinds = sorted({g for a in found for g in a})
    counts = np.array([[a[g] for g in kinds] for a in found], dtype=np.int64)
    counts = counts.reshape(len(found), len(kinds))
    covers = np.asarray((counts[None, :, :] >= counts[:, None, :]).all(axis=2))  # b covers a
    np.fill_diagonal(covers, False)  # (distinct multisets: another one is a different one)
    covered = np.asarray(covers.any(axis=1)).tolist()
    return [a for a, c in zip(found, covered, strict=True) if not c]


@dataclass
class StageData:
    """Q1's ingredients, computed once per instance from the validator's cost model."""

    L: int
    M: int
    degrees: tuple[int, ...]
    types: list[GroupType]
    classes: list[tuple[int, list[Counter]]]  # (hosts, maximal packings)
    offered: dict[GroupType, int]
    depths: list[int]
    g_mem: int  # P2: GPUs any pipeline needs for the model state
    sync_floor: dict[int, int]  # Q2: α_p, the least all-reduce of a pipeline of depth p
    time_n: dict[tuple[int, float, bool, bool], np.ndarray] = field(default_factory=dict)
    mem_n: dict[tuple[int, int, bool, bool], int] = field(default_factory=dict)
    #: Q1's capacities of each depth at the last few Λ priced (``pricing._caps``): they depend
    #: on Λ alone, never on the prices, and a round prices the same Λ again and again
    caps_at: dict[int, dict[int, tuple[np.ndarray, np.ndarray] | None]] = field(
        default_factory=dict, repr=False, compare=False
    )
    #: ``pricing``'s tables of ``time_n`` and ``mem_n`` for every type at once, built on first
    #: use (the same numbers, fewer numpy calls a Λ: #17)
    tables: dict[tuple[object, ...], Any] = field(default_factory=dict, repr=False, compare=False)

    def cap(self, g: GroupType, f: int, p: int, theta: int) -> int:
        """Q1: the most layers a stage of group ``g`` holds ``f`` positions from the end of a
        pipeline of ``p`` stages, within ``theta`` µs and its memory."""
        t, kappa = g
        first, last = f == p, f == 1
        by_time = int(np.searchsorted(self.time_n[(t, kappa, last, p > 1)], theta, "right")) - 1
        return max(0, min(by_time, self.mem_n[(t, f, first, last)]))


def stage_data(
    inst: ReconfigInstance, exact_speeds: bool = True, deadline: Deadline | None = None
) -> StageData | None:
    """:func:`build_stage_data`'s data, built once in a ``solve`` call and shared by its phases
    (the bound over the physical space and widening's W7 each built them: 0.13 CPU s at 256
    GPUs; #17); none of them changes them."""
    return once_per_solve(
        (build_stage_data, exact_speeds),
        inst,
        lambda: build_stage_data(inst, exact_speeds, deadline),
    )


def build_stage_data(
    inst: ReconfigInstance, exact_speeds: bool = True, deadline: Deadline | None = None
) -> StageData | None:
    """None: no physical plan exists (P1–P2). Without ``exact_speeds`` every surviving GPU
    counts at full speed (Q1': a relaxation, since a stage's capacity only grows with its
    speed; 4 group types rather than 16, an LP a few times smaller)."""
    if physical_bound_us(inst) is None:
        return None
    c, mc = _Costs(inst), inst.model
    failed, slow = set(inst.failed_gpus), inst.slow_factor
    L, M = mc.layers, inst.micro_batches
    speeds: Counter[tuple[float, ...]] = Counter()
    for h in inst.cluster.hosts():
        sp = tuple(
            sorted(
                slow.get(g, 1.0) if exact_speeds else 1.0
                for g in inst.cluster.gpus_on(h)
                if g not in failed
            )
        )
        if sp:
            speeds[sp] += 1
    per_host = max(len(sp) for sp in speeds)
    degrees = tuple(sorted(t for t in set(inst.tp_sizes) if t <= per_host and not mc.heads % t))
    tick = Ticker(deadline, "packing the hosts into TP groups (the physical bound)")
    classes = [(n, host_packings(sp, degrees, tick)) for sp, n in sorted(speeds.items())]
    offered: Counter[GroupType] = Counter()
    for n, packs in classes:
        for g in {g for pk in packs for g in pk}:
            offered[g] += n * max(pk[g] for pk in packs)
    types = sorted(offered)
    kept_depth = max((len(pp.stages) for pp in inst.current_plan or ()), default=1)
    deepest = min(L, max(inst.max_stages, kept_depth))  # V6 excepts kept pipelines
    room = c.cap * (1 + 1e-6)  # V4's tolerance
    g_mem = max(1, math.ceil(16 * c.P / room - 1e-9))
    t_max = max(degrees)
    sd = StageData(
        L,
        M,
        degrees,
        types,
        classes,
        dict(offered),
        list(range(1, deepest + 1)),
        g_mem,
        {p: c.sync_us(p * t_max) for p in range(1, deepest + 1)},
    )
    for t, kappa in types:
        for last, deep in itertools.product((False, True), repeat=2):
            sd.time_n[(t, kappa, last, deep)] = np.array(
                [c.stage_us(n, last, t, 2 if deep else 1, kappa) for n in range(L + 1)]
            )
    for t in degrees:
        for f in range(1, deepest + 1):
            for first, last in itertools.product((False, True), repeat=2):
                n = 0
                while n < L and c.stage_bytes(n + 1, first, last, t, f) <= room:
                    n += 1
                sd.mem_n[(t, f, first, last)] = n
    return sd


def initial_bands(M: int, ratio: float = 1.3) -> list[tuple[int, int]]:
    """Bands [lo, hi] of micro-batches covering 1..M, growing geometrically."""
    out, lo = [], 1
    while lo <= M:
        hi = min(M, max(lo, math.floor(lo * ratio)))
        out.append((lo, hi))
        lo = hi + 1
    return out


@dataclass
class _Lp:
    r: Relaxation
    x_cols: list[tuple[int, tuple[int, int]]]  # (depth, band) of each x column, in order
    x_index: np.ndarray
    supply_rows: dict[GroupType, int]  # the row of each group type's supply (Q4)


def build_lp(sd: StageData, lam: int, bands: dict[int, list[tuple[int, int]]]) -> _Lp | None:
    """Q4 at ``L1 ≤ lam``: maximise Σ hi_b x_pb over the aggregated pipelines and the hosts'
    packings. None when no pipeline type survives Q1 (nothing fits: ``L1 > lam``)."""
    from schedopt.model.lp_bound import Relaxation

    c_list: list[float] = []
    ub: list[float] = []
    rows: list[tuple[list[int], list[float], float, float]] = []
    supply: dict[GroupType, tuple[list[int], list[float]]] = {g: ([], []) for g in sd.types}
    x_cols: list[tuple[int, tuple[int, int]]] = []
    x_index: list[int] = []

    def col(cost: float, hi: float) -> int:
        c_list.append(cost)
        ub.append(hi)
        return len(c_list) - 1

    for p in sd.depths:
        left = lam - sd.sync_floor[p]
        if left <= 0:
            continue
        for band in bands[p]:
            theta = left // (band[0] + p - 1)  # Q2: every stage within θ µs
            caps = [[sd.cap(g, f, p, theta) for g in sd.types] for f in range(1, p + 1)]
            if sum(max(row) for row in caps) < sd.L or any(max(row) < 1 for row in caps):
                continue  # Q3: no pipeline of this depth and band holds every layer
            x = col(float(band[1]), float(sd.M))
            x_cols.append((p, band))
            x_index.append(x)
            lay_i, lay_v = [x], [-float(sd.L)]
            gpu_i, gpu_v = [x], [-float(sd.g_mem)]
            # positions with the same capacities are one class: |F| stages among them
            same = Counter(tuple(row) for row in caps)
            for row, count in same.items():
                pos_i, pos_v = [x], [-float(count)]
                for gi, g in enumerate(sd.types):
                    k = row[gi]
                    if k < 1:
                        continue
                    s = col(0.0, float(min(sd.M * count, sd.offered[g])))
                    pos_i.append(s)
                    pos_v.append(1.0)
                    lay_i.append(s)
                    lay_v.append(float(min(k, sd.L)))
                    gpu_i.append(s)
                    gpu_v.append(float(g[0]))
                    supply[g][0].append(s)
                    supply[g][1].append(1.0)
                rows.append((pos_i, pos_v, 0.0, 0.0))  # one stage per position of the class
            rows.append((lay_i, lay_v, 0.0, math.inf))  # every layer held
            rows.append((gpu_i, gpu_v, 0.0, math.inf))  # the model state held (P2)
    if not x_index:
        return None
    for n, packs in sd.classes:
        gcols = [col(0.0, float(n)) for _ in packs]
        rows.append((gcols, [1.0] * len(gcols), -math.inf, float(n)))
        for j, pk in zip(gcols, packs, strict=True):
            for g, k in pk.items():
                supply[g][0].append(j)
                supply[g][1].append(-float(k))
    supply_rows: dict[GroupType, int] = {}
    for g in sd.types:
        idx, val = supply[g]
        if idx:
            supply_rows[g] = len(rows)
            rows.append((idx, val, -math.inf, 0.0))
    starts = np.zeros(len(rows) + 1, dtype=np.int64)
    starts[1:] = np.cumsum([len(r[0]) for r in rows])
    r = Relaxation(
        c=np.array(c_list),
        starts=starts,
        cols=np.array([i for rr in rows for i in rr[0]], dtype=np.int64),
        coefs=np.array([v for rr in rows for v in rr[1]], dtype=np.float64),
        lo=np.array([rr[2] for rr in rows]),
        hi=np.array([rr[3] for rr in rows]),
        lb=np.zeros(len(c_list)),
        ub=np.array(ub),
    )
    return _Lp(r, x_cols, np.array(x_index), supply_rows)


def solve_lp(lp: _Lp, deadline: Deadline | None) -> LpBound | None:
    """Q4's LP by the interior point method within ``deadline`` (60 s without one); None when
    no time is left."""
    from schedopt.model.lp_bound import solve_relaxation

    left = 60.0 if deadline is None else deadline.remaining()
    if left <= 0:
        return None
    return solve_relaxation(lp.r, left, interior=True)


def ruled_out(
    sd: StageData,
    lam: int,
    bands: dict[int, list[tuple[int, int]]],
    deadline: Deadline | None,
    rounds: int = 2,
) -> bool | None:
    """Q5/Q6: True when the LP proves ``L1 > lam``; False when its point holds ``M`` with every
    band it uses a single micro-batch count, or after ``rounds`` splits (not ruled out); None
    when the time ran out first. Bands the LP uses are split in place (a finer band is still
    a relaxation)."""
    for _ in range(rounds + 1):
        lp = build_lp(sd, lam, bands)
        if lp is None:
            return True
        found = solve_lp(lp, deadline)
        if found is None:
            return None
        if found.bound is not None and found.bound < sd.M - 1e-6 * max(1, sd.M):
            return True
        if not found.solved or found.x is None:
            return None
        split = False
        for (p, band), xi in zip(lp.x_cols, lp.x_index, strict=True):
            if found.x[xi] > 1e-9 and band[0] < band[1]:
                mid = (band[0] + band[1]) // 2
                at = bands[p].index(band)
                bands[p][at : at + 1] = [(band[0], mid), (mid + 1, band[1])]
                split = True
        if not split:
            return False
    return False


def stage_bound_us(
    inst: ReconfigInstance,
    upper_us: int | None = None,
    deadline: Deadline | None = None,
    rel_tol: float = 1e-3,
    exact_speeds: bool = True,
) -> tuple[int | None, dict[str, float]]:
    """A proven lower bound on L1 (µs) over the physical plan space: P1–P6's, raised by Q5
    probes climbing from it (each probe ruled out raises the bound; a probe not ruled out
    halves the step), below ``upper_us`` (a known plan's L1). Anytime: the bound proven when
    the deadline passes. (None, …): no physical plan exists."""
    stats: dict[str, float] = {"q_lps": 0.0}
    sd = stage_data(inst, exact_speeds, deadline)
    if sd is None:
        return None, stats
    lo = physical_bound_us(inst)
    assert lo is not None
    bands = {p: initial_bands(sd.M) for p in sd.depths}
    step = 0.08
    while step > rel_tol:
        probe = lo + max(1, int(lo * step))
        if upper_us is not None and probe >= upper_us:
            step /= 2
            continue
        answer = ruled_out(sd, probe, bands, deadline)
        stats["q_lps"] += 1
        if answer is None:
            break
        if answer:
            lo = probe + 1
        else:
            step /= 2
    stats["q_bands"] = float(sum(len(b) for b in bands.values()))
    return lo, stats
