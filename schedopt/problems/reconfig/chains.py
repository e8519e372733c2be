"""The plans W1-W7 build (formulations/reconfig.md): the idle groups of a plan (W1), and a
plan from pipelines as chains of groups (the micro-batches handed out by min-max)."""

from __future__ import annotations

import heapq

from .design import Chain
from .instance import Pipeline, ReconfigInstance, Stage
from .solution import ReconfigSolution
from .validate import _Costs


def idle_groups(
    inst: ReconfigInstance, used: set[str], apart: bool = False
) -> list[tuple[str, ...]]:
    """W1: every host's idle surviving GPUs, fastest first, cut into the largest allowed groups
    (``apart``: the healthy GPUs and the slow ones cut separately, so that no slow GPU drags a
    group of healthy ones)."""
    failed, slow = set(inst.failed_gpus), inst.slow_factor
    heads = inst.model.heads
    degrees = sorted((t for t in set(inst.tp_sizes) if not heads % t), reverse=True)
    out = []
    for h in inst.cluster.hosts():
        free = [g for g in inst.cluster.gpus_on(h) if g not in failed and g not in used]
        free.sort(key=lambda g: -slow.get(g, 1.0))
        parts = [[g for g in free if g not in slow], [g for g in free if g in slow]]
        for run in parts if apart else [free]:
            while run:
                t = next((d for d in degrees if d <= len(run)), None)
                if t is None:
                    break
                out.append(tuple(run[:t]))
                run = run[t:]
    return out


def spread(shapes: list[tuple[int, int]], M: int) -> list[int]:
    """Micro-batches over pipelines of (τ, p), min-max of (m + p − 1)·τ, one at a time."""
    m = [0] * len(shapes)
    heap = [(p * tau, i) for i, (tau, p) in enumerate(shapes)]
    heapq.heapify(heap)
    for _ in range(M):
        _, i = heapq.heappop(heap)
        m[i] += 1
        tau, p = shapes[i]
        heapq.heappush(heap, ((m[i] + p) * tau, i))
    return m


def _plan(inst: ReconfigInstance, chains: list[Chain]) -> ReconfigSolution | None:
    if not chains:
        return None
    c = _Costs(inst)
    m = spread([(ch.tau, len(ch.groups)) for ch in chains], inst.micro_batches)
    pipes, worst, sync = [], 0, 0
    for ch, k in zip(chains, m, strict=True):
        if k < 1:
            continue
        stages, at = [], 0
        for g, n in zip(ch.groups, ch.sizes, strict=True):
            stages.append(Stage(layer_start=at, layer_end=at + n, gpus=g))
            at += n
        pipes.append(Pipeline(stages=tuple(stages), micro_batches=k))
        worst = max(worst, (k + len(ch.groups) - 1) * ch.tau)
        sync = max(sync, c.sync_us(ch.gpus))
    if not pipes:
        return None
    return ReconfigSolution(pipelines=tuple(pipes), iteration_time_s=(worst + sync) / 1e6)
