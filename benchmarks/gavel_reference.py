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
     "objective_kind": see ``gavel_policies.py``,
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

Objectives: see ``gavel_policies.py``, which loads Gavel's classes, builds their inputs and
computes each policy's objective by Gavel's own definitions.

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
import json
import multiprocessing
import platform
import resource
import sys
import time
import traceback
from importlib import metadata

from gavel_policies import (
    POLICIES,
    Gavel,
    build_inputs,
    call_policy,
    finite_or_none,
    objective,
    scheduler_dir,
)


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
                        "value": finite_or_none(problem.value),
                        "wall": wall,
                        # cvxpy < 1.2 has no compilation_time
                        "compile": getattr(problem, "compilation_time", None),
                        "solver": (stats.solve_time or 0.0) if stats else 0.0,
                        "iters": (stats.num_iters or 0) if stats else 0,
                    }
                )

        cp.Problem.solve = solve


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("cvxpy", "ecos", "numpy", "scipy"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "absent"
    return out


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
                w: finite_or_none(f) for w, f in alloc[k].items()
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
