"""MoE placement suites: the papers' scale of issue #17 (OLMoE's 64 experts × 32 layers on 64
GPUs, DeepSeek-V3's 58 layers × 256 experts on 256 GPUs) and a ladder of sizes between, each run
with ``auto``, ``decomp:layer`` and the whole model (``milp:highs``) on the same instances."""

from __future__ import annotations

from schedopt.bench.suite import Recipe, Suite

PROBLEM = "moe_placement"
METHODS = ("auto", "decomp:layer", "milp:highs")


#: instance_checksum of each recipe's instance (recorded 2026-12-03).
CHECKSUMS = {
    "olmoe-16x64-16gpu-s0": ("21bbc2372198066acd3bd4cb96e2352eee5616d6df61d59b2db86c0bf0abc93a"),
    "olmoe-32x64-64gpu-s0": ("32327c00c9d008d95a77db8d60d3e2332a3b40a6af6d863f9d0742bad0c49b9b"),
    "deepseek-v3-58x256-64gpu-s0": (
        "d1d34b6242def55898b026cc376099b9200cade44c533bfc011c61f561f986c2"
    ),
    "deepseek-v3-58x256-128gpu-s0": (
        "6dee4b88e614fd77a8fb0ad707d9c073e1b05fe6b9f51e375f7b099aaf59962d"
    ),
    "deepseek-v3-58x256-256gpu-s0": (
        "aac2e517178f5cd160aca2b191ee15aef3be184272fb7dddff4b0efb0788f64f"
    ),
}


def _recipe(name: str, **args: object) -> Recipe:
    return Recipe(name, PROBLEM, "generate_custom", {**args, "seed": 0}, CHECKSUMS[name])


PAPER = Suite(
    "moe-paper",
    PROBLEM,
    (
        _recipe("olmoe-32x64-64gpu-s0", shape="olmoe-1b-7b", layers=32, experts=64, hosts=8),
        _recipe("deepseek-v3-58x256-256gpu-s0", shape="deepseek-v3", hosts=32),
    ),
    METHODS,
    10.0,
    "issue #17's two MoE rows: target gap <= 2% (OLMoE) and <= 3% (DeepSeek-V3) in 10 s",
)

SCALE = Suite(
    "moe-scale",
    PROBLEM,
    (
        _recipe("olmoe-16x64-16gpu-s0", shape="olmoe-1b-7b", layers=16, experts=64, hosts=2),
        _recipe("olmoe-32x64-64gpu-s0", shape="olmoe-1b-7b", layers=32, experts=64, hosts=8),
        _recipe("deepseek-v3-58x256-64gpu-s0", shape="deepseek-v3", hosts=8),
        _recipe("deepseek-v3-58x256-128gpu-s0", shape="deepseek-v3", hosts=16),
        _recipe("deepseek-v3-58x256-256gpu-s0", shape="deepseek-v3", hosts=32),
    ),
    METHODS,
    10.0,
    "16 to 256 GPUs: how gap and wall time grow with size, decomposition beside the whole model",
)

SUITES: tuple[Suite, ...] = (PAPER, SCALE)
