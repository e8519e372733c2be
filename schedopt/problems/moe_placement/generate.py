"""Seeded MoE placement instances with skewed popularity and real model shapes.

Shapes come from the models' published configurations (Hugging Face ``config.json``):

- Mixtral-8x7B (mistralai/Mixtral-8x7B-v0.1): 32 layers, 8 experts, top-2, hidden 4096,
  expert FFN 14336;
- OLMoE-1B-7B (allenai/OLMoE-1B-7B-0924): 16 layers, 64 experts, top-8, hidden 2048,
  expert FFN 1024;
- DeepSeek-V3 (deepseek-ai/DeepSeek-V3): 61 layers of which 58 MoE, 256 routed experts, top-8,
  hidden 7168, expert FFN 2048, FP8 weights.

An expert is a SwiGLU FFN of 3 · hidden · ffn parameters: its memory is that times the bytes per
parameter, its compute 2 FLOPs per parameter per token at ``EFFECTIVE_TFLOPS`` on a speed-1.0
GPU. Token activations travel in bf16 (2 bytes × hidden).

Popularity is Zipf-like: in layer l the expert of rank r gets a share ∝ (r + 1)^(-s_l), with
s_l = skew × U(0.5, 1.5) (layer-varying) and ranks shuffled per layer; a batch routes
``batch_tokens_per_gpu × GPUs × top_k`` tokens per layer. With ``observed_tokens`` the instance
carries routing counts (a multinomial sample of that many tokens) instead of the popularity,
so the point estimate is the posterior mean and the scenario model has something to learn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from schedopt.topology import Cluster

from .instance import MoePlacementInstance

#: Effective dense bf16 throughput of a speed-1.0 GPU (an H100 at about 40 % of 989 TFLOP/s).
EFFECTIVE_TFLOPS = 400.0
GIB = 2.0**30


@dataclass(frozen=True)
class ModelShape:
    name: str
    layers: int
    experts: int
    top_k: int
    hidden: int
    ffn: int
    bytes_per_param: float = 2.0

    @property
    def expert_memory_gib(self) -> float:
        return 3 * self.hidden * self.ffn * self.bytes_per_param / GIB

    @property
    def compute_us_per_token(self) -> float:
        return 2 * 3 * self.hidden * self.ffn / (EFFECTIVE_TFLOPS * 1e12) * 1e6

    @property
    def token_bytes(self) -> float:
        return 2.0 * self.hidden


SHAPES = {
    "mixtral-8x7b": ModelShape("mixtral-8x7b", 32, 8, 2, 4096, 14336),
    "olmoe-1b-7b": ModelShape("olmoe-1b-7b", 16, 64, 8, 2048, 1024),
    "deepseek-v3": ModelShape("deepseek-v3", 58, 256, 8, 7168, 2048, 1.0),
}


@dataclass(frozen=True)
class Size:
    shape: str
    layers: int
    experts: int
    hosts: int
    gpus_per_host: int


SIZES = {
    "tiny": Size("mixtral-8x7b", 2, 4, 1, 4),
    "small": Size("mixtral-8x7b", 4, 8, 2, 4),
    "medium": Size("olmoe-1b-7b", 16, 64, 2, 8),
    "large": Size("olmoe-1b-7b", 32, 64, 8, 8),
}


def generate(size: str = "small", seed: int = 0) -> MoePlacementInstance:
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; choose from {sorted(SIZES)}")
    s = SIZES[size]
    return generate_custom(
        shape=s.shape,
        layers=s.layers,
        experts=s.experts,
        hosts=s.hosts,
        gpus_per_host=s.gpus_per_host,
        seed=seed,
        name=f"moe-{size}-s{seed}",
    )


def zipf_shares(rng: np.random.Generator, experts: int, skew: float) -> np.ndarray:
    """Routing shares of one layer: Zipf with exponent skew × U(0.5, 1.5), ranks shuffled."""
    s = skew * rng.uniform(0.5, 1.5)
    shares = (np.arange(experts) + 1.0) ** (-s)
    shares = shares / shares.sum()
    return shares[rng.permutation(experts)]


def generate_custom(
    *,
    shape: str = "mixtral-8x7b",
    layers: int | None = None,
    experts: int | None = None,
    hosts: int = 1,
    gpus_per_host: int = 8,
    gpu_type: str = "H100",
    skew: float = 1.0,
    memory_headroom: float = 1.5,
    batch_tokens_per_gpu: int = 512,
    observed_tokens: int | None = None,
    attention: str = "all",
    layer_within: str = "none",
    max_replicas_per_expert: int | None = None,
    with_current: bool = False,
    seed: int = 0,
    name: str | None = None,
) -> MoePlacementInstance:
    """``memory_headroom``: the GPUs' expert memory over one copy of every expert (1.5 leaves
    room for half as many replicas again); ``attention``: ``all`` GPUs or ``host0`` only."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; choose from {sorted(SHAPES)}")
    m = SHAPES[shape]
    L = m.layers if layers is None else layers
    E = m.experts if experts is None else experts
    rng = np.random.default_rng(seed)
    cluster = Cluster.dgx(nodes=hosts, gpus_per_node=gpus_per_host, gpu_type=gpu_type)
    n = cluster.num_gpus
    gpu_mem = min(cluster.gpu(g).memory_gib for g in cluster.gpus())
    need = L * E * m.expert_memory_gib
    per_gpu = max(memory_headroom * need / n, m.expert_memory_gib * 1.0001)
    dense = max(0.0, gpu_mem - per_gpu)
    tokens = batch_tokens_per_gpu * n * m.top_k
    out_layers = []
    for li in range(L):
        shares = zipf_shares(rng, E, skew)
        layer: dict[str, Any] = {"name": f"layer{li}"}
        if observed_tokens is None:
            pops = np.round(shares * tokens, 3)
            layer["experts"] = [
                {
                    "memory_gib": m.expert_memory_gib,
                    "compute_us_per_token": m.compute_us_per_token,
                    "popularity": float(p),
                }
                for p in pops
            ]
        else:
            counts = rng.multinomial(observed_tokens, shares)
            layer["tokens_per_batch"] = float(tokens)
            layer["experts"] = [
                {
                    "memory_gib": m.expert_memory_gib,
                    "compute_us_per_token": m.compute_us_per_token,
                    "routing_count": int(c),
                }
                for c in counts
            ]
        out_layers.append(layer)
    doc: dict[str, Any] = {
        "problem": "moe_placement",
        "name": name or f"moe-{shape}-{L}x{E}-{n}gpu-s{seed}",
        "cluster": cluster.to_dict(),
        "dense_memory_gib": round(dense, 6),
        "layers": out_layers,
        "token_bytes": m.token_bytes,
        "layer_within": layer_within,
    }
    if attention == "host0":
        doc["attention_gpus"] = list(cluster.gpus_on(cluster.hosts()[0]))
    elif attention != "all":
        raise ValueError(f"attention must be 'all' or 'host0' (got {attention!r})")
    if max_replicas_per_expert is not None:
        doc["max_replicas_per_expert"] = max_replicas_per_expert
    if with_current:
        gpus = cluster.gpus()
        doc["current_placement"] = [[[gpus[(li * E + e) % n]] for e in range(E)] for li in range(L)]
    return MoePlacementInstance.model_validate(doc)


def from_counts(
    counts: Sequence[Sequence[int]],
    *,
    shape: str,
    cluster: Cluster,
    batch_tokens_per_gpu: int = 512,
    memory_headroom: float = 1.5,
    name: str = "moe-from-counts",
) -> MoePlacementInstance:
    """An instance from observed routing counts, ``counts[l][e]`` (e.g. from
    ``schedopt.io.traces.routing_counts``), with the expert sizes of ``shape``."""
    m = SHAPES[shape]
    n = cluster.num_gpus
    L, E = len(counts), max(len(row) for row in counts)
    gpu_mem = min(cluster.gpu(g).memory_gib for g in cluster.gpus())
    per_gpu = max(memory_headroom * L * E * m.expert_memory_gib / n, m.expert_memory_gib * 1.0001)
    tokens = batch_tokens_per_gpu * n * m.top_k
    doc = {
        "problem": "moe_placement",
        "name": name,
        "cluster": cluster.to_dict(),
        "dense_memory_gib": round(max(0.0, gpu_mem - per_gpu), 6),
        "token_bytes": m.token_bytes,
        "layers": [
            {
                "name": f"layer{li}",
                "tokens_per_batch": float(tokens),
                "experts": [
                    {
                        "memory_gib": m.expert_memory_gib,
                        "compute_us_per_token": m.compute_us_per_token,
                        "routing_count": int(c),
                    }
                    for c in row
                ],
            }
            for li, row in enumerate(counts)
        ],
    }
    return MoePlacementInstance.model_validate(doc)
