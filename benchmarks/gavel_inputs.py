"""Allocation requests made the way Gavel makes them, for ``benchmarks/gavel_reference.py``.

Plain Python (no schedopt, no numpy), so both schedopt's environment and the Gavel reference
venv can run it. One JSON line per (policy, job count, seed) on stdout or ``-o FILE``::

    python benchmarks/gavel_inputs.py -n 16 256 -p max_min_fairness_perf -o /tmp/req.jsonl
    python benchmarks/gavel_inputs.py -n 16 64 -p max_min_fairness_packed --seeds 2 3 4
    python benchmarks/gavel_inputs.py -n 256 -p finish_time_fairness_perf \
        --cluster k80=36,p100=36,v100=36 --multi-gpu --multi-priority

The throughputs are Gavel's measured ones (``--throughputs``, default
/work/shared/data/gavel/simulation_throughputs.json; the same file as Gavel's
``scheduler/simulation_throughputs.json``): worker type -> ``"('<model>', <scale factor>)"``
-> ``{"null": alone, "('<other model>', <sf>)": [this job's, the other job's]}``. Only the
``k80``, ``p100`` and ``v100`` worker types are used (not the ``*_unconsolidated`` ones).

What is mirrored from Gavel (github.com/stanford-futuredata/gavel, scheduler/):

* ``scripts/microbenchmarks/sweep_policy_runtimes.py`` (Gavel's own policy-runtime benchmark,
  ``generate_input`` and ``measure_runtime``): ``random.Random(seed)``, one
  ``utils.generate_job(throughputs, rng=rng, generate_multi_gpu_jobs=...,
  generate_multi_priority_jobs=...)`` per job with job ids 0..N-1, the default seeds
  ``trial + 2`` (trial 0 -> seed 2), and the cluster ``{v100, p100, k80: N // 4 each}``
  (``--cluster`` gives another, e.g. the paper's 36/36/36 for 108 GPUs).
* ``utils.generate_job`` / ``_generate_scale_factor`` / ``_generate_duration``, call for call
  on the same ``random.Random``, so a seed gives Gavel's jobs exactly: scale factor from the
  Philly mix (drawn always, then forced to 1 unless ``--multi-gpu``), duration
  ``60 * 10**U(1.5, 3)`` s (80%) or ``60 * 10**U(3, 4)`` s (20%), the job template by
  ``rng.choice(JobTable)`` redrawn until it is distributed when the scale factor is > 1,
  ``num_steps = duration * v100 throughput alone``, and with ``--multi-priority`` a priority
  weight of 5 for 20% of the jobs (1 otherwise). ``JOB_TABLE`` below is the model list of
  ``job_table.py`` in its order (needed to replay ``rng.choice``).
* Job pairs for the packing policies: every pair ``i < j`` with equal scale factors, with the
  co-location throughputs ``oracle[worker][key_i][key_j]`` (``[i's, j's]``). That is what
  ``generate_input`` does, and what the simulator's ``Scheduler.add_job`` ->
  ``_populate_job_combination_metadata`` does (skip unequal scale factors; a pair is stored as
  ``JobIdPair(min, max)`` with ``oracle[key of the smaller id][key of the larger id]``);
  ``_read_throughputs_for_job_type`` reads the same ``[this, other]`` lists.
* ``num_steps_remaining`` is the job's total steps and ``time_since_start`` 0, as at a static
  start (every job just arrived: ``Scheduler._get_allocation_state``); ``--max-time-since-start``
  draws it uniformly instead (from a separate RNG, so the jobs stay Gavel's).

Request format: see ``benchmarks/gavel_reference.py``.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import sys

DEFAULT_THROUGHPUTS = "/work/shared/data/gavel/simulation_throughputs.json"
WORKER_TYPES = ("k80", "p100", "v100")
POLICIES = (
    "max_min_fairness_perf",
    "max_min_fairness",
    "max_min_fairness_packed",
    "finish_time_fairness_perf",
    "min_total_duration_perf",
)


def _job_table() -> list[tuple[str, bool]]:
    """Gavel's ``job_table.JobTable`` as (model, distributed), in its order."""
    table: list[tuple[str, bool]] = []
    table += [(f"ResNet-18 (batch size {b})", True) for b in (16, 32, 64, 128, 256)]
    table += [(f"ResNet-50 (batch size {b})", True) for b in (16, 32, 64, 128)]
    table += [(f"Transformer (batch size {b})", True) for b in (16, 32, 64, 128, 256)]
    table += [(f"LM (batch size {b})", True) for b in (5, 10, 20, 40, 80)]
    table += [(f"Recommendation (batch size {b})", False) for b in (512, 1024, 2048, 4096, 8192)]
    table += [("A3C", False), ("CycleGAN", False)]
    return table


JOB_TABLE = _job_table()


def load_throughputs(path: str) -> dict:
    """``worker -> (model, sf) -> {"null" | (model, sf): value}`` (Gavel's
    ``utils.read_all_throughputs_json_v2``), for the worker types used here."""
    with open(path) as f:
        raw = json.load(f)
    out: dict = {}
    for worker in WORKER_TYPES:
        out[worker] = {}
        for key, row in raw[worker].items():
            parsed = {}
            for other, value in row.items():
                parsed["null" if other == "null" else ast.literal_eval(other)] = value
            out[worker][ast.literal_eval(key)] = parsed
    return out


def _scale_factor(rng: random.Random) -> int:
    """``utils._generate_scale_factor``."""
    r = rng.uniform(0, 1)
    if 0.7 <= r <= 0.8:
        return 2
    if 0.8 <= r <= 0.95:
        return 4
    if r >= 0.95:
        return 8
    return 1


def _duration(rng: random.Random) -> float:
    """``utils._generate_duration`` (seconds)."""
    if rng.random() >= 0.8:
        return 60 * (10 ** rng.uniform(3, 4))
    return 60 * (10 ** rng.uniform(1.5, 3))


def generate_job(oracle: dict, rng: random.Random, multi_gpu: bool, multi_priority: bool) -> dict:
    """``utils.generate_job`` with its defaults (``always_generate_scale_factor=True``)."""
    scale_factor = _scale_factor(rng)
    run_time = _duration(rng)
    if not multi_gpu:
        scale_factor = 1
    while True:
        model, distributed = rng.choice(JOB_TABLE)
        if scale_factor == 1 or distributed:
            break
    key = (model, scale_factor)
    num_steps = run_time * oracle["v100"][key]["null"]
    priority_weight = 1.0
    if multi_priority and rng.uniform(0, 1) <= 0.2:
        priority_weight = 5.0
    return {
        "model": model,
        "scale_factor": scale_factor,
        "duration": run_time,
        "num_steps": num_steps,
        "priority_weight": priority_weight,
    }


def make_request(
    oracle: dict,
    policy: str,
    num_jobs: int,
    seed: int,
    cluster: dict[str, int] | None = None,
    multi_gpu: bool = False,
    multi_priority: bool = False,
    max_time_since_start: float = 0.0,
) -> dict:
    """One request: ``num_jobs`` jobs of ``sweep_policy_runtimes.generate_input(seed)``."""
    if cluster is None:
        cluster = {w: num_jobs // 4 for w in WORKER_TYPES}
    rng = random.Random()
    rng.seed(seed)
    elapsed_rng = random.Random(f"time_since_start:{seed}")
    gen = [generate_job(oracle, rng, multi_gpu, multi_priority) for _ in range(num_jobs)]
    jobs = []
    for i, g in enumerate(gen):
        key = (g["model"], g["scale_factor"])
        elapsed = elapsed_rng.uniform(0, max_time_since_start) if max_time_since_start else 0.0
        jobs.append(
            {
                "id": str(i),
                "job_type": g["model"],
                "scale_factor": g["scale_factor"],
                "priority_weight": g["priority_weight"],
                "num_steps_remaining": g["num_steps"],
                "time_since_start": elapsed,
                "throughput": {w: oracle[w][key]["null"] for w in cluster},
            }
        )
    request = {
        "name": f"{policy}-n{num_jobs}-s{seed}",
        "policy": policy,
        "seed": seed,
        "worker_types": dict(cluster),
        "jobs": jobs,
    }
    if "pack" in policy:
        pairs = []
        for i in range(num_jobs):
            key_i = (gen[i]["model"], gen[i]["scale_factor"])
            for j in range(i + 1, num_jobs):
                if gen[i]["scale_factor"] != gen[j]["scale_factor"]:
                    continue
                key_j = (gen[j]["model"], gen[j]["scale_factor"])
                pairs.append(
                    {
                        "jobs": [str(i), str(j)],
                        "throughput": {w: list(oracle[w][key_i][key_j]) for w in cluster},
                    }
                )
        request["pairs"] = pairs
    return request


def _cluster(text: str) -> dict[str, int]:
    out = {}
    for part in text.split(","):
        name, count = part.split("=")
        if name.strip() not in WORKER_TYPES:
            raise argparse.ArgumentTypeError(f"{name!r}: one of {', '.join(WORKER_TYPES)}")
        out[name.strip()] = int(count)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("-n", "--num-jobs", type=int, nargs="+", default=[16, 256])
    ap.add_argument("-p", "--policies", nargs="+", default=["max_min_fairness_perf"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[2], help="Gavel's trial + 2")
    ap.add_argument("--throughputs", default=DEFAULT_THROUGHPUTS)
    ap.add_argument(
        "--cluster", type=_cluster, default=None, help="k80=36,p100=36,v100=36 (default N//4 each)"
    )
    ap.add_argument("--multi-gpu", action="store_true", help="Philly scale factors 1/2/4/8")
    ap.add_argument("--multi-priority", action="store_true", help="20%% of jobs get weight 5")
    ap.add_argument("--max-time-since-start", type=float, default=0.0, metavar="S")
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args(argv)
    oracle = load_throughputs(args.throughputs)
    for model, _ in JOB_TABLE:
        assert (model, 1) in oracle["v100"], model
    out = sys.stdout if args.output == "-" else open(args.output, "w")  # noqa: SIM115
    try:
        for policy in args.policies:
            if policy not in POLICIES:
                ap.error(f"unknown policy {policy!r}; one of {', '.join(POLICIES)}")
            for n in args.num_jobs:
                for seed in args.seeds:
                    req = make_request(
                        oracle,
                        policy,
                        n,
                        seed,
                        cluster=args.cluster,
                        multi_gpu=args.multi_gpu,
                        multi_priority=args.multi_priority,
                        max_time_since_start=args.max_time_since_start,
                    )
                    out.write(json.dumps(req, separators=(",", ":")) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
