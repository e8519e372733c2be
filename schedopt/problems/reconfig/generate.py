"""Seeded reconfiguration instances: a published model on DGX hosts, its healthy Megatron plan,
then failures.

Facts the generator draws on (cited in issue 11):
- Llama 3 pre-training on 16,384 H100s had 419 unexpected interruptions in 54 days, about one
  every 3 hours; 58.7% GPU-related (faulty GPU 30.1%, HBM3 17.2%, SRAM 4.5%, GPU system
  processor 4.1%), software 12.9%, network switch/cable 8.4%, host maintenance 7.6%
  (Dubey et al. 2024): ``LLAMA3_FAILURES_PER_GPU_HOUR`` and the fail-stop share.
- The InfiniteHBD fault trace (584 faults on 231 of 400 servers over 349 days) is replayed by
  ``benchmarks/reconfig.py`` through ``schedopt.io.traces.infinitehbd``.
- Scale: ResiHP evaluates on 256 GPUs (the ``medium`` size); Oobleck reports up to 29.6× over
  Bamboo/Varuna. Bandwidths: H100 NVLink 900 GB/s, H800 NVLink 400 GB/s, 400 Gb/s IB per GPU
  (the DGX builder's defaults: 7,200 Gb/s NVLink, 3,200 Gb/s per host).
- Fail-slow factors κ ∈ {0.8, 0.5, 0.25}: an assumption (ResiHP and Falcon report slow GPUs at
  a fraction of their speed; the trace has no speeds).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from schedopt.topology import Cluster

from .data import build_data
from .heuristics import MegatronParams, megatron
from .instance import ModelConfig, ReconfigInstance
from .plan import realise

#: Published configs (Hugging Face config.json of each; GPT-3 with Megatron-LM's vocabulary).
MODELS: dict[str, dict[str, Any]] = {
    "llama2-7b": dict(
        layers=32,
        hidden=4096,
        heads=32,
        ffn_hidden=11008,
        gated_mlp=True,
        vocab=32000,
        seq_len=4096,
    ),
    "llama2-13b": dict(
        layers=40,
        hidden=5120,
        heads=40,
        ffn_hidden=13824,
        gated_mlp=True,
        vocab=32000,
        seq_len=4096,
    ),
    "llama2-70b": dict(
        layers=80,
        hidden=8192,
        heads=64,
        kv_heads=8,
        ffn_hidden=28672,
        gated_mlp=True,
        vocab=32000,
        seq_len=4096,
    ),
    "qwen2.5-7b": dict(
        layers=28,
        hidden=3584,
        heads=28,
        kv_heads=4,
        ffn_hidden=18944,
        gated_mlp=True,
        vocab=152064,
        seq_len=4096,
    ),
    "qwen2.5-14b": dict(
        layers=48,
        hidden=5120,
        heads=40,
        kv_heads=8,
        ffn_hidden=13824,
        gated_mlp=True,
        vocab=152064,
        seq_len=4096,
    ),
    "qwen2.5-32b": dict(
        layers=64,
        hidden=5120,
        heads=40,
        kv_heads=8,
        ffn_hidden=27648,
        gated_mlp=True,
        vocab=152064,
        seq_len=4096,
    ),
    "qwen2.5-72b": dict(
        layers=80,
        hidden=8192,
        heads=64,
        kv_heads=8,
        ffn_hidden=29568,
        gated_mlp=True,
        vocab=152064,
        seq_len=4096,
    ),
    "gpt3-175b": dict(layers=96, hidden=12288, heads=96, vocab=51200, seq_len=2048),
    "megatron-1t": dict(layers=128, hidden=25600, heads=160, vocab=51200, seq_len=2048),
    "toy": dict(layers=4, hidden=1024, heads=16, vocab=32000, seq_len=1024),
}

#: 419 interruptions / (16,384 GPUs · 54 days · 24 h).
LLAMA3_FAILURES_PER_GPU_HOUR = 419 / (16_384 * 54 * 24)
SLOW_FACTORS = (0.8, 0.5, 0.25)

#: name → (hosts, GPUs per host, model, global batch, fail-stop, fail-slow, GPU memory GiB)
SIZES: dict[str, tuple[int, int, str, int, int, int, float | None]] = {
    "tiny": (2, 4, "toy", 8, 1, 1, 8.0),
    "small": (4, 8, "llama2-7b", 64, 2, 1, None),
    "medium": (32, 8, "llama2-70b", 256, 4, 4, None),
}


def model_config(name: str, **overrides: Any) -> ModelConfig:
    return ModelConfig(name=name, **{**MODELS[name], **overrides})


def with_current_plan(inst: ReconfigInstance) -> ReconfigInstance:
    """The instance with its healthy plan: the Megatron rule on the whole, healthy cluster."""
    doc = inst.model_dump(mode="json")
    healthy = ReconfigInstance.model_validate(
        {
            **doc,
            "failed_gpus": [],
            "slow_gpus": [],
            "current_plan": None,
            "failure_rate_per_hour": None,
        }
    )
    data = build_data(healthy)
    raw = megatron(data, MegatronParams())
    sol = None if raw is None else realise(data, raw)
    if sol is None:
        return inst
    return ReconfigInstance.model_validate(
        {**inst.model_dump(mode="json"), "current_plan": [p.model_dump() for p in sol.pipelines]}
    )


def generate_custom(
    hosts: int,
    gpus_per_host: int = 8,
    model: str = "llama2-7b",
    global_batch: int = 64,
    fail_stop: int = 1,
    fail_slow: int = 0,
    seed: int = 0,
    memory_gib: float | None = None,
    failure_rate_per_hour: float | None = None,
    **fields: Any,
) -> ReconfigInstance:
    """``hosts`` DGX hosts, the model, its healthy Megatron plan, then ``fail_stop`` failed and
    ``fail_slow`` slow GPUs drawn at random (seeded)."""
    rng = np.random.default_rng(seed)
    cluster = Cluster.dgx(nodes=hosts, gpus_per_node=gpus_per_host, memory_gib=memory_gib)
    gpus = list(cluster.gpus())
    pick = rng.choice(len(gpus), size=min(len(gpus) - 1, fail_stop + fail_slow), replace=False)
    failed = [gpus[i] for i in pick[:fail_stop]]
    slow = [
        {"gpu": gpus[i], "speed_factor": float(rng.choice(SLOW_FACTORS))} for i in pick[fail_stop:]
    ]
    base = ReconfigInstance(
        name=f"{model}-{hosts}x{gpus_per_host}-f{fail_stop}-s{fail_slow}-seed{seed}",
        cluster=cluster,
        model=model_config(model),
        global_batch=global_batch,
        **fields,
    )
    base = with_current_plan(base)
    return ReconfigInstance.model_validate(
        {
            **base.model_dump(mode="json"),
            "failed_gpus": failed,
            "slow_gpus": slow,
            "failure_rate_per_hour": failure_rate_per_hour if base.current_plan else None,
        }
    )


def generate(size: str, seed: int = 0) -> ReconfigInstance:
    hosts, per_host, model, batch, stop, slow, memory = SIZES[size]
    return generate_custom(hosts, per_host, model, batch, stop, slow, seed, memory_gib=memory)
