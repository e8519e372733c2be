"""The runner behind ``schedopt bench``: suites × methods × time limits × seeds on an executor,
one JSON line per row, resumable.

A row is keyed by (suite, recipe, method, time limit, seed, and the method parameters when
there are any: ``schedopt bench --param``) (:func:`row_key`); rows already in
the output file are skipped, so a run killed part-way (Ctrl-C, a lost Ray node) is resumed by
running the same command again. A row is written as soon as its task finishes, and only for a
task that ran to its end (an error inside the solve is a row; a worker that died under the
task, ``lost``, or a task stopped by the run's deadline is not: the resumed run repeats it).

Each row records what was solved (suite, recipe, checksum), how (method, time limit, seed,
threads, executor), what came back (status, objectives and their senses, bound, gap, the
method ``auto`` chose, the per-level bounds a decomposition reports and the validator's
metrics), the instance's size (GPUs, jobs: the scale plot's axis), the time taken (build,
solve, wall, and the CPU seconds of the solve: ``cpu_s``) and where (machine: CPUs, load
average; versions of schedopt, OR-Tools, highspy, PuLP, Python).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import schedopt.problems  # noqa: F401  (registers every problem, in a worker too)
from schedopt.bench.scale import instance_size
from schedopt.bench.suite import DataMissing, Recipe, RecipeDrift, Suite, instance_checksum
from schedopt.core.errors import ModelTooLargeError
from schedopt.core.solve import solve
from schedopt.core.stopping import Deadline
from schedopt.executor import Executor, Task, TaskResult, usable_cores

#: Statuses a row can have besides a solver's (``optimal``, ``feasible``, ...). ``refused``: the
#: method's exact model was refused for its size before it was built (``ModelTooLargeError``,
#: the monolithic model beside a decomposition at the papers' scale), not a failure.
SKIPPED, DRIFT, ERROR, REFUSED = "skipped", "drift", "error", "refused"


@dataclass(frozen=True)
class Job:
    """One row to run: a recipe of a suite, solved by ``method`` within ``time_limit_s``."""

    suite: str
    recipe: Recipe
    method: str
    time_limit_s: float
    seed: int
    threads: int = 1
    #: method parameters (``SolveOptions.params``), as sorted (key, value) pairs
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def key(self) -> str:
        return row_key(
            self.suite, self.recipe.name, self.method, self.time_limit_s, self.seed, self.params
        )


def params_text(params: Iterable[tuple[str, Any]] | Mapping[str, Any] | None) -> str:
    """``key=value,...`` in key order (JSON values), "" without parameters."""
    pairs = sorted((params.items() if isinstance(params, Mapping) else params) or ())
    return ",".join(f"{k}={json.dumps(v, sort_keys=True)}" for k, v in pairs)


def row_key(
    suite: str,
    recipe: str,
    method: str,
    time_limit_s: float,
    seed: int,
    params: Iterable[tuple[str, Any]] | Mapping[str, Any] | None = None,
) -> str:
    """A row's key; rows without parameters keep the key they had before parameters existed."""
    text = params_text(params)
    return f"{suite}/{recipe}/{method}/{float(time_limit_s):g}/{seed}" + (
        f"/{text}" if text else ""
    )


def key_of(row: dict[str, Any]) -> str:
    return row_key(
        row["suite"],
        row["recipe"],
        row["method"],
        row["time_limit_s"],
        row["seed"],
        row.get("params"),
    )


def method_label(row: Mapping[str, Any]) -> str:
    """The method of a row as tables and plots name it: with its parameters, if any."""
    text = params_text(row.get("params"))
    return f"{row['method']} [{text}]" if text else str(row["method"])


def plan(
    suites: Sequence[Suite],
    *,
    methods: Sequence[str] | None = None,
    time_limits: Sequence[float] | None = None,
    seeds: Sequence[int] = (0,),
    threads: int = 1,
    params: Mapping[str, Any] | None = None,
) -> list[Job]:
    """Every row of a run, in a stable order; ``methods``/``time_limits`` default to each
    suite's own; ``params`` go to every row's solve."""
    pairs = tuple(sorted((params or {}).items()))
    return [
        Job(suite.name, recipe, method, limit, seed, threads, pairs)
        for suite in suites
        for recipe in suite.recipes
        for limit in (time_limits or (suite.time_limit_s,))
        for method in (methods or suite.methods)
        for seed in seeds
    ]


def commit(here: Path | None = None) -> str:
    """The git commit (short) of the schedopt checkout running, with ``-dirty`` when its
    tracked files under the package differ from that commit (a row then did not run at
    the commit alone), or "unknown" (an install)."""
    here = here or Path(__file__).resolve().parent.parent
    try:
        done = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        changed = subprocess.run(
            ["git", "-C", str(here), "diff", "--quiet", "HEAD", "--", "."],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    head = done.stdout.strip()
    if not head:
        return "unknown"
    return f"{head}-dirty" if changed.returncode == 1 else head


def versions() -> dict[str, str]:
    """Versions of schedopt (and its commit) and the solvers a row depends on."""
    out = {"python": platform.python_version(), "commit": commit()}
    for dist in ("schedopt", "ortools", "highspy", "pulp"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "absent"
    return out


def machine() -> dict[str, Any]:
    """The machine a row ran on: its CPUs, the cores this process may use (its affinity: a
    container or ``taskset`` may allow fewer than the machine has) and the load average then."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {
        "host": platform.node(),
        "arch": platform.machine(),
        "cpus": os.cpu_count(),
        "usable_cores": usable_cores(),
        "load1": round(load[0], 2),
        "load5": round(load[1], 2),
    }


def _base(job: Job) -> dict[str, Any]:
    """The fields of a row that say what was asked."""
    return {
        "suite": job.suite,
        "recipe": job.recipe.name,
        "problem": job.recipe.problem,
        "method": job.method,
        "time_limit_s": job.time_limit_s,
        "seed": job.seed,
        "threads": job.threads,
        "checksum": job.recipe.checksum or None,
        **({"params": dict(job.params)} if job.params else {}),
    }


def run_row(job: Job) -> dict[str, Any]:
    """Build the recipe's instance and solve it: one row. Runs in a worker of any executor."""
    row = _base(job)
    started = time.perf_counter()
    try:
        instance = job.recipe.build()
    except DataMissing as why:
        return {**row, "status": SKIPPED, "reason": str(why)}
    except RecipeDrift as why:
        return {**row, "status": DRIFT, "reason": str(why)}
    checksum = instance_checksum(instance)
    if job.recipe.checksum and checksum != job.recipe.checksum:
        reason = f"instance checksum {checksum[:12]} != recorded {job.recipe.checksum[:12]}"
        return {**row, "status": DRIFT, "reason": reason, "checksum": checksum}
    row["checksum"] = checksum
    generate_s = time.perf_counter() - started
    cpu_started = time.process_time()
    try:
        r = solve(
            instance,
            job.method,
            time_limit_s=job.time_limit_s,
            seed=job.seed,
            threads=job.threads,
            params=dict(job.params) or None,
        )
    except ModelTooLargeError as why:
        return {**row, "status": REFUSED, "reason": str(why), "size": instance_size(instance)}
    cpu_s = time.process_time() - cpu_started
    return {
        **row,
        "status": r.status.value,
        "method_used": r.method,
        "objectives": None if r.objectives is None else list(r.objectives),
        "terms": [t.name for t in r.terms],
        "senses": [t.sense.value for t in r.terms],
        "bound": r.best_bound,
        "gap": r.gap,
        "size": instance_size(instance),
        "stats": _stats(r.stats),
        "metrics": {k: v for k, v in r.metrics.items() if isinstance(v, int | float)},
        "generate_s": round(generate_s, 4),
        "build_s": r.build_s,
        "solve_s": r.solve_s,
        "wall_s": r.wall_s,
        # this process's CPU seconds in the solve (every thread; not a pool's workers): over
        # wall_s, the share of a CPU the solve got, so a row past its limit says whether the
        # machine starved it (wall_s / cpu_s large) or a phase ran on (docs/benchmarks.md)
        "cpu_s": round(cpu_s, 4),
    }


#: What a row keeps of a result's ``stats``: its per-level bounds (``L2_bound``, ...), the
#: seconds of its steps (``*_s``: a decomposition's data, split, bound, parts and join), whether
#: the first level is proven, the plan space a proof holds over, which bound a gap is against
#: (admission's "B1L", "B0k", ...), and the counts the tables of benchmarks/RESULTS.md report
#: (finish-time fairness's LPs, column generation's columns, rounds and master LP, the rounds
#: reconfig's physical bound priced, whether cosched's plan was polished, its case workers,
#: its dive's plan and its ladders' sub-MIPs, whether its packing plan made aside came back
#: and whether the starting plan or a baseline was kept over the master's),
#: and why reconfig's decomp:physical had no template answer or where its widening stopped.
STATS_KEPT = (
    "first_level_proven",
    "proven_over",
    "bound",
    "dinkelbach_steps",
    "pair_columns",
    "pair_columns_added",
    "pricing_rounds",
    "bound_rounds",
    "rounds",
    "columns",
    "master_lp",
    "polished",
    "polish_columns",
    "case_workers",
    "packing_aside_plan",
    "seed_kept",
    "baseline_kept",
    "dive",
    "ladder_steps",
    "polish_ladder_steps",
    "no_template_answer",
    "cut_short",
)


def _stats(stats: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: v
        for k, v in stats.items()
        if (k.endswith(("_bound", "_s")) and isinstance(v, int | float)) or k in STATS_KEPT
    }


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSON-lines file (a torn last line, from a killed run, is ignored)."""
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def _row_of(result: TaskResult, job: Job) -> dict[str, Any] | None:
    """The row to write for a finished task; None for a task to repeat (a lost worker, or
    stopped by the run's deadline)."""
    if result.lost or result.timed_out:
        return None
    base = _base(job)
    if result.error is not None:
        return {**base, "status": ERROR, "reason": result.error}
    value = result.value
    assert isinstance(value, dict)
    return value


def run(
    jobs: Sequence[Job],
    executor: Executor,
    out: Path,
    *,
    deadline: Deadline | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Run the ``jobs`` whose rows ``out`` does not hold yet, appending each row to ``out`` as it
    finishes; returns the new rows. ``on_start(todo, done)`` is told the counts first,
    ``on_row`` each row as it is written (progress)."""
    done = {key_of(r) for r in read_rows(out)}
    todo = [j for j in jobs if j.key not in done]
    if on_start is not None:
        on_start(len(todo), len(jobs) - len(todo))
    by_key = {j.key: j for j in todo}
    context = {"machine": machine(), "versions": versions(), "executor": executor.describe()}
    new: list[dict[str, Any]] = []
    out.parent.mkdir(parents=True, exist_ok=True)
    tasks = (Task(j.key, run_row, (j,)) for j in todo)
    with out.open("a") as f:
        if out.stat().st_size and not out.read_bytes().endswith(b"\n"):
            f.write("\n")  # a torn last line from a killed run stays alone on its line
        for result in executor.run(tasks, deadline=deadline):
            row = _row_of(result, by_key[result.key])
            if row is None:
                continue
            row = {**row, **context, "worker": result.worker, "when": _now()}
            row["machine"] = {**context["machine"], **machine()}  # the load when it finished
            f.write(json.dumps(row, sort_keys=True) + "\n")
            f.flush()
            new.append(row)
            if on_row is not None:
                on_row(row)
    return new


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def select(rows: Iterable[dict[str, Any]], jobs: Sequence[Job]) -> Iterator[dict[str, Any]]:
    """The rows of ``rows`` that belong to ``jobs`` (a report of this run only)."""
    keys = {j.key for j in jobs}
    return (r for r in rows if key_of(r) in keys)


__all__ = [
    "DRIFT",
    "ERROR",
    "REFUSED",
    "SKIPPED",
    "Job",
    "commit",
    "key_of",
    "machine",
    "method_label",
    "params_text",
    "plan",
    "read_rows",
    "row_key",
    "run",
    "run_row",
    "select",
    "versions",
]
