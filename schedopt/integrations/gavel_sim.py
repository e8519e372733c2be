"""Gavel's own simulator, driven with a schedopt policy or with Gavel's policy.

Runs a trace made by Gavel's ``scripts/utils/generate_trace.py`` (its defaults: every job at
time 0, 1-4 hours on a V100, single-GPU unless ``multi_gpu``) through Gavel's
``scheduler.Scheduler(simulate=True)``, as ``scripts/drivers/simulate_scheduler_with_trace.py``
does, and reports what Gavel reports (average JCT, total duration) plus what a drop-in must
answer for: each round's policy time, every round whose policy raised (with its reason) and
every round whose allocation breaks Gavel's constraints (:func:`check_allocation`).

    result = simulate("max_min_fairness_perf", system="schedopt", num_jobs=30,
                      cluster_spec=(4, 4, 4), gavel_src="/path/to/gavel")

Gavel's source is found through ``gavel_src`` or the ``GAVEL_SRC`` environment variable
(its checkout's root or its ``scheduler`` directory). Nothing of Gavel is changed. Gavel's
modules have generic top-level names (``utils``, ``job``, ``policy``) and need its directory
on ``sys.path``, so each run happens in a child Python process (``timeout_s`` ends it);
Gavel's simulator imports three modules it does not use in simulation (``psutil``, gRPC's
``runtime.rpc`` servers, ``matrix_completion``): when they are not installed the child gives
it empty modules in their place.

A round whose policy raises (schedopt's :class:`RoundFailed`, or an exception in Gavel's
class) is recorded with its reason and answered with the previous allocation for the jobs
still there (new jobs get no time), so that the simulation goes on; an exception in Gavel's
simulator itself ends the run and is reported in ``aborted``.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .gavel_base import members

#: Gavel's policy names (``utils.get_policy``) and schedopt's drop-in for each: the class
#: name in ``schedopt.integrations.gavel`` and how Gavel's driver constructs it.
POLICIES: dict[str, tuple[str, str]] = {
    "allox": ("AlloXPolicy", "allox"),
    "fifo": ("FIFOPolicy", "seed"),
    "fifo_perf": ("FIFOPolicyWithPerf", "none"),
    "fifo_packed": ("FIFOPolicyWithPacking", "none"),
    "finish_time_fairness": ("FinishTimeFairnessPolicy", "solver"),
    "finish_time_fairness_perf": ("FinishTimeFairnessPolicyWithPerf", "solver"),
    "finish_time_fairness_packed": ("FinishTimeFairnessPolicyWithPacking", "solver"),
    "gandiva": ("GandivaPolicy", "seed"),
    "isolated": ("IsolatedPolicy", "none"),
    "max_min_fairness": ("MaxMinFairnessPolicy", "solver"),
    "max_min_fairness_perf": ("MaxMinFairnessPolicyWithPerf", "solver"),
    "max_min_fairness_packed": ("MaxMinFairnessPolicyWithPacking", "solver"),
    "max_min_fairness_water_filling": ("MaxMinFairnessWaterFillingPolicy", "none"),
    "max_min_fairness_water_filling_perf": ("MaxMinFairnessWaterFillingPolicyWithPerf", "none"),
    "max_min_fairness_water_filling_packed": (
        "MaxMinFairnessWaterFillingPolicyWithPacking",
        "none",
    ),
    "max_sum_throughput_perf": ("ThroughputSumWithPerf", "solver"),
    "max_sum_throughput_normalized_by_cost_perf": (
        "ThroughputNormalizedByCostSumWithPerf",
        "solver",
    ),
    "max_sum_throughput_normalized_by_cost_perf_SLOs": (
        "ThroughputNormalizedByCostSumWithPerfSLOs",
        "solver",
    ),
    "max_sum_throughput_normalized_by_cost_packed_SLOs": (
        "ThroughputNormalizedByCostSumWithPackingSLOs",
        "solver",
    ),
    "min_total_duration": ("MinTotalDurationPolicy", "solver"),
    "min_total_duration_perf": ("MinTotalDurationPolicyWithPerf", "solver"),
    "min_total_duration_packed": ("MinTotalDurationPolicyWithPacking", "solver"),
}

SYSTEMS = ("schedopt", "gavel")


@dataclass(frozen=True)
class SimulationResult:
    """One run of Gavel's simulator. Times are simulated seconds except ``policy_s`` and
    ``wall_s`` (measured). ``average_jct_s`` is Gavel's ``get_average_jct`` (over the jobs
    that completed), ``makespan_s`` its "Total duration" (the simulated clock at the end)."""

    system: str
    policy: str
    num_jobs: int
    cluster_spec: dict[str, int]
    seed: int
    completed_jobs: int = 0
    average_jct_s: float | None = None
    makespan_s: float | None = None
    #: seconds of each round's ``get_allocation`` call, in order
    policy_s: tuple[float, ...] = ()
    #: (round, reason) for each round whose policy raised
    failed_rounds: tuple[tuple[int, str], ...] = ()
    #: (round, first violation, number of violations) per round breaking Gavel's constraints
    invalid_rounds: tuple[tuple[int, str, int], ...] = ()
    #: with ``shadow``: (round, schedopt's objective, Gavel's objective) on the same round's
    #: inputs, in Gavel's terms (:func:`objective`)
    objectives: tuple[tuple[int, float, float], ...] = ()
    #: why the simulation stopped early (an exception in Gavel's simulator), else None
    aborted: str | None = None
    wall_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def rounds(self) -> int:
        return len(self.policy_s)

    @property
    def mean_policy_s(self) -> float | None:
        return sum(self.policy_s) / len(self.policy_s) if self.policy_s else None

    @property
    def max_policy_s(self) -> float | None:
        return max(self.policy_s) if self.policy_s else None

    @property
    def ok(self) -> bool:
        """Every job completed, no round failed or broke a constraint, nothing aborted."""
        return (
            self.aborted is None
            and not self.failed_rounds
            and not self.invalid_rounds
            and self.completed_jobs == self.num_jobs
        )


def gavel_scheduler_dir(gavel_src: str | os.PathLike[str] | None = None) -> Path:
    """Gavel's ``scheduler`` directory, from ``gavel_src`` or ``$GAVEL_SRC`` (the checkout's
    root or the directory itself). Raises ``FileNotFoundError`` saying what is missing."""
    given = gavel_src if gavel_src is not None else os.environ.get("GAVEL_SRC")
    if not given:
        raise FileNotFoundError("Gavel's source: pass gavel_src or set GAVEL_SRC")
    root = Path(given)
    for d in (root / "scheduler", root):
        if (d / "scheduler.py").is_file() and (d / "scripts/utils/generate_trace.py").is_file():
            return d.resolve()
    raise FileNotFoundError(f"no Gavel scheduler (scheduler/scheduler.py) under {root}")


def check_allocation(
    allocation: Mapping[Hashable, Mapping[str, float]] | None,
    throughputs: Mapping[Hashable, Any],
    scale_factors: Mapping[Hashable, int],
    cluster_spec: Mapping[str, int],
    tol: float = 1e-6,
) -> list[str]:
    """Gavel's constraints on a round's allocation (``policies/policy.py``,
    ``get_base_constraints``), checked independently of any policy: every job of the round
    has a row, fractions in [0, 1], each job's time over all its keys (alone and in pairs)
    and all types at most 1, and on each type the GPUs in use, fraction times scale factor
    (a pair of unequal scale factors counts 0, as in Gavel), at most the type's count.
    Returns the violations (empty: valid)."""
    singles = [k for k in throughputs if members(k) is None]
    if not allocation:
        return [f"no allocation for {len(singles)} jobs"] if singles else []
    bad: list[str] = []
    missing = [k for k in singles if k not in allocation]
    if missing:
        bad.append(f"jobs without a row: {missing[:5]}")
    used = dict.fromkeys(cluster_spec, 0.0)
    per_job: dict[Hashable, float] = {}
    for key, row in allocation.items():
        if key not in throughputs:
            bad.append(f"{key}: not a job or pair of the round")
            continue
        two = members(key)
        jobs = (key,) if two is None else two
        sizes = {int(scale_factors[j]) for j in jobs if j in scale_factors}
        scale = sizes.pop() if len(sizes) == 1 else 0
        for w, x in row.items():
            x = float(x)
            if not math.isfinite(x) or x < -tol or x > 1 + tol:
                bad.append(f"{key} on {w}: fraction {x!r} outside [0, 1]")
                continue
            if w not in used:
                if x > tol:
                    bad.append(f"{key} on {w}: a type the cluster has not")
                continue
            used[w] += x * scale
            for j in jobs:
                per_job[j] = per_job.get(j, 0.0) + x
    bad += [f"job {j}: total time {t:.9g} > 1" for j, t in per_job.items() if t > 1 + tol]
    bad += [
        f"{w}: {u:.9g} GPUs in use > {cluster_spec[w]}"
        for w, u in used.items()
        if u > cluster_spec[w] + tol * max(1, cluster_spec[w])
    ]
    return bad


def objective(
    policy: str,
    allocation: Mapping[Hashable, Mapping[str, float]],
    throughputs: Mapping[Hashable, Mapping[str, float]],
    scale_factors: Mapping[Hashable, int],
    cluster_spec: Mapping[str, int],
    priority_weights: Mapping[Hashable, float] | None = None,
    num_steps_remaining: Mapping[Hashable, float] | None = None,
) -> float:
    """A single-job round's allocation valued as Gavel's policy ``policy`` values it
    (``policies/*.py``; max-min values normalise by Gavel's ``ProportionalPolicy``, each type
    in proportion to its GPUs): the smallest weighted normalised throughput (max-min, perf or
    throughput-blind: every rate 1), the throughput sum (max-sum), the makespan in seconds
    (minimum makespan: the largest remaining steps over rate)."""
    if policy not in OBJECTIVES:
        raise ValueError(f"policy: no objective for {policy!r} (one of {sorted(OBJECTIVES)})")
    total = sum(cluster_spec.values())
    values = []
    for k, rates in throughputs.items():
        x = allocation.get(k, {}) if allocation else {}
        r = {w: 1.0 if policy == "max_min_fairness" else float(rates[w]) for w in cluster_spec}
        rate = sum(r[w] * float(x.get(w, 0.0)) for w in cluster_spec)
        if policy == "max_sum_throughput_perf":
            values.append(rate)
        elif policy == "min_total_duration_perf":
            assert num_steps_remaining is not None
            values.append(float(num_steps_remaining[k]) / rate if rate > 0 else math.inf)
        else:
            assert priority_weights is not None
            fair = sum(r[w] * cluster_spec[w] / total for w in cluster_spec)
            values.append(rate * int(scale_factors[k]) / (fair * float(priority_weights[k])))
    if policy == "max_sum_throughput_perf":
        return sum(values)
    return max(values) if policy == "min_total_duration_perf" else min(values)


#: the policies :func:`objective` values (and ``simulate(..., shadow=True)`` compares)
OBJECTIVES = frozenset(
    {
        "max_min_fairness",
        "max_min_fairness_perf",
        "max_sum_throughput_perf",
        "min_total_duration_perf",
    }
)


def simulate(
    policy: str,
    *,
    system: str = "schedopt",
    num_jobs: int = 30,
    cluster_spec: tuple[int, int, int] | Mapping[str, int] = (4, 4, 4),
    seed: int = 0,
    gavel_src: str | os.PathLike[str] | None = None,
    policy_kwargs: Mapping[str, Any] | None = None,
    multi_gpu: bool = False,
    time_per_iteration_s: int = 360,
    timeout_s: float | None = None,
    shadow: bool = False,
    python: str | None = None,
) -> SimulationResult:
    """One run of Gavel's simulator with Gavel's policy ``policy`` (a name of
    :data:`POLICIES`) as schedopt's drop-in (``system="schedopt"``, constructed with
    ``policy_kwargs`` too) or Gavel's own class (``"gavel"``, ECOS, as Gavel's driver).
    ``cluster_spec``: ``(v100, p100, k80)`` GPU counts or a dict. The trace is Gavel's
    ``generate_trace.py`` with ``num_jobs`` and ``seed`` and Gavel's defaults otherwise
    (``multi_gpu`` turns on its ``--generate-multi-gpu-jobs``). ``timeout_s`` ends the child
    process (``subprocess.TimeoutExpired``). ``shadow`` (schedopt only, for the policies of
    :data:`OBJECTIVES`): each round, Gavel's class also answers the same inputs (not timed)
    and both allocations' objectives are recorded in ``objectives``."""
    if policy not in POLICIES:
        raise ValueError(f"policy: {policy!r} is not one of Gavel's ({', '.join(POLICIES)})")
    if system not in SYSTEMS:
        raise ValueError(f"system must be one of {SYSTEMS}, not {system!r}")
    if not isinstance(cluster_spec, Mapping):
        cluster_spec = dict(zip(("v100", "p100", "k80"), cluster_spec, strict=True))
    spec = {w: int(n) for w, n in cluster_spec.items()}
    request: dict[str, Any] = {
        "gavel_dir": str(gavel_scheduler_dir(gavel_src)),
        "policy": policy,
        "system": system,
        "num_jobs": int(num_jobs),
        "cluster_spec": spec,
        "seed": int(seed),
        "policy_kwargs": dict(policy_kwargs or {}),
        "multi_gpu": bool(multi_gpu),
        "time_per_iteration": int(time_per_iteration_s),
        "shadow": bool(shadow),
    }
    with tempfile.TemporaryDirectory(prefix="schedopt-gavel-sim-") as tmp:
        request["work_dir"] = tmp
        out = Path(tmp) / "result.json"
        request["output"] = str(out)
        start = time.perf_counter()
        proc = subprocess.run(
            [python or sys.executable, "-m", "schedopt.integrations.gavel_sim_child"],
            input=json.dumps(request),
            text=True,
            stdout=subprocess.DEVNULL,  # Gavel prints every job's completion time
            stderr=subprocess.PIPE,
            timeout=timeout_s,
            env={**os.environ, "PYTHONPATH": _pythonpath()},
            check=False,
        )
        wall = time.perf_counter() - start
        if not out.is_file():
            tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
            raise RuntimeError(
                f"Gavel's simulator gave no result (exit {proc.returncode}):\n{tail}"
            )
        data = json.loads(out.read_text())
    return SimulationResult(
        system=system,
        policy=policy,
        num_jobs=int(num_jobs),
        cluster_spec=spec,
        seed=int(seed),
        completed_jobs=data["completed_jobs"],
        average_jct_s=data["average_jct_s"],
        makespan_s=data["makespan_s"],
        policy_s=tuple(data["policy_s"]),
        failed_rounds=tuple((int(r), str(m)) for r, m in data["failed_rounds"]),
        invalid_rounds=tuple((int(r), str(m), int(n)) for r, m, n in data["invalid_rounds"]),
        objectives=tuple((int(r), float(a), float(b)) for r, a, b in data["objectives"]),
        aborted=data["aborted"],
        wall_s=wall,
        extra=data.get("extra", {}),
    )


def _pythonpath() -> str:
    """The child imports this same schedopt (a worktree before an installed copy)."""
    here = str(Path(__file__).resolve().parents[2])
    rest = os.environ.get("PYTHONPATH")
    return here if not rest else os.pathsep.join([here, rest])
