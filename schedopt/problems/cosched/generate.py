"""Seeded co-scheduling instances drawn from the published facts.

Sources (issue 10):
- RollMux (Weave, OSDI'26): testbed 328 H20 + 328 H800 GPUs; prices in a published summary of
  RollMux: H20 $1.85, H800 $5.28 per GPU-hour; reported 1.84× cost efficiency over plain
  disaggregation and 1.38× over co-location at 100% SLO attainment.
- RollPacker (NSDI'26, Qwen2.5-14B on 32 H800, 16k max response): step shares rollout 66–72%,
  reward 5–13%, train 21–23%; GRPO batch 128 prompts × 8 responses; response length P75
  755–1.1k tokens with a tail to the 16k cap; Qwen2.5 7B/14B/32B trained on 16/32/64 H800 with
  rollout TP 1/2/2 and training (TP, PP, CP) = (2,1,1)/(2,2,2)/(4,1,4); 8 GPUs and 400 Gb/s IB
  per host; long-round steps ≈ 115–124 s.
- RollArt (OSDI'26): prefill on H800, decode on H20, environments on CPU.

A step's rollout lasts as long as its longest response: every draw takes the longest of
128 × 8 response lengths (lognormal, median 600 tokens, σ 0.6 so P75 ≈ 900, and 0.005% of
responses run to the 16k cap, so about 5% of steps are long rounds; a long round of a 14B job on
32 H800 is RollPacker's ≈ 120 s step). ``duration_ms`` is the p90 of 32 planning draws,
rounded up to 100 ms; ``holdout_ms`` holds 16 further draws (metrics only).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .instance import CoschedInstance

PRICES = {"h20": 1.85, "h800": 5.28, "cpu": 3.00}
#: (billions of parameters, H800 GPUs for training, rollout TP, training TP), RollPacker.
MODELS = ((7.0, 16, 1, 2), (14.0, 32, 2, 2), (32.0, 64, 2, 4))
STEP_14B_S = 120.0  # RollPacker long-round step on 32 H800
SHARES = {"rollout": (0.66, 0.72), "reward": (0.05, 0.13), "train": (0.21, 0.23)}
CAP_TOKENS = 16_384
#: Chance that a response runs to the cap: about 5% of steps (of 1,024 responses) are long
#: rounds. An assumption, not a published figure: RollPacker reports the tail, not its mass.
CAP_RESPONSE_P = 5e-5

#: name → (H20 hosts, H800 hosts, CPU hosts, jobs, model sizes allowed (indices of MODELS)).
SIZES: dict[str, tuple[int, int, int, int, tuple[int, ...]]] = {
    "tiny": (2, 2, 1, 2, (0,)),
    "small": (4, 4, 2, 4, (0, 1)),
    "medium": (8, 8, 4, 8, (0, 1)),
}


def _longest(rng: np.random.Generator, draws: int) -> np.ndarray:
    """``draws`` steps' longest response length (tokens) of 1,024 responses each."""
    lengths = np.exp(rng.normal(math.log(600.0), 0.6, size=(draws, 1024)))
    capped = rng.random((draws, 1024)) < CAP_RESPONSE_P
    lengths = np.where(capped, CAP_TOKENS, np.minimum(lengths, CAP_TOKENS))
    return lengths.max(axis=1)


def _ms(seconds: np.ndarray | float) -> Any:
    return np.ceil(np.asarray(seconds) * 10.0) * 100  # whole 100 ms, rounded up


def _job(
    rng: np.random.Generator,
    j: int,
    model: tuple[float, int, int, int],
    scale: int,
    cpu: bool,
    scenarios: int = 0,
) -> dict[str, Any]:
    params, train_gpus, rollout_tp, train_tp = model
    n = max(train_gpus // scale, train_tp)
    step = STEP_14B_S * math.sqrt(params / 14.0)
    share = {k: rng.uniform(*v) for k, v in SHARES.items()}
    total = sum(share.values())
    rollout_s = step * share["rollout"] / total
    longest = _longest(rng, 48)
    per_token = rollout_s / CAP_TOKENS  # the reference rollout runs to the cap
    planning, held = longest[:32], longest[32:]

    def rollout(pool: str, gpus: int) -> dict[str, Any]:
        speed = 1.0 if pool == "h800" else 0.95  # decode is bandwidth-bound: H20 ≈ H800
        factor = per_token * (n / gpus) / speed
        return {
            "pool": pool,
            "gpus": gpus,
            "tp": rollout_tp,
            "duration_ms": int(_ms(np.quantile(planning * factor, 0.9))),
            "resident_gib": round(2.0 * params * 1.2, 3),
            "holdout_ms": [int(x) for x in _ms(held * factor)],
            **(
                {"samples_ms": [int(x) for x in _ms(planning[:scenarios] * factor)]}
                if scenarios
                else {}
            ),
        }

    train_s = step * share["train"] / total
    reward_s = step * share["reward"] / total
    phases: list[dict[str, Any]] = [
        {
            "name": "rollout",
            "options": [rollout("h20", n), rollout("h20", 2 * n), rollout("h800", n)],
        },
    ]
    if cpu:
        phases.append(
            {
                "name": "reward",
                "options": [
                    {
                        "pool": "cpu",
                        "gpus": 1,
                        "duration_ms": int(_ms(reward_s)),
                        "resident_gib": 1.0,
                    }
                ],
            }
        )
    else:
        phases.append(
            {
                "name": "reward",
                "options": [
                    {
                        "pool": "h20",
                        "gpus": n,
                        "tp": rollout_tp,
                        "duration_ms": int(_ms(reward_s * 1.1)),
                        "resident_gib": round(2.0 * params, 3),
                    },
                    {
                        "pool": "h800",
                        "gpus": n,
                        "tp": rollout_tp,
                        "duration_ms": int(_ms(reward_s)),
                        "resident_gib": round(2.0 * params, 3),
                    },
                ],
            }
        )
    phases.append(
        {
            "name": "train",
            "options": [
                {
                    "pool": "h800",
                    "gpus": n,
                    "tp": train_tp,
                    "duration_ms": int(_ms(train_s)),
                    "resident_gib": round(16.0 * params, 3),
                },
                {
                    "pool": "h800",
                    "gpus": 2 * n,
                    "tp": train_tp,
                    "duration_ms": int(_ms(train_s / 1.8)),
                    "resident_gib": round(16.0 * params, 3),
                },
            ],
        }
    )
    solo = sum(min(o["duration_ms"] for o in p["options"]) for p in phases)
    return {
        "id": f"j{j}",
        "phases": phases,
        "staleness": int(rng.random() < 0.3),
        "slo_ms": int(_ms(solo / 1000 * rng.uniform(1.6, 3.0))),
        "params_b": params,
        "switch_ms": int(_ms(rng.uniform(1.0, 3.0))),
    }


def generate_custom(
    h20_hosts: int,
    h800_hosts: int,
    cpu_hosts: int,
    jobs: int,
    seed: int = 0,
    models: tuple[int, ...] = (0, 1, 2),
    scale: int = 4,
    name: str = "",
    chance: tuple[float, int] | None = None,
) -> CoschedInstance:
    """``jobs`` jobs on the given hosts; ``scale`` divides RollPacker's GPU counts (a 14B job
    trains on 32 / scale H800 GPUs) so that small clusters hold several jobs. ``chance =
    (epsilon, S)`` adds the scenario model (C13): each rollout option gets S planning draws
    as ``samples_ms`` (other phases last their planned time in every scenario)."""
    rng = np.random.default_rng(seed)
    pools = [
        {
            "name": "h20",
            "hosts": h20_hosts,
            "gpus_per_host": 8,
            "host_memory_gib": 1024.0,
            "price_per_gpu_hour": PRICES["h20"],
        },
        {
            "name": "h800",
            "hosts": h800_hosts,
            "gpus_per_host": 8,
            "host_memory_gib": 2048.0,
            "price_per_gpu_hour": PRICES["h800"],
        },
    ]
    if cpu_hosts:
        pools.append(
            {
                "name": "cpu",
                "kind": "cpu",
                "hosts": cpu_hosts,
                "gpus_per_host": 1,
                "host_memory_gib": 256.0,
                "price_per_gpu_hour": PRICES["cpu"],
            }
        )
    doc = {
        "problem": "cosched",
        "schema_version": 1,
        "name": name or f"cosched-{h20_hosts}x{h800_hosts}x{cpu_hosts}-{jobs}j-s{seed}",
        "pools": pools,
        "jobs": [
            _job(
                rng,
                j,
                MODELS[int(rng.choice(models))],
                scale,
                bool(cpu_hosts) and j % 2 == 0,
                0 if chance is None else chance[1],
            )
            for j in range(jobs)
        ],
        "sync_bandwidth_gbps": 400.0,
    }
    if chance is not None:
        doc["chance"] = {"epsilon": chance[0], "scenarios": chance[1]}
    return CoschedInstance.model_validate(doc)


def generate(size: str, seed: int = 0) -> CoschedInstance:
    h20, h800, cpu, jobs, models = SIZES[size]
    return generate_custom(h20, h800, cpu, jobs, seed, models, name=f"cosched-{size}-s{seed}")
