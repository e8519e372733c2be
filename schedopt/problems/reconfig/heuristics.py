"""Heuristic reconfiguration: the registered methods (formulations/reconfig.md for the plan space).

- ``megatron``: TP = the largest allowed degree a host holds, PP = the fewest stages that fit
  memory, DP = as many pipelines as the healthy groups make; leftover GPUs idle, slow GPUs
  dropped, micro-batches spread evenly.
- ``oobleck``: Oobleck-style templates (SOSP'23): pipelines instantiated, best per-GPU
  throughput first, to cover the surviving groups (slow groups too when it pays), then the
  batch redistributed to minimise the slowest pipeline (greedy, optimal for that min-max).
- ``keep_shrink``: keep the current pipelines that lost no GPU (and own their hosts), drop the
  rest, spread the batch over the kept ones.

Each returns a plan of the template plan space, so the exact models can take it as a hint.
"""

from __future__ import annotations

import heapq
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from schedopt.core.options import SolveOptions, method_params
from schedopt.core.registry import Outcome, Runner
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, Ticker

from .data import GroupType, ModelData, data_of
from .instance import ReconfigInstance
from .plan import Raw, realise

HEURISTICS = ("heuristic:oobleck", "heuristic:megatron", "heuristic:keep_shrink")


@dataclass(frozen=True)
class MegatronParams:
    """``extra_stages``: stages beyond the fewest that fit; ``tp_halvings``: TP = the largest
    degree halved this many times."""

    extra_stages: int = 0
    tp_halvings: int = 0
    SPACE: ClassVar[dict[str, tuple[float, float]]] = {
        "extra_stages": (0, 4),
        "tp_halvings": (0, 2),
    }


@dataclass(frozen=True)
class OobleckParams:
    """``use_slow``: 1 lets slow groups into pipelines; ``max_stages_considered``: templates
    with at most this many stages; ``min_share``: keep a pipeline only if its share of the
    throughput is at least this fraction of the best pipeline's."""

    use_slow: int = 1
    max_stages_considered: int = 16
    min_share: float = 0.5
    SPACE: ClassVar[dict[str, tuple[float, float]]] = {
        "use_slow": (0, 1),
        "max_stages_considered": (1, 32),
        "min_share": (0.0, 1.0),
    }


@dataclass(frozen=True)
class KeepShrinkParams:
    """``keep_slow``: 1 keeps pipelines that hold a slow GPU (0 drops them too)."""

    keep_slow: int = 1
    SPACE: ClassVar[dict[str, tuple[float, float]]] = {"keep_slow": (0, 1)}


def spread(kinds: list[int], data: ModelData) -> list[tuple[int, int]]:
    """The global batch over pipelines of these kinds, one micro-batch at a time to the
    pipeline whose 1F1B time grows least (optimal for the min-max of (m + p − 1)·τ)."""
    T = len(data.templates)
    shape = [
        (data.templates[k].tau, data.templates[k].p)
        if k < T
        else (data.kept[k - T].tau, data.kept[k - T].p)
        for k in kinds
    ]
    m = [0] * len(kinds)
    heap = [((p) * tau, i) for i, (tau, p) in enumerate(shape)]
    heapq.heapify(heap)
    for _ in range(data.M):
        _, i = heapq.heappop(heap)
        m[i] += 1
        tau, p = shape[i]
        heapq.heappush(heap, ((m[i] + p) * tau, i))
    return [(k, x) for k, x in zip(kinds, m, strict=True) if x > 0]


def _carve(data: ModelData, sizes: dict[int, int]) -> tuple[Raw, Counter[GroupType]]:
    """Every free host packed with its packing richest in the wanted groups (``sizes``:
    group size → weight), and the groups that gives."""
    raw = Raw([[] for _ in data.classes])
    pool: Counter[GroupType] = Counter()
    for c, cls in enumerate(data.classes):
        packs = data.packings[c]
        best = max(
            range(len(packs)),
            key=lambda i: sum(sizes.get(t, 0) * t * n for (t, _), n in packs[i].items()),
        )
        raw.packs[c] = [best] * len(cls.hosts)
        for gt, n in packs[best].items():
            pool[gt] += n * len(cls.hosts)
    return raw, pool


def megatron(data: ModelData, prm: MegatronParams, deadline: Deadline | None = None) -> Raw | None:
    healthy = [k for k, tp in enumerate(data.templates) if tp.kappa == 1.0]
    if not healthy:
        return None
    ts = sorted({data.templates[k].t for k in healthy}, reverse=True)
    t = ts[min(max(prm.tp_halvings, 0), len(ts) - 1)]
    ps = sorted(data.templates[k].p for k in healthy if data.templates[k].t == t)
    p = ps[min(max(prm.extra_stages, 0), len(ps) - 1)]
    k = next(k for k in healthy if (data.templates[k].p, data.templates[k].t) == (p, t))
    raw, pool = _carve(data, {t: 1})
    count = min(pool[(t, 1.0)] // p, data.M)
    if count < 1:
        return None
    raw.pipelines = spread([k] * count, data)
    return raw


def oobleck(data: ModelData, prm: OobleckParams, deadline: Deadline | None = None) -> Raw | None:
    cands = [
        k
        for k, tp in enumerate(data.templates)
        if tp.p <= prm.max_stages_considered and (prm.use_slow or tp.kappa == 1.0)
    ]
    if not cands:
        return None
    best_raw: Raw | None = None
    best_time = None
    tick = Ticker(deadline, "instantiating the Oobleck templates", every=64)
    for t in sorted({data.templates[k].t for k in cands}):
        raw, pool = _carve(data, {t: 1})
        mine = [k for k in cands if data.templates[k].t == t]
        # per-GPU throughput of a template when it runs many micro-batches: 1 / (τ · GPUs)
        mine.sort(key=lambda k: data.templates[k].tau * data.templates[k].gpus)
        top = 1.0 / (data.templates[mine[0]].tau * data.templates[mine[0]].gpus)
        kinds: list[int] = []
        for k in mine:
            tick()
            tp = data.templates[k]
            if 1.0 / (tp.tau * tp.gpus) < prm.min_share * top and tp.kappa == 1.0:
                continue
            need = data.need(k)
            while len(kinds) < data.M and all(pool[g] >= n for g, n in need.items()):
                for g, n in need.items():
                    pool[g] -= n
                kinds.append(k)
        if not kinds:
            continue
        raw.pipelines = spread(kinds, data)
        time_us = max(
            (m + data.templates[k].p - 1) * data.templates[k].tau for k, m in raw.pipelines
        )
        time_us += max(data.templates[k].sync for k, _ in raw.pipelines)
        if best_time is None or time_us < best_time:
            best_raw, best_time = raw, time_us
    return best_raw


def keep_shrink(
    data: ModelData, prm: KeepShrinkParams, deadline: Deadline | None = None
) -> Raw | None:
    T = len(data.templates)
    kinds = []
    for j, kk in enumerate(data.kept):
        # kept kinds group pipelines by stage time, so a slow pipeline is in a kind of its own
        if not prm.keep_slow and any(_has_slow(data, i) for i in kk.members):
            continue
        kinds += [T + j] * len(kk.members)
    if not kinds:
        return None
    raw = Raw([[] for _ in data.classes])
    raw.pipelines = spread(kinds[: data.M], data)
    return raw


def _has_slow(data: ModelData, i: int) -> bool:
    pipe = (data.instance.current_plan or ())[i]
    return any(g in data.instance.slow_factor for s in pipe.stages for g in s.gpus)


def _run(
    rule: Callable[[ModelData, Any, Deadline], Raw | None], params_cls: type, name: str
) -> Runner:
    def solve(inst: ReconfigInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
        t0 = time.perf_counter()
        prm: Any = method_params(params_cls, options.params)
        data = data_of(inst, deadline)
        build_s = time.perf_counter() - t0
        raw = rule(data, prm, deadline)
        sol = None if raw is None else realise(data, raw)
        solve_s = time.perf_counter() - t0 - build_s
        if sol is None or not sol.pipelines:
            return Outcome(
                Status.NO_SOLUTION,
                build_s=build_s,
                solve_s=solve_s,
                explanation=f"{name} found no plan (not a proof; try an exact method)",
            )
        return Outcome(Status.FEASIBLE, sol, build_s=build_s, solve_s=solve_s)

    return solve


solve_megatron = _run(megatron, MegatronParams, "the Megatron rule")
solve_oobleck = _run(oobleck, OobleckParams, "the Oobleck templates")
solve_keep_shrink = _run(keep_shrink, KeepShrinkParams, "keep-and-shrink")
