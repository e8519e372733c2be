"""The candidates of the golden instances (``instances/<problem>/``), one generator per problem
(and fair share's per-job record); ``make_golden.py`` proves and records them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import schedopt.problems.admission as adm
import schedopt.problems.cosched as co
import schedopt.problems.fairshare as fs
import schedopt.problems.moe_placement as moe
import schedopt.problems.reconfig as rc
import schedopt.problems.timeshare as ts

Cases = Iterator[tuple[str, Any]]


def admission() -> Cases:
    for seed in range(4):
        yield f"small-s{seed}", adm.generate("small", seed)
    for seed in (0, 2):
        yield (
            f"4x8-20j-s{seed}",
            adm.generate_custom(
                hosts=4, jobs=20, slots=8, seed=seed, name=f"admission-4x8-20j-s{seed}"
            ),
        )


def fairshare_perjob() -> Cases:
    job = fs.FairnessUnit.JOB
    yield (
        "perjob-16gpu-12j-s3",
        fs.generate_custom(
            gpus=16,
            tenants=3,
            jobs=12,
            gpus_per_host=4,
            seed=3,
            fairness_unit=job,
            name="fs-perjob-16-s3",
        ),
    )
    yield (
        "perjob-32gpu-20j-s4",
        fs.generate_custom(
            gpus=32, tenants=5, jobs=20, seed=4, fairness_unit=job, name="fs-perjob-32-s4"
        ),
    )
    yield (
        "perjob-32gpu-20j-onehost-s5",
        fs.generate_custom(
            gpus=32,
            tenants=5,
            jobs=20,
            seed=5,
            allow_multi_host=False,
            fairness_unit=job,
            name="fs-perjob-32-onehost-s5",
        ),
    )
    yield (
        "perjob-32gpu-24j-hard-cap-s6",
        fs.generate_custom(
            gpus=32,
            tenants=4,
            jobs=24,
            seed=6,
            guarantees_hard=True,
            max_preemptions=3,
            fairness_unit=job,
            name="fs-perjob-32-hard-cap-s6",
        ),
    )


def fairshare() -> Cases:
    for seed in range(3):
        yield f"small-s{seed}", fs.generate("small", seed)
    yield "32gpu-20j-s0", fs.generate_custom(gpus=32, tenants=5, jobs=20, seed=0, name="fs-32-s0")
    yield (
        "32gpu-20j-onehost-s1",
        fs.generate_custom(
            gpus=32, tenants=5, jobs=20, seed=1, allow_multi_host=False, name="fs-32-onehost-s1"
        ),
    )
    yield (
        "32gpu-24j-hard-cap-s2",
        fs.generate_custom(
            gpus=32,
            tenants=4,
            jobs=24,
            seed=2,
            guarantees_hard=True,
            max_preemptions=3,
            name="fs-32-hard-cap-s2",
        ),
    )


def timeshare() -> Cases:
    for k, policy in enumerate(ts.Policy):
        yield f"{policy.value}-8j-s{k}", ts.generate_custom(8, seed=k, policy=policy)
        if policy.takes_pairs:
            name = f"{policy.value}-pairs-6j-s{k}"
            yield name, ts.generate_custom(6, seed=k, policy=policy, pairs=True, name=name)
            # co-location by job type: classes of identical jobs and class pairs
            name = f"{policy.value}-colocation-24j-s{k}"
            yield (
                name,
                ts.generate_custom(24, seed=k, policy=policy, pairs=True, job_types=4, name=name),
            )


def _weighted(inst: moe.MoePlacementInstance) -> moe.MoePlacementInstance:
    doc = inst.model_dump(mode="json")
    doc["name"] = inst.name + "-weighted"
    doc["objective"] = {"mode": "weighted", "weights": {"load": 1.0, "comm": 1.0, "gpus": 50.0}}
    return moe.MoePlacementInstance.model_validate(doc)


def moe_placement() -> Cases:
    for seed in (0, 1, 3):  # tiny-s2 takes CP-SAT 25 s to prove: too slow for the test suite
        yield f"tiny-s{seed}", moe.generate("tiny", seed)
    yield (
        "2x2-attn-host0-current",
        moe.generate_custom(
            layers=2,
            experts=4,
            hosts=2,
            gpus_per_host=2,
            attention="host0",
            with_current=True,
            seed=3,
            name="moe-2x2-attn-host0-current",
        ),
    )
    yield (
        "2x2-within-host",
        moe.generate_custom(
            layers=2,
            experts=3,
            hosts=2,
            gpus_per_host=2,
            layer_within="host",
            attention="host0",
            seed=4,
            name="moe-2x2-within-host",
        ),
    )
    yield "tiny-s0-weighted", _weighted(moe.generate("tiny", 0))


def _pool(name: str, hosts: int, per_host: int, memory: float, price: float) -> dict[str, Any]:
    return {
        "name": name,
        "hosts": hosts,
        "gpus_per_host": per_host,
        "host_memory_gib": memory,
        "price_per_gpu_hour": price,
    }


def _opt(pool: str, gpus: int, ms: int, gib: float = 1.0, tp: int = 1) -> dict[str, Any]:
    return {"pool": pool, "gpus": gpus, "tp": tp, "duration_ms": ms, "resident_gib": gib}


def _job(jid: str, rollout: list, train: list, slo: int, **extra: Any) -> dict[str, Any]:
    return {
        "id": jid,
        "slo_ms": slo,
        "phases": [{"name": "rollout", "options": rollout}, {"name": "train", "options": train}],
        **extra,
    }


def _inst(name: str, pools: list, jobs: list) -> co.CoschedInstance:
    return co.CoschedInstance.model_validate(
        {"problem": "cosched", "schema_version": 1, "name": name, "pools": pools, "jobs": jobs}
    )


def cosched() -> Cases:
    rt = [_pool("h20", 2, 4, 16.0, 1.85), _pool("h800", 2, 4, 16.0, 5.28)]
    # Two complementary jobs: rollout-heavy and train-heavy share one group (RollMux's bubble
    # filling), at the cost of one host of each pool instead of two.
    yield (
        "complementary-2j",
        _inst(
            "complementary-2j",
            rt,
            [
                _job("rollout-heavy", [_opt("h20", 4, 6)], [_opt("h800", 4, 2)], 10, switch_ms=1),
                _job("train-heavy", [_opt("h20", 4, 2)], [_opt("h800", 4, 6)], 10, switch_ms=1),
            ],
        ),
    )
    # Rollout may run on either pool (RollArt's affinity): co-located on h800 or spread.
    yield (
        "affinity-3j",
        _inst(
            "affinity-3j",
            rt,
            [
                _job("a", [_opt("h20", 4, 4), _opt("h800", 4, 3)], [_opt("h800", 4, 3)], 9),
                _job("b", [_opt("h20", 4, 5)], [_opt("h800", 4, 2)], 12, staleness=1, switch_ms=1),
                _job(
                    "c",
                    [_opt("h20", 2, 3), _opt("h20", 4, 2)],
                    [_opt("h800", 2, 4, tp=2)],
                    14,
                    params_b=0.1,
                ),
            ],
        ),
    )
    # Host memory (C6): two jobs' training state cannot share one host of h800.
    small = [_pool("h20", 2, 4, 16.0, 1.85), _pool("h800", 2, 4, 10.0, 5.28)]
    yield (
        "residency-2j",
        _inst(
            "residency-2j",
            small,
            [
                _job("x", [_opt("h20", 4, 2)], [_opt("h800", 4, 2, gib=6.0)], 10),
                _job("y", [_opt("h20", 4, 2)], [_opt("h800", 4, 2, gib=6.0)], 10),
            ],
        ),
    )
    # σ = 1 lets the next rollout overlap this train: the SLO is met only one step stale.
    yield (
        "stale-1j",
        _inst(
            "stale-1j",
            rt,
            [
                _job("s", [_opt("h20", 4, 5)], [_opt("h800", 4, 4)], 6, staleness=1),
            ],
        ),
    )
    # An SLO no plan meets even alone: infeasible, and the explanation names the job.
    yield (
        "infeasible-slo",
        _inst(
            "infeasible-slo",
            rt,
            [
                _job("ok", [_opt("h20", 4, 2)], [_opt("h800", 4, 2)], 10),
                _job("late", [_opt("h20", 4, 5)], [_opt("h800", 4, 4)], 8),
            ],
        ),
    )
    # C13: the rollout-heavy job's rollout runs 7 ms in 2 of 4 scenarios; its timetable must
    # hold in 3 (ε = 0.25). Shared, those two scenarios overrun h20; alone it holds in all four:
    # one group per job, twice the cost of complementary-2j.
    doc = next(cosched())[1].model_dump(mode="json")
    doc["name"] = "chance-2j"
    doc["chance"] = {"epsilon": 0.25, "scenarios": 4}
    doc["jobs"][0]["phases"][0]["options"][0]["samples_ms"] = [6, 7, 7, 6]
    yield "chance-2j", co.CoschedInstance.model_validate(doc)
    yield "tiny-s0", co.generate("tiny", 0)


def _renamed(inst: rc.ReconfigInstance, name: str, **update: object) -> rc.ReconfigInstance:
    return rc.ReconfigInstance.model_validate(
        {**inst.model_dump(mode="json"), "name": name, **update}
    )


def reconfig() -> Cases:
    for seed in (0, 1, 2):
        yield f"tiny-s{seed}", rc.generate("tiny", seed)
    yield "toy-3x4-f2-s2", rc.generate_custom(3, 4, "toy", 12, 2, 2, seed=5, memory_gib=8.0)
    yield "toy-2x8-f1-s1", rc.generate_custom(2, 8, "toy", 16, 1, 1, seed=7, memory_gib=6.0)
    rated = rc.generate_custom(
        2, 4, "toy", 8, 1, 1, seed=3, memory_gib=8.0, failure_rate_per_hour=2.0
    )
    yield "toy-2x4-rate", rated
    tight = rc.generate("tiny", 0)
    yield "tiny-no-memory", _renamed(tight, "tiny-no-memory", memory_reserve_gib=7.99)
