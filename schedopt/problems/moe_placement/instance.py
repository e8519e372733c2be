"""The MoE expert-placement instance: the typed, validated form of an instance file.

Field-level checks come from pydantic; the cross-field checks (expert sizes against GPU memory,
popularity given consistently, GPU ids of the attention part and of the current placement)
live in the model validator of :class:`MoePlacementInstance` and raise
:class:`~schedopt.core.errors.FieldProblems` with field paths such as
``layers[2].experts[5].memory_gib``. See ``formulations/moe_placement.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from functools import cached_property
from typing import Annotated, Final, Literal

from pydantic import Field, model_validator

from schedopt.core import limits
from schedopt.core.errors import FieldProblems
from schedopt.core.limits import (
    MemoryGib,
    MicrosPerToken,
    NonNegMemoryGib,
    ObjectiveWeight,
    PositiveTokens,
    TokenCount,
    Tokens,
)
from schedopt.core.model import FrozenModel
from schedopt.topology import Cluster

PROBLEM: Final = "moe_placement"

_Frozen = FrozenModel
TokenBytes = Annotated[float, Field(ge=1, le=1e9, allow_inf_nan=False)]
ExtraMemoryGib = Annotated[
    float, Field(ge=0, le=limits.MAX_MEMORY_GIB * limits.MAX_GPUS, allow_inf_nan=False)
]
Concentration = Annotated[float, Field(ge=1e-6, le=limits.MAX_TOKENS, allow_inf_nan=False)]


class Expert(_Frozen):
    """One expert of one layer.

    ``popularity``: expected tokens routed to it per batch (point estimate). ``routing_count``:
    tokens routed to it in the observed past batches (the data of the posterior). At least one
    of the two; every expert of a layer gives the same kind.
    """

    memory_gib: MemoryGib
    compute_us_per_token: MicrosPerToken = 1.0
    popularity: Tokens | None = None
    routing_count: TokenCount | None = None


class Layer(_Frozen):
    name: str = ""
    experts: tuple[Expert, ...] = Field(min_length=1)
    tokens_per_batch: PositiveTokens | None = Field(
        default=None,
        description="tokens routed in this layer per batch (batch tokens × top-k); needed "
        "when popularity comes from routing counts",
    )


class LayerWithin(str, Enum):
    """C7: where all experts of one layer must sit (``none``: anywhere)."""

    NONE = "none"
    HOST = "host"
    NVLINK_DOMAIN = "nvlink_domain"


class Weights(_Frozen):
    """Weights of the weighted objective: µs of layer time, µs of transfer time, µs per GPU
    used, µs per expert replica moved."""

    load: ObjectiveWeight = 1.0
    comm: ObjectiveWeight = 0.0
    gpus: ObjectiveWeight = 0.0
    moved: ObjectiveWeight = 0.0


class Objective(_Frozen):
    mode: Literal["lexicographic", "weighted"] = "lexicographic"
    weights: Weights = Weights()


class MoePlacementInstance(_Frozen):
    problem: Literal["moe_placement"] = PROBLEM
    schema_version: Literal[1] = 1
    name: str = "moe_placement"
    cluster: Cluster
    dense_memory_gib: NonNegMemoryGib = Field(
        default=0.0, description="memory each GPU keeps for the dense/attention part"
    )
    layers: tuple[Layer, ...] = Field(min_length=1)
    attention_gpus: tuple[str, ...] | None = Field(
        default=None, description="GPUs tokens come from, evenly (default: every GPU)"
    )
    token_bytes: TokenBytes = Field(default=8192.0, description="bytes per token activation")
    objective: Objective = Objective()
    max_replicas_per_expert: int | None = Field(default=None, ge=1, le=limits.MAX_GPUS)
    max_extra_memory_gib: (
        Annotated[float, Field(ge=0, le=limits.MAX_MEMORY_GIB * limits.MAX_GPUS)] | None
    ) = Field(default=None, description="memory for replicas beyond one copy of every expert")
    layer_within: LayerWithin = LayerWithin.NONE
    current_placement: tuple[tuple[tuple[str, ...], ...], ...] | None = Field(
        default=None, description="[layer][expert] → GPUs holding it now (for experts moved)"
    )
    prior_concentration: Concentration = Field(
        default=1.0, description="Dirichlet prior α per expert for routing counts"
    )
    effective_tokens: Concentration | None = Field(
        default=None,
        description="tempered posterior: each layer's routing counts are scaled to sum to this "
        "many tokens (real routing is overdispersed across batches and domains); default: as "
        "given",
    )

    @model_validator(mode="after")
    def _cross_checks(self) -> MoePlacementInstance:
        problems: list[tuple[str, str]] = []
        gpus = self.cluster.gpus()
        known = set(gpus)
        free = {g: self.cluster.gpu(g).memory_gib - self.dense_memory_gib for g in gpus}
        biggest = max(free.values())
        if biggest <= 0:
            problems.append(
                (
                    "dense_memory_gib",
                    f"{self.dense_memory_gib:g} GiB leaves no GPU memory for experts "
                    f"(largest GPU has {max(self.cluster.gpu(g).memory_gib for g in gpus):g} GiB)",
                )
            )
        for li, layer in enumerate(self.layers):
            where = f"layers[{li}]"
            has_pop = [e.popularity is not None for e in layer.experts]
            has_cnt = [e.routing_count is not None for e in layer.experts]
            if not all(has_pop):
                if any(has_pop):
                    problems.append(
                        (f"{where}.experts", "give popularity for every expert of a layer or none")
                    )
                elif not all(has_cnt):
                    problems.append(
                        (
                            f"{where}.experts",
                            "every expert needs popularity or (for all of the layer) routing_count",
                        )
                    )
                elif layer.tokens_per_batch is None:
                    problems.append(
                        (
                            f"{where}.tokens_per_batch",
                            "required when popularity comes from routing counts",
                        )
                    )
            elif any(has_cnt) and not all(has_cnt):
                problems.append(
                    (f"{where}.experts", "give routing_count for every expert of a layer or none")
                )
            for ei, e in enumerate(layer.experts):
                if biggest > 0 and e.memory_gib > biggest + 1e-9:
                    problems.append(
                        (
                            f"{where}.experts[{ei}].memory_gib",
                            f"{e.memory_gib:g} GiB does not fit any GPU "
                            f"(at most {biggest:g} GiB free for experts)",
                        )
                    )
        need = sum(e.memory_gib for layer in self.layers for e in layer.experts)
        have = sum(max(0.0, m) for m in free.values())
        if biggest > 0 and need > have + 1e-9:
            problems.append(
                (
                    "layers",
                    f"one copy of every expert needs {need:g} GiB; the GPUs have {have:g} GiB "
                    "for experts",
                )
            )
        if biggest > 0 and self.layer_within is not LayerWithin.NONE:
            group_mem = max(sum(max(0.0, free[g]) for g in grp) for grp in self.groups)
            for li, layer in enumerate(self.layers):
                lneed = sum(e.memory_gib for e in layer.experts)
                if lneed > group_mem + 1e-9:
                    problems.append(
                        (
                            f"layers[{li}]",
                            f"needs {lneed:g} GiB inside one {self.layer_within.value}; the "
                            f"largest has {group_mem:g} GiB",
                        )
                    )
        if self.attention_gpus is not None:
            if not self.attention_gpus:
                problems.append(("attention_gpus", "empty; omit it to use every GPU"))
            seen: set[str] = set()
            for i, g in enumerate(self.attention_gpus):
                if g not in known:
                    problems.append((f"attention_gpus[{i}]", f"unknown GPU {g!r}"))
                elif g in seen:
                    problems.append((f"attention_gpus[{i}]", f"duplicate GPU {g!r}"))
                seen.add(g)
        if self.current_placement is not None:
            cp = self.current_placement
            if len(cp) != len(self.layers):
                problems.append(
                    ("current_placement", f"has {len(cp)} layers, the model {len(self.layers)}")
                )
            for li, row in enumerate(cp[: len(self.layers)]):
                n_exp = len(self.layers[li].experts)
                if len(row) != n_exp:
                    problems.append(
                        (f"current_placement[{li}]", f"has {len(row)} experts, the layer {n_exp}")
                    )
                for ei, where_now in enumerate(row):
                    if len(set(where_now)) != len(where_now):
                        problems.append(
                            (f"current_placement[{li}][{ei}]", "lists a GPU more than once")
                        )
                    for gi, g in enumerate(where_now):
                        if g not in known:
                            problems.append(
                                (f"current_placement[{li}][{ei}][{gi}]", f"unknown GPU {g!r}")
                            )
        w = self.objective.weights
        if self.objective.mode == "weighted" and not (w.load or w.comm or w.gpus or w.moved):
            problems.append(("objective.weights", "all weights are 0"))
        if not problems:
            problems.extend(self._magnitude_problems())
        if problems:
            raise FieldProblems(problems)
        return self

    def _magnitude_problems(self) -> list[tuple[str, str]]:
        """Each expert's load and transfer time per batch are coefficients of the models (C8,
        C9 of ``formulations/moe_placement.md``); bound them, weighted, by MAX_MODEL_US. The
        transfer time is bounded through the narrowest link, so no path search is needed."""
        spec = self.cluster.to_spec()
        slowest = min(g.speed for g in spec.gpus)
        narrowest = min(link.bandwidth_gbps for link in spec.links)
        us_per_token = 2.0 * self.token_bytes * 8.0 / (narrowest * 1e3)  # bits / (bits per µs)
        weighted = self.objective.mode == "weighted"
        w_load = self.objective.weights.load if weighted else 1.0
        w_comm = self.objective.weights.comm if weighted else 1.0
        top = limits.MAX_MODEL_US
        problems = []
        for li, layer in enumerate(self.layers):
            for ei, (e, pop) in enumerate(
                zip(layer.experts, self.point_popularity(li), strict=True)
            ):
                load = pop * e.compute_us_per_token / slowest
                comm = pop * us_per_token
                if max(load * max(w_load, 1.0), comm * max(w_comm, 1.0)) > top:
                    problems.append(
                        (
                            f"layers[{li}].experts[{ei}]",
                            f"{pop:.3g} tokens per batch make a load of {load:.3g} µs (at the "
                            f"slowest GPU) and a transfer of up to {comm:.3g} µs (over the "
                            f"narrowest link); with the objective weights the models need "
                            f"these below {top:.0e} µs",
                        )
                    )
        return problems

    # --- derived views (computed once; the instance is frozen) ----------------------------
    @cached_property
    def gpu_ids(self) -> tuple[str, ...]:
        return self.cluster.gpus()

    @cached_property
    def groups(self) -> tuple[tuple[str, ...], ...]:
        """The groups of C7 (hosts or NVLink domains), each a sorted tuple of GPU ids; one group
        of every GPU when ``layer_within`` is ``none``."""
        order = {g: i for i, g in enumerate(self.cluster.gpus())}
        if self.layer_within is LayerWithin.HOST:
            raw = [self.cluster.gpus_on(h) for h in self.cluster.hosts()]
        elif self.layer_within is LayerWithin.NVLINK_DOMAIN:
            raw = [tuple(d) for d in self.cluster.nvlink_domains()]
        else:
            raw = [self.cluster.gpus()]
        return tuple(tuple(sorted(grp, key=order.__getitem__)) for grp in raw if grp)

    @cached_property
    def sources(self) -> tuple[str, ...]:
        """GPUs the tokens come from (the attention part), each sending an equal share."""
        return self.attention_gpus if self.attention_gpus is not None else self.cluster.gpus()

    def point_popularity(self, layer: int) -> tuple[float, ...]:
        """Expected tokens per batch of every expert of ``layer``: the given popularity, else
        the Dirichlet posterior mean of the routing counts times ``tokens_per_batch``."""
        return self._point_popularity[layer]

    @cached_property
    def _point_popularity(self) -> tuple[tuple[float, ...], ...]:
        out = []
        for layer in self.layers:
            if all(e.popularity is not None for e in layer.experts):
                out.append(tuple(float(e.popularity or 0.0) for e in layer.experts))
                continue
            a = self.prior_concentration
            counts = self.tempered_counts(layer)
            total = sum(counts) + a * len(counts)
            tokens = float(layer.tokens_per_batch or 0.0)
            out.append(tuple(tokens * (a + c) / total for c in counts))
        return tuple(out)

    def tempered_counts(self, layer: Layer) -> list[float]:
        """The layer's routing counts, scaled to ``effective_tokens`` when it is set."""
        counts = [float(e.routing_count or 0) for e in layer.experts]
        total = sum(counts)
        if self.effective_tokens is not None and total > 0:
            counts = [c * self.effective_tokens / total for c in counts]
        return counts

    @cached_property
    def transfer_us_per_token(self) -> tuple[float, ...]:
        """κ_g per GPU (in ``cluster.gpus()`` order): mean over the attention GPUs s of
        2 · token_bytes · 8 / bandwidth(s, g) in µs (0 when s == g). Computed once per instance
        (every method of one ``auto`` call shares it); the validator recomputes its own."""
        return self.transfer_costs()

    def transfer_costs(self, tick: Callable[[], None] | None = None) -> tuple[float, ...]:
        """``transfer_us_per_token``, calling ``tick`` once per attention GPU (a widest-path
        tree each: 0.5 s for 255 sources on 256 GPUs, so data building checks its deadline in
        it); the value is kept as ``transfer_us_per_token`` once complete."""
        kept = self.__dict__.get("transfer_us_per_token")
        if kept is not None:
            return kept
        gpus = self.cluster.gpus()
        cost = [0.0] * len(gpus)
        bits = 2.0 * self.token_bytes * 8.0
        for s in self.sources:  # source outermost: one widest-path tree per source
            if tick is not None:
                tick()
            for j, g in enumerate(gpus):
                if s != g:
                    cost[j] += bits / (self.cluster.bandwidth(s, g) * 1e3)  # Gbps → bits/µs
        value = tuple(c / len(self.sources) for c in cost)
        self.__dict__["transfer_us_per_token"] = value  # what cached_property would keep
        return value

    @property
    def has_routing_counts(self) -> bool:
        return any(all(e.routing_count is not None for e in layer.experts) for layer in self.layers)
