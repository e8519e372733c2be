"""A raw plan (host packings and pipelines by kind) ↔ a concrete plan on GPUs.

``realise`` carves every host into the TP groups of its packing and builds the pipelines on
them (kept pipelines first, on their own hosts); ``raw_of`` reads a concrete plan back as a raw
one, or None when it is outside the template plan space (formulations/reconfig.md).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .data import GroupType, ModelData
from .instance import Pipeline, Stage
from .solution import ReconfigSolution


@dataclass
class Raw:
    #: per class: the packing index of each host used (in host order, kept hosts skipped)
    packs: list[list[int]]
    #: (kind, micro-batches): kind < len(templates) a template, else a kept kind
    pipelines: list[tuple[int, int]] = field(default_factory=list)


def realise(data: ModelData, raw: Raw) -> ReconfigSolution | None:
    inst, T = data.instance, len(data.templates)
    plan = inst.current_plan or ()
    used_hosts: set[str] = set()
    out: list[Pipeline] = []
    taken = Counter[int]()
    for kind, m in raw.pipelines:
        if kind < T:
            continue
        kk = data.kept[kind - T]
        if taken[kind] >= len(kk.members):
            return None
        pipe = plan[kk.members[taken[kind]]]
        taken[kind] += 1
        used_hosts |= {inst.cluster.host_of(g) for s in pipe.stages for g in s.gpus}
        out.append(Pipeline(stages=pipe.stages, micro_batches=m))
    pool: dict[GroupType, list[tuple[str, ...]]] = {}
    failed, slow = set(inst.failed_gpus), inst.slow_factor
    for c, (cls, packs) in enumerate(zip(data.classes, raw.packs, strict=True)):
        free = [h for h in cls.hosts if h not in used_hosts]
        if len(packs) > len(free):
            return None
        for host, pi in zip(free, packs, strict=False):
            gpus = inst.cluster.gpus_on(host)
            healthy = [g for g in gpus if g not in failed and g not in slow]
            slow_here = sorted((g for g in gpus if g in slow), key=lambda g: -slow[g])
            for (t, kappa), n in sorted(data.packings[c][pi].items(), key=lambda x: x[0][1]):
                for _ in range(n):
                    if kappa < 1.0:
                        g0 = next(g for g in slow_here if slow[g] == kappa)
                        slow_here.remove(g0)
                        group = (g0, *healthy[: t - 1])
                        healthy = healthy[t - 1 :]
                    else:
                        group, healthy = tuple(healthy[:t]), healthy[t:]
                    pool.setdefault((t, kappa), []).append(group)
    for kind, m in raw.pipelines:
        if kind >= T:
            continue
        tp = data.templates[kind]
        stages = []
        for i, (lo, hi) in enumerate(tp.ranges()):
            gt = (tp.t, tp.kappa if i == tp.slow_at else 1.0)
            if not pool.get(gt):
                return None
            stages.append(Stage(layer_start=lo, layer_end=hi, gpus=pool[gt].pop(0)))
        out.append(Pipeline(stages=tuple(stages), micro_batches=m))
    slowest, sync, _ = times_us(data, raw)
    return ReconfigSolution(pipelines=tuple(out), iteration_time_s=(slowest + sync) / 1e6)


def kind_of(data: ModelData, pipe: Pipeline) -> int | None:
    """The template or kept kind of a concrete pipeline, or None (outside the plan space)."""
    inst, T = data.instance, len(data.templates)
    plan = inst.current_plan or ()
    for j, kk in enumerate(data.kept):
        if any(plan[i].stages == pipe.stages for i in kk.members):
            return T + j
    slow = inst.slow_factor
    ts = {len(s.gpus) for s in pipe.stages}
    if len(ts) != 1:
        return None
    t = ts.pop()
    slow_stages = [(i, [slow[g] for g in s.gpus if g in slow]) for i, s in enumerate(pipe.stages)]
    slow_stages = [(i, ks) for i, ks in slow_stages if ks]
    if len(slow_stages) > 1 or any(len(ks) > 1 for _, ks in slow_stages):
        return None
    kappa = slow_stages[0][1][0] if slow_stages else 1.0
    at = slow_stages[0][0] if slow_stages else None
    sizes = tuple(s.layer_end - s.layer_start for s in pipe.stages)
    for k, tp in enumerate(data.templates):
        if (tp.p, tp.t, tp.kappa, tp.slow_at, tp.sizes) == (len(sizes), t, kappa, at, sizes):
            return k
    return None


def raw_of(data: ModelData, sol: ReconfigSolution) -> Raw | None:
    inst, T = data.instance, len(data.templates)
    raw = Raw([[] for _ in data.classes])
    kept_hosts: set[str] = set()
    by_host: dict[str, Counter[GroupType]] = {}
    slow = inst.slow_factor
    for pipe in sol.pipelines:
        kind = kind_of(data, pipe)
        if kind is None:
            return None
        raw.pipelines.append((kind, pipe.micro_batches))
        hosts = {inst.cluster.host_of(g) for s in pipe.stages for g in s.gpus}
        if kind >= T:
            kept_hosts |= hosts
            continue
        for s in pipe.stages:
            kappa = min([slow.get(g, 1.0) for g in s.gpus])
            host = inst.cluster.host_of(s.gpus[0])
            by_host.setdefault(host, Counter())[(len(s.gpus), kappa)] += 1
    for c, cls in enumerate(data.classes):
        for h in cls.hosts:
            if h in kept_hosts:
                if h in by_host:
                    return None
                continue
            need = by_host.get(h)
            if not need:
                continue
            fit = next(
                (
                    pi
                    for pi, pk in enumerate(data.packings[c])
                    if all(pk[gt] >= n for gt, n in need.items())
                ),
                None,
            )
            if fit is None:
                return None
            raw.packs[c].append(fit)
    return raw


def hand_out(caps: list[int], total: int) -> list[int] | None:
    """``total`` micro-batches over pipelines that take at most ``caps[i]`` each: one each
    first, then filled in order; a pipeline left with none gets 0 (dropped by the caller)."""
    m = [0] * len(caps)
    left = total
    for i, c in enumerate(caps):
        if left and c:
            m[i], left = 1, left - 1
    for i, c in enumerate(caps):
        extra = min(left, c - m[i])
        m[i] += extra
        left -= extra
    return None if left else m


def first_level_us(data: ModelData, raw: Raw) -> int:
    """L1 of a raw plan in µs (pipe + sync + amortised recovery), from the data (C7, C8, C10)."""
    return sum(times_us(data, raw))


def times_us(data: ModelData, raw: Raw) -> tuple[int, int, int]:
    """(1F1B time of the slowest pipeline, all-reduce, amortised recovery) of a raw plan, µs."""
    T, pipe, sync, rec = len(data.templates), 0, 0, 0
    for k, m in raw.pipelines:
        tau, p, s = (
            (data.templates[k].tau, data.templates[k].p, data.templates[k].sync)
            if k < T
            else (data.kept[k - T].tau, data.kept[k - T].p, data.kept[k - T].sync)
        )
        pipe, sync = max(pipe, (m + p - 1) * tau), max(sync, s)
        rec = max(rec, data.recovery_us(k) if k < T else 0)
    return pipe, sync, rec
