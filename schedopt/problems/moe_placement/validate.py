"""Independent validator and evaluator for MoE placements.

This module re-derives everything from the raw instance fields and the solution; it shares no
code with the model builders (``data.py``, ``cpsat.py``, ``milp.py``, ``scenario.py``) or the
heuristics. Constraint ids are the ``V`` numbers of ``formulations/moe_placement.md``. The
held-out metrics sample popularity from the posterior (``posterior.py``, which only turns counts
into Dirichlet draws) with a fixed seed of their own.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from schedopt.core.result import ObjectiveTerm, Sense, Violation

from .instance import LayerWithin, MoePlacementInstance
from .posterior import scenario_popularity
from .solution import MoePlacementSolution

#: The objective levels that ``evaluate`` returns, in order (all minimised).
TERMS = (
    ObjectiveTerm("layer time Σ_l max load (or weighted)", Sense.MINIMIZE, "µs"),
    ObjectiveTerm("all-to-all transfer time", Sense.MINIMIZE, "µs"),
    ObjectiveTerm("GPUs used", Sense.MINIMIZE, "GPUs"),
    ObjectiveTerm("expert replicas moved", Sense.MINIMIZE, "replicas"),
)
SHARE_TOL = 1e-6  # |Σ shares − 1| allowed
MEM_TOL = 1e-9  # GiB
#: Held-out scenarios of the metrics: their own seed, never one a method samples with.
HELDOUT_SEED = 2_147_483_647
HELDOUT_SCENARIOS = 64


def validate(inst: MoePlacementInstance, sol: MoePlacementSolution) -> list[Violation]:
    out: list[Violation] = []
    # V1 shape: one plan per layer and expert, in the instance's order.
    if len(sol.layers) != len(inst.layers):
        return [Violation("V1", f"{len(sol.layers)} layer plans for {len(inst.layers)} layers")]
    for li, (lp, layer) in enumerate(zip(sol.layers, inst.layers, strict=True)):
        if len(lp.experts) != len(layer.experts):
            out.append(
                Violation(
                    "V1",
                    f"layer {li}: {len(lp.experts)} expert plans, {len(layer.experts)} experts",
                )
            )
    if out:
        return out
    known = set(inst.cluster.gpus())
    free = {g: inst.cluster.gpu(g).memory_gib - inst.dense_memory_gib for g in known}
    used_mem: dict[str, float] = defaultdict(float)
    extra = 0.0
    cap = inst.max_replicas_per_expert
    for li, (lp, layer) in enumerate(zip(sol.layers, inst.layers, strict=True)):
        layer_gpus: set[str] = set()
        for ei, (ep, ex) in enumerate(zip(lp.experts, layer.experts, strict=True)):
            name = f"layer {li} expert {ei}"
            gpus = [r.gpu for r in ep.replicas]
            # V2 replicas: at least one (C2), on known GPUs, at most one per GPU.
            if not gpus:
                out.append(Violation("V2", f"{name} has no replica"))
            for g in gpus:
                if g not in known:
                    out.append(Violation("V2", f"{name}: unknown GPU {g!r}"))
            if len(set(gpus)) != len(gpus):
                out.append(Violation("V2", f"{name}: two replicas on one GPU"))
            # V3 shares: in [0, 1], summing to one (C3, C4: only replicas receive tokens).
            shares = [r.share for r in ep.replicas]
            if any(not (math.isfinite(s) and 0.0 <= s <= 1.0) for s in shares):
                out.append(Violation("V3", f"{name}: a share outside [0, 1]: {shares}"))
            elif gpus and abs(sum(shares) - 1.0) > SHARE_TOL:
                out.append(Violation("V3", f"{name}: shares sum to {sum(shares):.9g}, not 1"))
            # V5 replica cap (C5)
            if cap is not None and len(gpus) > cap:
                out.append(Violation("V5", f"{name}: {len(gpus)} replicas, at most {cap}"))
            for g in set(gpus):
                used_mem[g] += ex.memory_gib
            extra += max(0, len(set(gpus)) - 1) * ex.memory_gib
            layer_gpus |= set(gpus) & known
        # V6 hierarchical placement (C7)
        if inst.layer_within is not LayerWithin.NONE and layer_gpus:
            groups: set[str] | set[int]
            if inst.layer_within is LayerWithin.HOST:
                groups = {inst.cluster.host_of(g) for g in layer_gpus}
            else:
                domain = {g: k for k, d in enumerate(inst.cluster.nvlink_domains()) for g in d}
                groups = {domain[g] for g in layer_gpus}
            if len(groups) > 1:
                out.append(
                    Violation(
                        "V6",
                        f"layer {li} spans {len(groups)} {inst.layer_within.value}s "
                        f"({sorted(map(str, groups))[:4]})",
                    )
                )
    # V4 memory per GPU (C1)
    for g, m in sorted(used_mem.items()):
        if g in free and m > free[g] + MEM_TOL:
            out.append(Violation("V4", f"GPU {g!r}: {m:.6g} GiB of experts, {free[g]:.6g} free"))
    # V5 extra memory for replicas (C6)
    if inst.max_extra_memory_gib is not None and extra > inst.max_extra_memory_gib + MEM_TOL:
        out.append(
            Violation(
                "V5", f"replicas take {extra:.6g} GiB extra, at most {inst.max_extra_memory_gib:g}"
            )
        )
    return out


def _loads(inst: MoePlacementInstance, sol: MoePlacementSolution, pops) -> list[dict[str, float]]:
    """Per layer: GPU → µs of that layer's experts on it (tokens × µs/token / speed)."""
    speed = {g: inst.cluster.gpu(g).speed for g in inst.cluster.gpus()}
    out = []
    for lp, layer, pop in zip(sol.layers, inst.layers, pops, strict=True):
        load: dict[str, float] = defaultdict(float)
        for ep, ex, p in zip(lp.experts, layer.experts, pop, strict=True):
            for r in ep.replicas:
                load[r.gpu] += p * r.share * ex.compute_us_per_token / speed[r.gpu]
        out.append(load)
    return out


def gpu_loads(inst: MoePlacementInstance, sol: MoePlacementSolution) -> list[dict[str, float]]:
    """Per layer: GPU → µs of that layer's experts on it, at the point popularity."""
    return _loads(inst, sol, _point(inst))


def _point(inst: MoePlacementInstance) -> list[tuple[float, ...]]:
    return [inst.point_popularity(i) for i in range(len(inst.layers))]


def layer_time(inst: MoePlacementInstance, sol: MoePlacementSolution, pops=None) -> float:
    """Σ over layers of the most loaded GPU's µs, under ``pops`` (default: point estimate)."""
    loads = _loads(inst, sol, _point(inst) if pops is None else pops)
    return sum(max(load.values(), default=0.0) for load in loads)


def _transfer(inst: MoePlacementInstance, sol: MoePlacementSolution) -> tuple[float, float]:
    """(µs of link time, bytes crossing hosts) per batch: every token goes from each attention
    GPU (evenly) to the replica and back over the widest path."""
    sources = inst.attention_gpus if inst.attention_gpus is not None else inst.cluster.gpus()
    tokens: dict[str, float] = defaultdict(float)
    for lp, pop in zip(sol.layers, _point(inst), strict=True):
        for ep, p in zip(lp.experts, pop, strict=True):
            for r in ep.replicas:
                tokens[r.gpu] += p * r.share
    bits = 2.0 * inst.token_bytes * 8.0
    time_us = cross = 0.0
    host_of = {s: inst.cluster.host_of(s) for s in sources}
    for g, t in tokens.items():  # one widest-path tree per replica GPU, all sources from it
        width = inst.cluster.bandwidths_from(g)
        hg = inst.cluster.host_of(g)
        for s in sources:
            if s != g:
                time_us += t * bits / (width[s] * 1e3)
            if host_of[s] != hg:
                cross += t * 2.0 * inst.token_bytes
    return time_us / len(sources), cross / len(sources)


def _used_and_moved(inst: MoePlacementInstance, sol: MoePlacementSolution) -> tuple[int, int]:
    used = {r.gpu for lp in sol.layers for ep in lp.experts for r in ep.replicas}
    moved = 0
    if inst.current_placement is not None:
        for lp, row in zip(sol.layers, inst.current_placement, strict=True):
            for ep, now in zip(lp.experts, row, strict=True):
                moved += len({r.gpu for r in ep.replicas} - set(now))
    return len(used), moved


def evaluate(inst: MoePlacementInstance, sol: MoePlacementSolution) -> tuple[float, ...]:
    """(L1 Σ_l max_g load µs — or the weighted sum —, L2 transfer µs, L3 GPUs, L4 moved)."""
    l1 = layer_time(inst, sol)
    l2, _ = _transfer(inst, sol)
    l3, l4 = _used_and_moved(inst, sol)
    if inst.objective.mode == "weighted":
        w = inst.objective.weights
        first = w.load * l1 + w.comm * l2 + w.gpus * l3 + w.moved * l4
        return (first, l2, float(l3), float(l4))
    return (l1, l2, float(l3), float(l4))


def metrics(inst: MoePlacementInstance, sol: MoePlacementSolution) -> dict[str, float]:
    loads = _loads(inst, sol, _point(inst))
    gpus = inst.cluster.gpus()
    max_sum = mean_sum = 0.0
    peak = 0.0
    for load in loads:
        top = max(load.values(), default=0.0)
        max_sum += top
        mean_sum += sum(load.values()) / len(gpus)
        peak = max(peak, top)
    comm_us, cross = _transfer(inst, sol)
    used, moved = _used_and_moved(inst, sol)
    replicas = sum(len(ep.replicas) for lp in sol.layers for ep in lp.experts)
    experts = sum(len(layer.experts) for layer in inst.layers)
    out = {
        "point_max_load": max_sum,
        "max_gpu_load_us": peak,
        "mean_gpu_load_us": mean_sum / len(loads),
        "imbalance": max_sum / mean_sum if mean_sum > 0 else 1.0,
        "comm_us": comm_us,
        "cross_host_bytes": cross,
        "gpus_used": float(used),
        "experts_moved": float(moved),
        "replicas": float(replicas),
        "extra_replicas": float(replicas - experts),
    }
    if inst.has_routing_counts:
        draws = scenario_popularity(inst, HELDOUT_SCENARIOS, np.random.default_rng(HELDOUT_SEED))
        times = np.array([layer_time(inst, sol, pops) for pops in draws])
        out["heldout_mean_max_load"] = float(times.mean())
        out["heldout_p95_max_load"] = float(np.quantile(times, 0.95))
    return out
