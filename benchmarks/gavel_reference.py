"""Reference answers and timings from Gavel's *own* policy classes (cvxpy + ECOS).

Gavel (Narayanan et al., OSDI'20; github.com/stanford-futuredata/gavel, MIT) is not vendored:
this script loads its policy classes from a Gavel checkout given by ``--gavel-dir`` and runs
them unchanged, one request at a time, each in a fresh child process with a memory cap and a
timeout. It does not import schedopt and is meant for its own virtualenv, kept out of
schedopt's dependencies::

    python -m venv /work/venvs/gavel-ref
    /work/venvs/gavel-ref/bin/pip install cvxpy==1.9.3 ecos==2.0.14 numpy==2.3.5 scipy==1.17.1

(the versions this was run with, on Python 3.11.7; cvxpy >= 1.6 no longer picks ECOS by
default, so the ``ecos`` package is installed and ``--solver ECOS`` is passed, as Gavel's
drivers do). numpy >= 2.4 breaks ``MaxMinFairnessPolicyWithPacking``: it calls ``float()`` on a
one-element 1-D array, an error since numpy 2.4 (a DeprecationWarning before); on numpy >= 2.4
this harness gives Gavel's ``max_min_fairness`` module a ``float`` that takes such an array as
numpy < 2.4 did (``_numpy_24_float``; Gavel's source is unchanged). An era
environment, closer to what Gavel ran in 2021, also works (cvxpy 1.1.x has no Python 3.11
wheel, so it builds from source; cvxpy < 1.1.18 imports a scipy module path that scipy
1.9 and 1.10 no longer have, and scipy < 1.9 has no Python 3.11 wheel)::

    python -m venv /work/venvs/gavel-ref-cvxpy11
    /work/venvs/gavel-ref-cvxpy11/bin/pip install numpy==1.23.5 scipy==1.9.3 ecos==2.0.14 \
        "scs<3.3" "osqp<1" setuptools wheel
    /work/venvs/gavel-ref-cvxpy11/bin/pip install --no-build-isolation cvxpy==1.1.18

A Gavel tree: a clone of github.com/stanford-futuredata/gavel, or an export of a mirror::

    git -C MIRROR archive HEAD scheduler ':(exclude)scheduler/traces' | tar -x -C /tmp/gavel

(``--gavel-dir /tmp/gavel``; ``DIR/scheduler`` or ``DIR`` itself must hold ``job_id_pair.py``
and ``policies/``. Both go on ``sys.path``, as Gavel's own modules arrange, and the classes are
imported from ``max_min_fairness``, ``finish_time_fairness`` and ``min_total_duration``.)

Run::

    python benchmarks/gavel_inputs.py -n 16 256 -p max_min_fairness_perf > /tmp/req.jsonl
    nice -n 10 /work/venvs/gavel-ref/bin/python benchmarks/gavel_reference.py \
        --gavel-dir /tmp/gavel /tmp/req.jsonl -o /tmp/resp.jsonl [--timeout 600] [--mem-gb 12]

Request: one JSON object per line (``-`` or no file: stdin)::

    {"name": "optional tag, echoed",
     "policy": "max_min_fairness_perf" | "max_min_fairness" | "max_min_fairness_packed"
               | "finish_time_fairness_perf" | "min_total_duration_perf",
     "worker_types": {"k80": 4, "p100": 4, "v100": 4},          # GPUs of each type
     "jobs": [{"id": "0",                 # a non-negative integer, as a string or a number
               "throughput": {"k80": 1.2, "p100": 3.4, "v100": 5.6},   # steps/s alone
               "scale_factor": 1,          # GPUs the job runs on
               "priority_weight": 1.0,     # max-min policies (FTF ignores it, as Gavel does)
               "num_steps_remaining": 1e5, # FTF and min total duration
               "time_since_start": 0.0}],  # FTF
     "pairs": [{"jobs": ["0", "1"],        # max_min_fairness_packed only
                "throughput": {"k80": [0.7, 0.5], ...}}]}  # [jobs[0]'s, jobs[1]'s] co-located

Any other field (``seed``, a job's ``job_type``) is ignored. Every job must give a throughput
for every worker type. The policy gets exactly Gavel's inputs: ``JobIdPair(id, None)`` keys for
jobs, ``JobIdPair(a, b)`` for pairs (its throughput list reordered to ``[min id's, max id's]``),
scale factors, priority weights, ``num_steps_remaining``, ``times_since_start`` and the cluster
spec, in the argument order of ``Scheduler._compute_allocation``. A fresh policy object per
request (FinishTimeFairnessPolicyWithPerf keeps cumulative isolated time across calls; fresh,
that time is 0).

Response: one JSON line per request (and per ``--repeat`` run), in request order::

    {"name", "policy", "run": 0, "num_jobs", "num_pairs", "worker_types", "solver",
     "status": "ok" | "timeout" | "error",    "error": message (error only),
     "cvxpy_status": status of the solve whose x Gavel returned (min total duration: the last
                     "optimal" one of its bisection; otherwise the last solve),
     "solve_statuses": [status of every cvxpy solve, in order],
     "objective": float or null (a job with zero throughput makes FTF/makespan infinite),
     "objective_kind": see below,
     "cvxpy_value": the last solve's problem.value (max-min: Gavel's own objective),
     "get_allocation_s": wall seconds of policy.get_allocation(...) alone,
     "cvxpy_solve_s": wall seconds inside cvxpy's Problem.solve (compilation + solver), summed,
     "cvxpy_compile_s": cvxpy's problem.compilation_time, summed (null on cvxpy < 1.2),
     "solver_s": solver_stats.solve_time (ECOS itself), summed,
     "solver_iters": solver_stats.num_iters, summed,
     "bisection": [[T, status], ...] (min total duration: every T tried),
     "final_T": the last feasible T (min total duration),
     "max_rss_mb": the child's peak resident memory, "child_wall_s": its whole run,
     "versions": {"python", "cvxpy", "ecos", "numpy", "scipy"},
     "allocation": {"<id>": {"<worker type>": fraction}, "<a>,<b>": {...} (pairs, a < b)},
     "per_job": {"<id>": the job's term of the objective}}

``--allocation none`` leaves out ``allocation`` and ``per_job``. Timeout and error lines carry
the name, policy, sizes and ``status`` (and ``timeout_s`` or ``error``).

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

What Gavel's code does that a comparison must know (measured on Gavel c4fa400 with the
requests of ``benchmarks/gavel_inputs.py``):

* MinTotalDurationPolicyWithPerf bisects on T over [100 s, 10^6 s] (x10 while infeasible),
  one feasibility LP per step, and stops once ``1.05 * min_T >= max_T``: about 6 solves, and a
  makespan 0.7-1.9% above the LP optimum (``final_T`` is the last feasible T tried).
* FinishTimeFairnessPolicyWithPerf ignores the priority weights (a TODO in Gavel) and builds one
  cvxpy expression per job (``cp.maximum(*...)``): seconds of compilation at 1,024 jobs, and
  ECOS often ends ``optimal_inaccurate`` there (the value still agrees with the max-min LP).
* The max-min normaliser is ``ProportionalPolicy``'s ``Σ_w T_jw·n_w / Σ_w n_w``: independent of
  the number of jobs and of the scale factor, which instead multiplies the throughput.
* MaxMinFairnessPolicyWithPacking builds a dense float32 (jobs x (jobs + pairs) x worker
  types) array: 1,024 jobs (523,776 pairs) took 679 s and 10.3 GB, and ECOS stopped at its
  100-iteration cap (``optimal_inaccurate``).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import json
import math
import multiprocessing
import os
import platform
import resource
import sys
import time
import traceback
from importlib import metadata

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


class SolveLog:
    """Wraps ``cvxpy.Problem.solve`` to record each solve; Gavel's code is not touched."""

    def __init__(self, cp) -> None:
        self.calls: list[dict] = []
        original = cp.Problem.solve
        log = self.calls

        def solve(problem, *args, **kwargs):
            t0 = time.perf_counter()
            try:
                return original(problem, *args, **kwargs)
            finally:
                wall = time.perf_counter() - t0
                stats = problem.solver_stats
                log.append(
                    {
                        "status": problem.status,
                        "value": _num(problem.value),
                        "wall": wall,
                        # cvxpy < 1.2 has no compilation_time
                        "compile": getattr(problem, "compilation_time", None),
                        "solver": (stats.solve_time or 0.0) if stats else 0.0,
                        "iters": (stats.num_iters or 0) if stats else 0,
                    }
                )

        cp.Problem.solve = solve


def _num(v) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("cvxpy", "ecos", "numpy", "scipy"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "absent"
    return out


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
    return _num(value), {str(j[0]): _num(v) for j, v in zip(singles, per, strict=True)}


def run_request(g: Gavel, req: dict, solver: str | None, with_allocation: bool) -> dict:
    name = req["policy"]
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; one of {', '.join(POLICIES)}")
    inp = build_inputs(g, req)
    log = SolveLog(g.cp)
    policy = g.classes[name](solver)
    bisection: list[list] = []
    if name == "min_total_duration_perf":
        helper = policy.get_allocation_helper

        def traced_helper(throughputs, scale_factors_array, T):
            status, x = helper(throughputs, scale_factors_array, T)
            bisection.append([T, status])
            return status, x

        policy.get_allocation_helper = traced_helper
    t0 = time.perf_counter()
    alloc = call_policy(policy, name, inp)
    elapsed = time.perf_counter() - t0
    calls = log.calls
    out: dict = {"status": "ok", "get_allocation_s": elapsed}
    statuses = [c["status"] for c in calls]
    if bisection:
        feasible = [t for t, st in bisection if st == "optimal"]
        out["cvxpy_status"] = "optimal" if feasible else (statuses[-1] if statuses else None)
        out["final_T"] = feasible[-1] if feasible else None
        out["bisection"] = bisection
    else:
        out["cvxpy_status"] = statuses[-1] if statuses else None
    out["solve_statuses"] = statuses
    out["cvxpy_value"] = calls[-1]["value"] if calls else None
    out["cvxpy_solve_s"] = sum(c["wall"] for c in calls)
    compile_s = [c["compile"] for c in calls]
    out["cvxpy_compile_s"] = None if None in compile_s else sum(compile_s)
    out["solver_s"] = sum(c["solver"] for c in calls)
    out["solver_iters"] = sum(c["iters"] for c in calls)
    if alloc is None:
        out.update(status="error", error="get_allocation returned None", objective=None)
        return out
    value, per_job = objective(g, name, inp, alloc)
    out["objective"] = value
    out["objective_kind"] = POLICIES[name][2]
    if with_allocation:
        out["allocation"] = {
            (f"{k[0]},{k[1]}" if k.is_pair() else str(k[0])): {
                w: _num(f) for w, f in alloc[k].items()
            }
            for k in sorted(alloc)
        }
        out["per_job"] = per_job
    return out


def _child(conn, sched: str, req: dict, solver, mem_bytes: int, with_allocation: bool) -> None:
    t0 = time.perf_counter()
    try:
        if mem_bytes > 0:
            resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
        # Gavel prints warnings to stdout, which carries the responses: send them to stderr.
        with contextlib.redirect_stdout(sys.stderr):
            g = Gavel(sched)
            result = run_request(g, req, solver, with_allocation)
    except BaseException as exc:
        result = {"status": "error", "error": f"{type(exc).__name__}: {exc}"[:2000]}
        if not isinstance(exc, MemoryError):
            with contextlib.suppress(Exception):
                traceback.print_exc(file=sys.stderr)
    gc.collect()  # a MemoryError's frames are gone: room to report it
    result["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["child_wall_s"] = time.perf_counter() - t0
    result["versions"] = _versions()
    conn.send(result)
    conn.close()


def run_isolated(sched: str, req: dict, args) -> dict:
    """``req`` in a forked child with ``--mem-gb`` of address space and ``--timeout``."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    mem = int(args.mem_gb * 2**30)
    proc = ctx.Process(
        target=_child, args=(child, sched, req, args.solver, mem, args.allocation == "full")
    )
    proc.start()
    child.close()
    timeout = args.timeout if args.timeout > 0 else None
    result = None
    try:
        if parent.poll(timeout):
            result = parent.recv()
    except EOFError:
        result = None
    if result is None:
        if proc.is_alive():
            proc.kill()
            proc.join()
            result = {"status": "timeout", "timeout_s": args.timeout}
        else:
            proc.join()
            result = {
                "status": "error",
                "error": f"child exited with code {proc.exitcode} (out of --mem-gb {args.mem_gb}?)",
            }
    else:
        proc.join()
    return result


def _requests(path: str):
    f = sys.stdin if path == "-" else open(path)  # noqa: SIM115
    try:
        for lineno, line in enumerate(f, 1):
            if line.strip():
                yield lineno, json.loads(line)
    finally:
        if f is not sys.stdin:
            f.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("requests", nargs="?", default="-", help="JSON lines (default stdin)")
    ap.add_argument("--gavel-dir", required=True, help="a Gavel tree holding scheduler/")
    ap.add_argument("-o", "--output", default="-", help="JSON lines (default stdout)")
    ap.add_argument("--solver", default="ECOS", help="cvxpy solver name (Gavel's: ECOS)")
    ap.add_argument("--timeout", type=float, default=600.0, help="s per request (0: none)")
    ap.add_argument("--mem-gb", type=float, default=12.0, help="address-space cap (0: none)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each request")
    ap.add_argument("--allocation", choices=("full", "none"), default="full")
    args = ap.parse_args(argv)
    sched = scheduler_dir(args.gavel_dir)
    out = sys.stdout if args.output == "-" else open(args.output, "w")  # noqa: SIM115
    try:
        for lineno, req in _requests(args.requests):
            head = {
                "name": req.get("name", f"line{lineno}"),
                "policy": req.get("policy"),
                "num_jobs": len(req.get("jobs", [])),
                "num_pairs": len(req.get("pairs") or []),
                "worker_types": req.get("worker_types"),
                "solver": args.solver,
            }
            for run in range(args.repeat):
                result = {**head, "run": run, **run_isolated(sched, req, args)}
                out.write(json.dumps(result, separators=(",", ":"), allow_nan=False) + "\n")
                out.flush()
                print(
                    f"{head['name']} run {run}: {result['status']}"
                    f" {result.get('cvxpy_status')} objective={result.get('objective')}"
                    f" get_allocation={result.get('get_allocation_s', float('nan')):.3f}s"
                    f" solver={result.get('solver_s', float('nan')):.3f}s"
                    f" rss={result.get('max_rss_mb', float('nan')):.0f}MB",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
