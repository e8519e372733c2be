"""Gavel's policy classes, loaded from a Gavel tree and called with Gavel's own inputs, and each
policy's objective at the allocation it returns, by Gavel's own definitions. Used by
``gavel_reference.py``, the harness that runs them one request at a time (its docstring: the
virtualenv, the request and response formats); like it, this module does not import schedopt.

Objectives, computed in float64 from the allocation Gavel returned (after its clip to
[0, 1]) with Gavel's own definitions (``ProportionalPolicy``, ``IsolatedPolicy``):

* ``max_min_fairness_perf``: ``min_j Σ_w T_jw·s_j·x_jw / (w_j·p_j)`` with
  ``p_j = ProportionalPolicy.get_throughputs`` ``= Σ_w T_jw·n_w / Σ_w n_w``.
* ``max_min_fairness``: the same with every ``T_jw = 1`` (so ``p_j = 1``), as Gavel's
  MaxMinFairnessPolicy passes to its perf policy.
* ``max_min_fairness_packed``: ``min_j [Σ_w T_jw·s_j·x_jw + Σ_{pairs c ∋ j} Σ_w
  T_{c,w}[j]·s_c·x_cw] / (w_j·p_j)``, ``p_j`` from the jobs alone (Gavel's flatten works in
  float32, so its own value can differ in the 7th digit).
* ``finish_time_fairness_perf``: ``max_j ρ_j``, ``ρ_j = (t_j + rem_j / Σ_w T_jw·x_jw) /
  (rem_j / iso_j)``, ``iso_j = IsolatedPolicy.get_throughputs`` (cumulative isolated time 0).
* ``min_total_duration_perf``: the makespan ``max_j rem_j / Σ_w T_jw·x_jw``.
"""

from __future__ import annotations

import importlib
import math
import os
import sys

#: policy name (Gavel's ``utils.get_policy`` names) -> (module, class, objective kind)
POLICIES = {
    "max_min_fairness_perf": (
        "max_min_fairness",
        "MaxMinFairnessPolicyWithPerf",
        "min normalised throughput",
    ),
    "max_min_fairness": (
        "max_min_fairness",
        "MaxMinFairnessPolicy",
        "min normalised throughput (all throughputs 1)",
    ),
    "max_min_fairness_packed": (
        "max_min_fairness",
        "MaxMinFairnessPolicyWithPacking",
        "min normalised throughput (with pairs)",
    ),
    "finish_time_fairness_perf": (
        "finish_time_fairness",
        "FinishTimeFairnessPolicyWithPerf",
        "max finish-time fairness rho",
    ),
    "min_total_duration_perf": (
        "min_total_duration",
        "MinTotalDurationPolicyWithPerf",
        "makespan s",
    ),
}


def scheduler_dir(gavel_dir: str) -> str:
    for cand in (os.path.join(gavel_dir, "scheduler"), gavel_dir):
        if os.path.isfile(os.path.join(cand, "job_id_pair.py")) and os.path.isdir(
            os.path.join(cand, "policies")
        ):
            return os.path.abspath(cand)
    raise SystemExit(f"--gavel-dir {gavel_dir}: no scheduler/job_id_pair.py and policies/")


class Gavel:
    """Gavel's modules, imported from its tree the way its policies import each other."""

    def __init__(self, sched: str) -> None:
        for path in (os.path.join(sched, "policies"), sched):
            if path not in sys.path:
                sys.path.insert(0, path)
        import cvxpy

        self.cp = cvxpy
        self.JobIdPair = importlib.import_module("job_id_pair").JobIdPair
        self.ProportionalPolicy = importlib.import_module("proportional").ProportionalPolicy
        self.IsolatedPolicy = importlib.import_module("isolated").IsolatedPolicy
        self.classes = {
            name: getattr(importlib.import_module(mod), cls)
            for name, (mod, cls, _) in POLICIES.items()
        }
        _numpy_24_float(importlib.import_module("max_min_fairness"))


def _numpy_24_float(module) -> None:
    """numpy >= 2.4 refuses ``float()`` of a one-element 1-D array, which Gavel's
    ``MaxMinFairnessPolicyWithPacking`` takes (``float(proportional_throughputs[i])``); before
    2.4 it was a DeprecationWarning and gave the element. Only on numpy >= 2.4, that module
    (and no other) gets a ``float`` that does what numpy < 2.4 did; Gavel's source is not
    changed."""
    import builtins

    import numpy as np

    if tuple(int(p) for p in np.__version__.split(".")[:2]) < (2, 4):
        return

    def as_float(value=0.0):
        if isinstance(value, np.ndarray) and value.size == 1:
            return builtins.float(value.reshape(-1)[0])
        return builtins.float(value)

    module.float = as_float


def finite_or_none(v) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _int_id(value) -> int:
    i = int(value)
    if i < 0 or str(i) != str(value).strip():
        raise ValueError(f"job id {value!r}: Gavel's JobIdPair needs a non-negative integer")
    return i


def build_inputs(g: Gavel, req: dict) -> dict:
    """Gavel's policy inputs (JobIdPair-keyed dicts) from a request."""
    cluster_spec = {str(w): int(n) for w, n in req["worker_types"].items()}
    workers = sorted(cluster_spec)
    jp = g.JobIdPair
    throughputs: dict = {}
    scale_factors, priority_weights, remaining, since_start = {}, {}, {}, {}
    for job in req["jobs"]:
        key = jp(_int_id(job["id"]), None)
        if key in throughputs:
            raise ValueError(f"duplicate job id {job['id']!r}")
        throughputs[key] = {w: float(job["throughput"][w]) for w in workers}
        scale_factors[key] = int(job.get("scale_factor", 1))
        priority_weights[key] = float(job.get("priority_weight", 1.0))
        remaining[key] = float(job.get("num_steps_remaining", 0.0))
        since_start[key] = float(job.get("time_since_start", 0.0))
    pairs = req.get("pairs") or []
    if pairs and req["policy"] != "max_min_fairness_packed":
        raise ValueError(f"pairs given to {req['policy']}, which does not pack")
    for pair in pairs:
        a, b = (_int_id(x) for x in pair["jobs"])
        if a == b or jp(a, None) not in throughputs or jp(b, None) not in throughputs:
            raise ValueError(f"pair {pair['jobs']}: two distinct known job ids needed")
        key = jp(a, b)
        tp = {w: [float(t) for t in pair["throughput"][w]] for w in workers}
        if a > b:  # JobIdPair stores (min, max): Gavel indexes the list by that order
            tp = {w: t[::-1] for w, t in tp.items()}
        throughputs[key] = tp
    return {
        "throughputs": throughputs,
        "scale_factors": scale_factors,
        "priority_weights": priority_weights,
        "num_steps_remaining": remaining,
        "times_since_start": since_start,
        "cluster_spec": cluster_spec,
        "workers": workers,
    }


def call_policy(policy, name: str, inp: dict):
    """The argument order of Gavel's ``Scheduler._compute_allocation``."""
    tp, sf, cs = inp["throughputs"], inp["scale_factors"], inp["cluster_spec"]
    if name.startswith("max_min_fairness"):
        return policy.get_allocation(tp, sf, inp["priority_weights"], cs)
    if name.startswith("finish_time_fairness"):
        return policy.get_allocation(
            tp,
            sf,
            inp["priority_weights"],
            inp["times_since_start"],
            inp["num_steps_remaining"],
            cs,
        )
    if name.startswith("min_total_duration"):
        return policy.get_allocation(tp, sf, inp["num_steps_remaining"], cs)
    raise ValueError(name)


def objective(g: Gavel, name: str, inp: dict, alloc: dict) -> tuple[float | None, dict]:
    """The policy's objective at ``alloc`` with Gavel's definitions (module docstring)."""
    import numpy as np

    workers = inp["workers"]
    singles = sorted(k for k in inp["throughputs"] if not k.is_pair())
    index = (singles, workers)
    cs = inp["cluster_spec"]
    T = np.array([[inp["throughputs"][j][w] for w in workers] for j in singles], dtype=float)
    X = np.array([[float(alloc.get(j, {}).get(w, 0.0)) for w in workers] for j in singles])
    s = np.array([inp["scale_factors"][j] for j in singles], dtype=float)
    weight = np.array([inp["priority_weights"][j] for j in singles], dtype=float)
    rem = np.array([inp["num_steps_remaining"][j] for j in singles], dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if name.startswith("max_min_fairness"):
            if name == "max_min_fairness":
                T = np.ones_like(T)
            prop = np.asarray(g.ProportionalPolicy().get_throughputs(T, index, cs)).reshape(-1)
            eff = (T * X).sum(axis=1) * s
            if name == "max_min_fairness_packed":
                pos = {j: i for i, j in enumerate(singles)}
                for key, tp in inp["throughputs"].items():
                    if not key.is_pair() or key not in alloc:
                        continue
                    a, b = key.singletons()
                    if inp["scale_factors"][a] != inp["scale_factors"][b]:
                        continue  # Gavel's effective scale factor 0: x is forced to 0
                    sc = inp["scale_factors"][a]
                    for w in workers:
                        x = float(alloc[key].get(w, 0.0))
                        eff[pos[a]] += tp[w][0] * sc * x
                        eff[pos[b]] += tp[w][1] * sc * x
            per = eff / (weight * prop)
            value = float(per.min())
        elif name.startswith("finish_time_fairness"):
            iso = np.asarray(
                g.IsolatedPolicy().get_throughputs(T, index, inp["scale_factors"], cs)
            ).reshape(-1)
            since = np.array([inp["times_since_start"][j] for j in singles], dtype=float)
            per = (since + rem / (T * X).sum(axis=1)) / (rem / iso)
            value = float(per.max())
        else:
            per = rem / (T * X).sum(axis=1)
            value = float(per.max())
    return finite_or_none(value), {
        str(j[0]): finite_or_none(v) for j, v in zip(singles, per, strict=True)
    }
