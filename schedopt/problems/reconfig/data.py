"""The instance as the model sees it, computed once: host classes and their packings into TP
groups, the templates, the kept-pipeline kinds, and the recovery constants
(formulations/reconfig.md, "Sets" and "Parameters")."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations_with_replacement, product

from schedopt.core.memo import once_per_solve
from schedopt.core.stopping import Deadline, Ticker

from .cost import CostModel, ceil_us
from .instance import Pipeline, ReconfigInstance
from .templates import Template, Tick, make_template

#: A group type (t, κ): t GPUs of one host, κ = 1 healthy or the factor of its one slow GPU.
GroupType = tuple[int, float]
#: Slow GPUs of one host beyond this many are left out (keeps the packings few).
MAX_SLOW_PER_HOST = 3
#: Refuse a model with more columns than this (formulations/reconfig.md, "Size").
MAX_COLUMNS = 200_000


@dataclass(frozen=True)
class HostClass:
    healthy: int
    slow: tuple[float, ...]  # κ of its usable slow GPUs, descending
    hosts: tuple[str, ...]


@dataclass(frozen=True)
class KeptKind:
    """Keepable current pipelines with the same stage times and host classes."""

    tau: int
    sync: int
    gpus: int
    p: int
    host_classes: tuple[tuple[int, int], ...]  # (class index, hosts of it) owned by one pipeline
    members: tuple[int, ...]  # indices into current_plan


@dataclass
class ModelData:
    instance: ReconfigInstance
    cost: CostModel
    M: int
    classes: list[HostClass]
    packings: list[list[Counter[GroupType]]]  # per class: maximal packings
    group_types: list[GroupType]
    templates: list[Template]
    kept: list[KeptKind]
    reload: bool  # copy impossible: every rebuilt pipeline reloads from the checkpoint
    rho: float  # T_ref · λ (failures per µs of iteration) or 0
    t_ref_us: int | None  # the healthy plan's iteration time
    caps: dict[int, int] = field(default_factory=dict)  # N_k (templates then kept kinds)

    @property
    def kinds(self) -> int:
        return len(self.templates) + len(self.kept)

    def need(self, k: int) -> Counter[GroupType]:
        tp = self.templates[k]
        c: Counter[GroupType] = Counter({(tp.t, 1.0): tp.p})
        if tp.kappa < 1.0:
            c[(tp.t, 1.0)] -= 1
            c[(tp.t, tp.kappa)] += 1
        return +c

    def recovery_us(self, k: int) -> int:
        """r_k: the amortised recovery time of a rebuilt pipeline of template k (C10)."""
        if not self.rho:
            return 0
        inst = self.instance
        if self.reload:
            return ceil_us((inst.restart_s + inst.checkpoint_interval_s / 2) * 1e6 * self.rho)
        return ceil_us(self.cost.copy_s(self.templates[k].gpus) * 1e6 * self.rho)

    def bits(self, k: int) -> int:
        return max(1, math.ceil(math.log2(self.caps[k] + 1)))

    @property
    def num_columns(self) -> int:
        return (
            sum(2 * self.bits(k) + 3 for k in range(self.kinds))
            + sum(len(p) for p in self.packings)
            + 3
        )


def host_classes(inst: ReconfigInstance) -> tuple[list[HostClass], dict[str, int]]:
    """Hosts grouped by (healthy GPUs, slow factors); kept pipelines own whole hosts."""
    failed, slow = set(inst.failed_gpus), inst.slow_factor
    groups: dict[tuple[int, tuple[float, ...]], list[str]] = {}
    for h in inst.cluster.hosts():
        gpus = inst.cluster.gpus_on(h)
        healthy = sum(1 for g in gpus if g not in failed and g not in slow)
        kappas = tuple(sorted((slow[g] for g in gpus if g in slow), reverse=True))
        groups.setdefault((healthy, kappas[:MAX_SLOW_PER_HOST]), []).append(h)
    classes = [HostClass(a, s, tuple(hs)) for (a, s), hs in sorted(groups.items())]
    where = {h: i for i, c in enumerate(classes) for h in c.hosts}
    return classes, where


def packings(c: HostClass, sizes: list[int], tick: Tick = lambda: None) -> list[Counter[GroupType]]:
    """The maximal packings of a host of class ``c`` into groups of the given sizes (C2).
    ``tick`` is called in every loop (a deadline check: a host of 64 GPUs has many)."""
    found: list[Counter[GroupType]] = []
    for slow_sizes in product([0, *sizes], repeat=len(c.slow)):  # 0: the slow GPU left out
        left = c.healthy - sum(max(t - 1, 0) for t in slow_sizes)
        if left < 0:
            continue
        base: Counter[GroupType] = Counter()
        for kappa, t in zip(c.slow, slow_sizes, strict=True):
            if t:
                base[(t, kappa)] += 1
        for count in range(0, left + 1):
            for combo in combinations_with_replacement(sizes, count):
                tick()
                if sum(combo) <= left and left - sum(combo) < min(sizes, default=1):
                    offer = base + Counter((t, 1.0) for t in combo)
                    found.append(offer)
    out: list[Counter[GroupType]] = []

    def dominates(b: Counter[GroupType], a: Counter[GroupType]) -> bool:
        tick()
        return b != a and all(b[k] >= v for k, v in a.items())

    for a in found:  # drop the dominated ones (fewer groups of every type than another)
        if any(dominates(b, a) for b in found):
            continue
        if a not in out:
            out.append(a)
    return out or [Counter()]


def keepable(inst: ReconfigInstance) -> list[int]:
    """Current pipelines with no failed GPU that own every GPU of their hosts and whose every
    TP degree is allowed (in ``tp_sizes``, dividing the heads: V2 holds for kept pipelines too;
    formulations/reconfig.md, "Recovery")."""
    failed = set(inst.failed_gpus)
    out = []
    for i, pipe in enumerate(inst.current_plan or ()):
        gpus = {g for s in pipe.stages for g in s.gpus}
        hosts = {inst.cluster.host_of(g) for g in gpus}
        owned = {g for h in hosts for g in inst.cluster.gpus_on(h)}
        allowed = all(
            len(s.gpus) in inst.tp_sizes and inst.model.heads % len(s.gpus) == 0
            for s in pipe.stages
        )
        if gpus == owned and not gpus & failed and allowed:
            out.append(i)
    return out


def pipeline_us(cost: CostModel, pipe: Pipeline, slow: dict[str, float]) -> tuple[int, bool]:
    """(max stage time, fits memory) of a concrete pipeline (kept kinds, the healthy plan)."""
    p = len(pipe.stages)
    tau, fits = 0, True
    for i, s in enumerate(pipe.stages):
        t, n = len(s.gpus), s.layer_end - s.layer_start
        kappa = min([slow.get(g, 1.0) for g in s.gpus])
        tau = max(tau, cost.stage_us(n, i == 0, i == p - 1, t, p, kappa))
        fits = fits and cost.fits(n, i == 0, i == p - 1, t, p - i)
    return tau, fits


def healthy_time_us(cost: CostModel, inst: ReconfigInstance) -> int | None:
    """The current plan's iteration time on the healthy cluster (no slow GPU)."""
    if not inst.current_plan:
        return None
    worst, sync = 0, 0
    for pipe in inst.current_plan:
        tau, _ = pipeline_us(cost, pipe, {})
        worst = max(worst, (pipe.micro_batches + len(pipe.stages) - 1) * tau)
        sync = max(sync, cost.sync_us(sum(len(s.gpus) for s in pipe.stages)))
    return worst + sync


def copy_possible(inst: ReconfigInstance) -> bool:
    """Every layer held by some current stage with no failed GPU."""
    failed = set(inst.failed_gpus)
    held = [False] * inst.model.layers
    for pipe in inst.current_plan or ():
        for s in pipe.stages:
            if not set(s.gpus) & failed:
                for layer in range(s.layer_start, s.layer_end):
                    held[layer] = True
    return bool(inst.current_plan) and all(held)


def build_data(inst: ReconfigInstance, deadline: Deadline | None = None) -> ModelData:
    """``deadline`` stops the build (``DeadlineReached``) when it passes: templates, packings
    and kept kinds are each checked as they are computed."""
    tick = Ticker(deadline, "building the reconfiguration data (templates, packings)")
    cost = CostModel.of(inst)
    classes, where = host_classes(inst)
    per_host = max(len(inst.cluster.gpus_on(h)) for h in inst.cluster.hosts())
    L, M = inst.model.layers, inst.micro_batches
    kappas = sorted({s.speed_factor for s in inst.slow_gpus}, reverse=True)
    templates: list[Template] = []
    for t in sorted(set(inst.tp_sizes)):
        if t > per_host or inst.model.heads % t:
            continue
        for p in range(1, min(L, inst.max_stages) + 1):
            for kappa in [1.0, *kappas]:
                tp = make_template(cost, p, t, kappa, tick)
                if tp is not None:
                    templates.append(tp)
    sizes = sorted({tp.t for tp in templates})
    packs = [packings(c, sizes, tick) for c in classes]
    types = sorted({k for ps in packs for pk in ps for k in pk})
    # kept kinds: keepable current pipelines grouped by what the model needs of them
    kinds: dict[tuple, list[int]] = {}
    for i in keepable(inst):
        tick()
        pipe = (inst.current_plan or ())[i]
        tau, fits = pipeline_us(cost, pipe, inst.slow_factor)
        if not fits:
            continue
        gpus = sum(len(s.gpus) for s in pipe.stages)
        hosts = {inst.cluster.host_of(g) for s in pipe.stages for g in s.gpus}
        owned = tuple(sorted(Counter(where[h] for h in hosts).items()))
        kinds.setdefault((tau, gpus, len(pipe.stages), owned), []).append(i)
    kept = [
        KeptKind(tau, cost.sync_us(gpus), gpus, p, owned, tuple(m))
        for (tau, gpus, p, owned), m in sorted(kinds.items())
    ]
    t_ref = healthy_time_us(cost, inst)
    rate = inst.failure_rate_per_hour
    rho = (t_ref * rate / 3600e6) if (rate and t_ref) else 0.0
    data = ModelData(
        inst,
        cost,
        M,
        classes,
        packs,
        types,
        templates,
        kept,
        reload=not copy_possible(inst),
        rho=rho,
        t_ref_us=t_ref,
    )
    offered: Counter[GroupType] = Counter()
    for c, ps in zip(classes, packs, strict=True):
        for gt in types:
            offered[gt] += len(c.hosts) * max(pk[gt] for pk in ps)
    for k in range(len(templates)):
        need = data.need(k)
        data.caps[k] = min([M, *(offered[gt] // n for gt, n in need.items())])
    for j, kk in enumerate(kept):
        data.caps[len(templates) + j] = min(M, len(kk.members))
    return data


def data_of(inst: ReconfigInstance, deadline: Deadline | None = None) -> ModelData:
    """:func:`build_data`'s data for ``inst``, built once in a ``solve`` call and shared by its
    phases (each heuristic, the exact model, decomp:physical and its hand-over built them
    anew: 0.08 CPU s each at 256 GPUs; #17); none of them changes them."""
    return once_per_solve(build_data, inst, lambda: build_data(inst, deadline))
