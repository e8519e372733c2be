"""The ``schedopt`` command line: solve, validate, generate, schema, export, methods, info.

Every sub-command is a thin layer over the library API (``schedopt.load``, ``schedopt.solve``,
the problem registry); nothing here knows how a model is built. ``main(argv)`` returns the exit
code instead of exiting, so tests and other programs can call it directly.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

import schedopt
from schedopt import cli_args
from schedopt.core.errors import InvalidInstanceError, UnknownMethodError, UnknownProblemError
from schedopt.core.registry import (
    MethodKind,
    ProblemSpec,
    get_problem,
    problem_names,
    problem_of,
)
from schedopt.core.result import Result
from schedopt.core.status import Status

# --- exit codes -------------------------------------------------------------------------------
#: Success: the solve found a solution (OPTIMAL or FEASIBLE), or the command did its job.
EXIT_OK = 0
#: An unexpected error inside schedopt (rerun with ``--debug`` for the traceback).
EXIT_INTERNAL = 1
#: Bad command line: argparse's own errors, unknown problem or method names.
EXIT_USAGE = 2
#: The input file is not a valid instance or solution (``InvalidInstanceError``).
EXIT_INVALID = 3
#: ``validate`` found violations, or ``solve`` proved the instance INFEASIBLE.
EXIT_INFEASIBLE = 4
EXIT_VALIDATION_FAILED = EXIT_INFEASIBLE
#: ``solve`` reached its limits with no solution and no proof of infeasibility.
EXIT_NO_SOLUTION = 5

STATUS_EXIT = {
    Status.OPTIMAL: EXIT_OK,
    Status.FEASIBLE: EXIT_OK,
    Status.INFEASIBLE: EXIT_INFEASIBLE,
    Status.NO_SOLUTION: EXIT_NO_SOLUTION,
    Status.INVALID: EXIT_INVALID,
}

STATUS_STYLE = {
    Status.OPTIMAL: "bold green",
    Status.FEASIBLE: "bold yellow",
    Status.INFEASIBLE: "bold red",
    Status.NO_SOLUTION: "bold magenta",
    Status.INVALID: "bold red",
}

#: Generator sizes offered by ``schedopt generate`` (see each problem's ``generate``).
#: Rows of the per-job decision table before "… N more".
MAX_ROWS = 40
#: Slots shown in the compact GPUs-per-slot string before it is cut short.
MAX_SLOTS_SHOWN = 24

EPILOG = """\
exit codes:
  0  success (solve: OPTIMAL or FEASIBLE)
  1  internal error (rerun with --debug for the traceback)
  2  usage error (bad arguments, unknown problem or method)
  3  invalid input (the instance or solution file is not valid; every problem is listed)
  4  validation failed (validate) or the instance is proven INFEASIBLE (solve)
  5  no solution found within the time limit (solve)

examples:
  schedopt generate admission --size small --seed 0 --out small.json
  schedopt info small.json
  schedopt solve small.json --time-limit 10 --out small-sol.json
  schedopt validate small.json small-sol.json
  schedopt methods admission
"""


class CliError(Exception):
    """A failure the CLI reports as one ``error:`` line with a chosen exit code."""

    def __init__(self, message: str, code: int):
        self.code = code
        super().__init__(message)


def _check_outputs(*paths: str | None, make_dirs: bool = False) -> None:
    """Fail with a usage error before any work when an output file cannot be written (a result
    computed for minutes must not be lost to a typo in ``--out``)."""
    for path in paths:
        if path:
            why = cli_args.check_writable(path, "cannot write", make_dirs=make_dirs)
            if why:
                raise CliError(why, EXIT_USAGE)


# --- output helpers ---------------------------------------------------------------------------
#: Width of tables when stdout is a file or a pipe (rich would use 80 and squeeze columns).
PIPE_WIDTH = 120


def _stdout() -> Console:
    return Console(highlight=False, width=None if sys.stdout.isatty() else PIPE_WIDTH)


def _stderr() -> Console:
    return Console(stderr=True, highlight=False)


def _finite(x: float | None) -> float | None:
    return x if x is None or math.isfinite(x) else None


def _jsonable(obj: Any) -> Any:
    """Plain JSON values: non-finite floats become null, unknown objects their ``str``."""
    if isinstance(obj, float):
        return _finite(obj)
    if isinstance(obj, bool | int | str) or obj is None:
        return obj
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "value") and isinstance(obj.value, str | int | float):  # enums
        return _jsonable(obj.value)
    return str(obj)


def _write_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(_jsonable(doc), indent=2, allow_nan=False) + "\n")
    sys.stdout.flush()


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}"


def _fmt_gap(gap: float | None) -> str:
    return "-" if gap is None else f"{100 * gap:.2f}%"


def _load(path: str) -> Any:
    try:
        return schedopt.load(path)
    except InvalidInstanceError as err:
        err.file = path  # type: ignore[attr-defined]
        raise


def _load_solution(instance: Any, path: str) -> Any:
    try:
        return schedopt.load_solution(instance, path)
    except InvalidInstanceError as err:
        err.file = path  # type: ignore[attr-defined]
        raise


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send everything written to stdout (Python and C level) to stderr for a while.

    Solver back-ends log to file descriptor 1 when ``--verbose``; with ``--json`` stdout must
    hold the JSON document and nothing else.
    """
    sys.stdout.flush()
    saved = None
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:
        saved = None
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def _want_spinner(args: argparse.Namespace) -> bool:
    if args.json or args.verbose:
        return False
    try:
        return sys.stdout.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


# --- solve ------------------------------------------------------------------------------------
Renderer = Callable[[Console, Any, Result[Any]], None]
#: Problem name → the function that prints its decision table (``solve`` human output).
RENDERERS: dict[str, Renderer] = {}


def renderer(problem: str) -> Callable[[Renderer], Renderer]:
    def register(fn: Renderer) -> Renderer:
        RENDERERS[problem] = fn
        return fn

    return register


def _gpus_string(gpus: tuple[int, ...]) -> str:
    shown = " ".join(str(n) for n in gpus[:MAX_SLOTS_SHOWN])
    if len(gpus) > MAX_SLOTS_SHOWN:
        shown += f" … (+{len(gpus) - MAX_SLOTS_SHOWN} slots)"
    return shown


@renderer("fairshare")
def _render_fairshare(console: Console, inst: Any, result: Result[Any]) -> None:
    by_tenant: dict[str, list[Any]] = {}
    tenant_of = {j.id: j.tenant for j in inst.jobs}
    for alloc in result.solution.allocations:
        by_tenant.setdefault(tenant_of.get(alloc.job_id, "?"), []).append(alloc)
    table = Table(title="allocation by tenant", title_justify="left", show_edge=False)
    for col in ("tenant", "weight", "LTGF share", "GPUs", "jobs running"):
        table.add_column(col, no_wrap=True, justify="left" if col == "tenant" else "right")
    for t in inst.tenants[:MAX_ROWS]:
        allocs = by_tenant.get(t.id, [])
        gpus = sum(sum(a.hosts.values()) for a in allocs)
        running = sum(1 for a in allocs if a.hosts)
        share = result.metrics.get(f"share[{t.id}]")
        table.add_row(
            escape(t.id),
            f"{t.weight:g}",
            "-" if share is None else f"{share:.4g}",
            str(gpus),
            f"{running}/{len(allocs)}",
        )
    console.print(table)
    if len(inst.tenants) > MAX_ROWS:
        console.print(f"… {len(inst.tenants) - MAX_ROWS} more tenants (use --json or --out)")


@renderer("admission")
def _render_admission(console: Console, inst: Any, result: Result[Any]) -> None:
    sol = result.solution
    several_types = len(inst.cluster.gpu_types()) > 1
    table = Table(title="decisions", title_justify="left", show_edge=False, pad_edge=False)
    plans = sol.plans
    shown = plans[:MAX_ROWS]
    gpu_strings = [_gpus_string(plan.gpus) for plan in shown]
    table.add_column("job", no_wrap=True, min_width=max((len(p.job_id) for p in shown), default=3))
    table.add_column("kind", no_wrap=True)
    table.add_column("decision", no_wrap=True)
    table.add_column("tier", no_wrap=True)
    table.add_column("GPUs per slot", no_wrap=True, min_width=max(map(len, gpu_strings), default=3))
    if several_types:
        table.add_column("types", no_wrap=True)
    any_rejected = any(plan.rejection is not None for plan in shown)
    if any_rejected:
        table.add_column("reason", overflow="fold")
    details: list[str] = []
    for plan, gpus in zip(shown, gpu_strings, strict=True):
        job = inst.job(plan.job_id) if plan.job_id in inst.job_index else None
        kind = job.kind.value if job is not None else "?"
        if plan.admitted is None:
            decision = "[cyan]best-effort[/]"
        elif plan.admitted:
            decision = "[green]admitted[/]" + (
                " (kept)" if job is not None and job.admitted else ""
            )
        else:
            decision = "[red]rejected[/]"
        tier = ""
        if plan.admitted and plan.tier is not None and job is not None:
            t = job.deadlines[plan.tier]
            tier = f"{plan.tier}: ≤{t.deadline_s:g} s"
        reason = ""
        if plan.rejection is not None:
            rej = plan.rejection
            reason = rej.reason.value.replace("_", " ") + (" (proven)" if rej.proven else "")
            if rej.detail:
                details.append(f"  {plan.job_id}: {rej.detail}")
        row = [escape(plan.job_id), kind, decision, tier, gpus]
        if several_types:
            row.append(" ".join(sorted({g for g in plan.gpu_types if g})) or "-")
        if any_rejected:
            row.append(escape(reason))
        table.add_row(*row)
    console.print(table)
    if details:
        console.print("why rejected:")
        for line in details:
            console.print(escape(line), soft_wrap=True)
    if len(plans) > MAX_ROWS:
        console.print(
            f"… {len(plans) - MAX_ROWS} more jobs (use --json or --out for every decision)"
        )
    hosts = {inst.cluster.host_of(g) for gpus in sol.placement.values() for g in gpus}
    n_gpus = sum(len(gpus) for gpus in sol.placement.values())
    console.print(
        f"slot 0 placement: {len(sol.placement)} jobs on {n_gpus} GPUs, "
        f"{len(hosts)} of {len(inst.cluster.hosts())} hosts used"
    )


def _render_result(console: Console, inst: Any, result: Result[Any]) -> None:
    render = RENDERERS.get(result.problem)
    if render is None:
        console.print(escape(result.summary()), soft_wrap=True)
        return
    style = STATUS_STYLE.get(result.status, "bold")
    name = getattr(inst, "name", "")
    console.rule(
        f"[bold]{escape(result.problem)}[/] {escape(name)} · {escape(result.method)} · "
        f"[{style}]{result.status.value.upper()}[/]",
        align="left",
    )
    if result.objectives is not None:
        table = Table(show_edge=False, pad_edge=False)
        table.add_column("objective")
        table.add_column("sense")
        table.add_column("value", justify="right")
        table.add_column("unit")
        for term, value in zip(result.terms, result.objectives, strict=True):
            table.add_row(escape(term.name), term.sense.value, _fmt(value), escape(term.unit))
        console.print(table)
    console.print(f"bound {_fmt(result.best_bound)}   gap {_fmt_gap(result.gap)}")
    console.print(
        f"time  build {result.build_s:.3f} s, solve {result.solve_s:.3f} s, "
        f"wall {result.wall_s:.3f} s (solver limit {result.time_limit_s:.3g} s, seed {result.seed})"
    )
    if result.metrics:
        table = Table(show_header=False, show_edge=False, pad_edge=False, box=None)
        table.add_column("metric")
        table.add_column("value", justify="right")
        for key, value in result.metrics.items():
            table.add_row(escape(key), _fmt(value))
        console.print(table)
    if result.explanation:
        note_style = "red" if result.status is Status.INFEASIBLE else "dim"
        console.print(f"[{note_style}]note: {escape(result.explanation)}[/]", soft_wrap=True)
    if result.status is Status.NO_SOLUTION:
        console.print(
            f"no solution within {result.time_limit_s:g} s; try a longer --time-limit "
            "or --method auto"
        )
    if result.solution is not None:
        console.print()
        render(console, inst, result)


def _result_json(result: Result[Any]) -> dict[str, Any]:
    objectives = None
    if result.objectives is not None:
        objectives = {t.name: v for t, v in zip(result.terms, result.objectives, strict=True)}
    return {
        "problem": result.problem,
        "status": result.status.value,
        "method": result.method,
        "objectives": objectives,
        "objective": result.objective,
        "best_bound": result.best_bound,
        "gap": result.gap,
        "timing": {
            "build_s": result.build_s,
            "solve_s": result.solve_s,
            "wall_s": result.wall_s,
            "time_limit_s": result.time_limit_s,
        },
        "seed": result.seed,
        "metrics": dict(result.metrics),
        "explanation": result.explanation,
        "stats": dict(result.stats),
        "solution": (None if result.solution is None else result.solution.model_dump(mode="json")),
    }


def cmd_solve(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    _check_outputs(args.out, args.plot)
    inst = _load(args.file)
    # --time-limit covers the whole command: what loading took is not the solver's.
    load_s = time.perf_counter() - started
    limit = max(0.01, args.time_limit - load_s)
    spec = problem_of(inst)
    if args.method != "auto":
        spec.method(args.method)  # unknown names fail here, before any work
    if args.plot and spec.plot is None:
        raise CliError(f"{spec.name} has no plot yet", EXIT_USAGE)
    kwargs = {
        "time_limit_s": limit,
        "seed": args.seed,
        "threads": args.threads,
        "mip_gap": args.gap,
        "verbose": args.verbose,
        "tuned": args.tuned,
    }
    guard = _stdout_to_stderr() if args.json else contextlib.nullcontext()
    spinner: Any = contextlib.nullcontext()
    if _want_spinner(args):
        spinner = _stderr().status(f"solving with {args.method}, limit {args.time_limit:g} s")
    with guard, spinner:
        result = schedopt.solve(inst, args.method, **kwargs)
    # The result is shown before any file is written: should a write still fail (the disk
    # filled up since the check above), the answer is not lost with it.
    if args.json:
        doc = _result_json(result)
        # The command's own limit, and what loading took of it (the solver had the rest).
        doc["timing"].update(time_limit_s=args.time_limit, load_s=load_s)
        _write_json(doc)
    else:
        _render_result(_stdout(), inst, result)
    if args.out:
        if result.solution is not None:
            schedopt.dump(result.solution, args.out)
            if not args.json:
                _stderr().print(f"wrote the solution to {escape(args.out)}")
        else:
            _stderr().print(f"no solution to write to {escape(args.out)}")
    if args.plot and result.solution is not None:
        _write_plot(problem_of(inst), inst, result.solution, args.plot, quiet=args.json)
    return STATUS_EXIT.get(result.status, EXIT_INTERNAL)


def _write_plot(spec: ProblemSpec, inst: Any, sol: Any, path: str, quiet: bool = False) -> None:
    if spec.plot is None:
        raise CliError(f"{spec.name} has no plot yet", EXIT_USAGE)
    Path(path).write_text(spec.plot(inst, sol))
    if not quiet:
        _stderr().print(f"wrote the plot to {escape(path)}")


def cmd_plot(args: argparse.Namespace) -> int:
    _check_outputs(args.out)
    inst = _load(args.file)
    spec = problem_of(inst)
    sol = _load_solution(inst, args.solution)
    violations = spec.validate(inst, sol)
    if violations:
        for v in violations:
            _stderr().print(f"[{v.constraint_id}] {escape(v.message)}", soft_wrap=True)
        _stderr().print("error: the solution is not valid; nothing plotted")
        return EXIT_VALIDATION_FAILED
    _write_plot(spec, inst, sol, args.out)
    return EXIT_OK


# --- validate ---------------------------------------------------------------------------------
def cmd_validate(args: argparse.Namespace) -> int:
    inst = _load(args.file)
    spec = problem_of(inst)
    sol = _load_solution(inst, args.solution)
    violations = spec.validate(inst, sol)
    objectives: dict[str, float] | None = None
    metrics: dict[str, float] | None = None
    note = None
    try:
        values = spec.evaluate(inst, sol)
        objectives = {t.name: v for t, v in zip(spec.terms, values, strict=True)}
        metrics = spec.metrics(inst, sol)
    except Exception as err:  # an invalid solution may not be evaluable at all
        if not violations:
            raise
        note = f"objectives not evaluated: {type(err).__name__}: {err}"
    if args.json:
        _write_json(
            {
                "problem": spec.name,
                "valid": not violations,
                "violations": [
                    {"constraint_id": v.constraint_id, "message": v.message} for v in violations
                ],
                "objectives": objectives,
                "metrics": metrics,
            }
        )
        return EXIT_VALIDATION_FAILED if violations else EXIT_OK
    console = _stdout()
    if violations:
        console.print(
            f"[bold red]INVALID[/]: {len(violations)} violation"
            f"{'s' if len(violations) != 1 else ''} in {escape(args.solution)}"
        )
        for v in violations:
            console.print(f"  [red]\\[{escape(v.constraint_id)}][/] {escape(v.message)}")
    else:
        console.print(f"[bold green]VALID[/]: {escape(args.solution)} satisfies every constraint")
    if objectives is not None:
        for term in spec.terms:
            unit = f" {term.unit}" if term.unit else ""
            value = _fmt(objectives[term.name])
            console.print(f"  {term.sense.value} {escape(term.name):<30} {value}{escape(unit)}")
    if metrics:
        for key, value in metrics.items():
            console.print(f"  {escape(key):<34} {_fmt(value)}")
    if note:
        console.print(f"[dim]{escape(note)}[/]")
    return EXIT_VALIDATION_FAILED if violations else EXIT_OK


# --- generate, schema, export, methods, info --------------------------------------------------
def cmd_generate(args: argparse.Namespace) -> int:
    _check_outputs(args.out)
    spec = get_problem(args.problem)
    if args.size not in spec.sizes:
        raise CliError(
            f"unknown size {args.size!r} for {spec.name}; choose from {', '.join(spec.sizes)}",
            EXIT_USAGE,
        )
    inst = spec.generate(args.size, args.seed)
    if args.out:
        schedopt.dump(inst, args.out)
        _stderr().print(f"wrote {escape(args.out)} ({escape(getattr(inst, 'name', spec.name))})")
    else:
        sys.stdout.write(schedopt.io.to_json(inst))
        sys.stdout.flush()
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    get_problem(args.problem)  # a clear error for an unknown name
    sys.stdout.write(json.dumps(schedopt.io.json_schema(args.problem), indent=2) + "\n")
    sys.stdout.flush()
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    _check_outputs(args.out)
    inst = _load(args.file)
    spec = problem_of(inst)
    if spec.export_model is None:
        raise CliError(f"problem {spec.name!r} has no exportable model", EXIT_USAGE)
    spec.export_model(inst, args.out, args.format)
    _stderr().print(
        f"wrote the {args.format.upper()} model of {escape(args.file)} to {escape(args.out)}"
    )
    return EXIT_OK


def _methods_table(spec: ProblemSpec) -> Table:
    table = Table(
        title=f"{spec.name}: {spec.description}" if spec.description else spec.name,
        title_justify="left",
        show_edge=False,
        pad_edge=False,
    )
    table.add_column("method", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("description")
    heuristics = ", ".join(spec.auto_heuristics)
    table.add_row(
        "auto",
        "auto",
        f"heuristics ({heuristics}), then {spec.auto_exact} warm-started with the best of them",
    )
    for name, method in spec.methods.items():
        table.add_row(escape(name), method.kind.value, escape(method.description))
    return table


def cmd_methods(args: argparse.Namespace) -> int:
    names = [args.problem] if args.problem else list(problem_names())
    console = _stdout()
    for i, name in enumerate(names):
        if i:
            console.print()
        console.print(_methods_table(get_problem(name)))
    return EXIT_OK


def cmd_info(args: argparse.Namespace) -> int:
    inst = _load(args.file)
    spec = problem_of(inst)
    console = _stdout()
    console.print(f"[bold]{escape(spec.name)}[/] instance {escape(getattr(inst, 'name', ''))}")
    if spec.description:
        console.print(f"  {escape(spec.description)}")
    cluster = getattr(inst, "cluster", None)
    if cluster is not None:
        console.print(escape(cluster.summary()), soft_wrap=True)
    unavailable = getattr(inst, "unavailable_gpus", ())
    if unavailable:
        console.print(f"  unavailable GPUs: {len(unavailable)}")
    jobs = getattr(inst, "jobs", None)
    if jobs is not None:
        kinds = Counter(getattr(getattr(j, "kind", None), "value", "?") for j in jobs)
        shown = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        admitted = sum(1 for j in jobs if getattr(j, "admitted", False))
        console.print(
            f"jobs: {len(jobs)} ({shown})" + (f"; {admitted} admitted earlier" if admitted else "")
        )
    slots, slot_s = getattr(inst, "slots", None), getattr(inst, "slot_s", None)
    if slots is not None and slot_s is not None:
        console.print(f"horizon: {slots} slots × {slot_s:g} s = {slots * slot_s:g} s")
    console.print(f"exact model: about {spec.estimate_variables(inst):,} variables")
    return EXIT_OK


def cmd_tune(args: argparse.Namespace) -> int:
    from schedopt.tuning import load_tuned, save_tuned, tune
    from schedopt.tuning.store import default_save_path

    spec = get_problem(args.problem)
    if args.size not in spec.sizes:
        raise CliError(
            f"unknown size {args.size!r}; choose from {', '.join(spec.sizes)}", EXIT_USAGE
        )
    tunable = [n for n, m in spec.methods.items() if m.kind is MethodKind.HEURISTIC and m.params]
    if args.method not in tunable:
        raise CliError(
            f"{args.method!r} cannot be tuned; tunable {spec.name} heuristics: "
            f"{', '.join(tunable) or 'none'}",
            EXIT_USAGE,
        )
    if args.first_seed + args.instances - 1 > cli_args.MAX_SEED:
        raise CliError(
            f"--first-seed + --instances - 1 must be at most {cli_args.MAX_SEED}", EXIT_USAGE
        )
    save_path = None
    if args.save is not None:
        # The shipped parameters are package data and stay untouched: a save goes to the
        # path given, else to the per-user file, and solve reads it only with --tuned.
        save_path = Path(args.save) if args.save else default_save_path(spec.name)
        _check_outputs(str(save_path), make_dirs=True)
        if save_path.exists():
            load_tuned(spec.name, save_path)  # the file is added to: it must be readable now
    seeds = range(args.first_seed, args.first_seed + args.instances)
    instances = [spec.generate(args.size, s) for s in seeds]
    err = _stderr()

    def progress(call: int, params: dict, score: float) -> None:
        shown = ", ".join(f"{k}={v:.3g}" for k, v in params.items())
        err.print(f"  [{call:>3}/{args.n_calls}] score {score:+.5f}  {escape(shown)}")

    err.print(
        f"tuning {args.method} on {len(instances)} {args.size} instances "
        f"(seeds {seeds.start}..{seeds.stop - 1}), {args.n_calls} evaluations"
    )
    result = tune(args.method, instances, n_calls=args.n_calls, seed=args.seed, progress=progress)
    console = _stdout()
    console.print(
        f"best score {result.score:+.5f} (defaults {result.default_score:+.5f}; "
        f"lower is better) in {result.seconds:.1f} s"
    )
    for k, v in result.params.items():
        console.print(f"  {k} = {v}")
    if save_path is not None:
        names = [f"{args.size}-s{s}" for s in seeds]
        path = save_tuned(spec.name, args.method, result.entry(names), save_path)
        console.print(
            f"saved to {escape(str(path))}; use it with: schedopt solve FILE --tuned "
            f"{escape(str(path))}  (Python: schedopt.solve(..., tuned=path))"
        )
    return EXIT_OK


# --- parser -----------------------------------------------------------------------------------
def _subparser(
    sub: Any, name: str, help_: str, description: str, example: str, common: argparse.ArgumentParser
) -> argparse.ArgumentParser:
    return sub.add_parser(
        name,
        help=help_,
        description=description,
        epilog="example:\n" + example,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common],
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="schedopt",
        description="Exact optimisation models (CP-SAT, MILP) and heuristics for scheduling\n"
        "and placement in GPU datacenters. `schedopt COMMAND --help` explains each command.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"schedopt {schedopt.__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an internal error"
    )
    # --debug is accepted after the sub-command too; SUPPRESS keeps the top-level value.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = _subparser(
        sub,
        "solve",
        "solve an instance file",
        "Solve an instance and print the objective levels, bound, gap, timing, metrics and the\n"
        "decision for every job. The status is a claim: OPTIMAL only with a proof.\n\n"
        "methods: auto (heuristics, then the exact model warm-started), cpsat, milp:highs,\n"
        "milp:cbc, heuristic:<name>; `schedopt methods PROBLEM` lists them.\n"
        "exit code: 0 OPTIMAL/FEASIBLE, 4 INFEASIBLE, 5 no solution within the limit,\n"
        "3 invalid instance.",
        "  schedopt solve small.json --method cpsat --time-limit 30 --out small-sol.json\n"
        "  schedopt solve small.json --json | jq .objectives\n"
        "  schedopt solve small.json --tuned ~/.config/schedopt/params/admission.json\n",
        common,
    )
    p.add_argument("file", metavar="FILE", help="instance JSON file")
    p.add_argument(
        "--method",
        default="auto",
        help="auto | cpsat | milp:highs | milp:cbc | heuristic:<name> (default: auto)",
    )
    p.add_argument(
        "--time-limit",
        type=cli_args.time_limit,
        default=10.0,
        metavar="S",
        help="wall-clock limit in seconds for the whole command, loading the file included; "
        "> 0 and at most a week (default: 10)",
    )
    p.add_argument(
        "--seed",
        type=cli_args.seed,
        default=0,
        metavar="N",
        help=f"random seed, 0..{cli_args.MAX_SEED} (0)",
    )
    p.add_argument(
        "--threads",
        type=cli_args.threads,
        default=1,
        metavar="N",
        help=f"solver threads, 1..{cli_args.MAX_THREADS} (1)",
    )
    p.add_argument(
        "--gap",
        type=cli_args.gap,
        default=0.0,
        metavar="G",
        help="relative MIP gap in [0, 1) at which OPTIMAL may be claimed (default: 0, exact)",
    )
    p.add_argument(
        "--tuned",
        metavar="PARAMS.json",
        help="heuristic parameters saved by `schedopt tune --save` (default: the shipped ones)",
    )
    p.add_argument(
        "--out", metavar="SOLUTION.json", help="write the solution as JSON (checked first)"
    )
    p.add_argument("--plot", metavar="PLAN.svg", help="draw the decision as an SVG picture")
    p.add_argument("--json", action="store_true", help="print one JSON object, nothing else")
    p.add_argument("--verbose", action="store_true", help="show the solver's log")
    p.set_defaults(func=cmd_solve)

    p = _subparser(
        sub,
        "validate",
        "check a solution against an instance",
        "Check a solution file with the problem's independent validator and print every\n"
        "violated constraint (by its id in the formulation), the objective levels and metrics.\n"
        "exit code: 0 valid, 4 violations, 3 unreadable instance or solution.",
        "  schedopt validate small.json small-sol.json\n",
        common,
    )
    p.add_argument("file", metavar="FILE", help="instance JSON file")
    p.add_argument("solution", metavar="SOLUTION.json", help="solution JSON file")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_validate)

    p = _subparser(
        sub,
        "generate",
        "generate a seeded random instance",
        "Write a seeded random instance of PROBLEM as JSON, to stdout or to --out.\n"
        "The same size and seed always give the same instance.",
        "  schedopt generate admission --size medium --seed 3 --out medium-s3.json\n",
        common,
    )
    p.add_argument("problem", metavar="PROBLEM", help="problem name, e.g. admission")
    p.add_argument(
        "--size", default="small", help="instance size: tiny, small, medium or large (small)"
    )
    p.add_argument(
        "--seed",
        type=cli_args.seed,
        default=0,
        metavar="N",
        help=f"seed, 0..{cli_args.MAX_SEED} (0)",
    )
    p.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    p.set_defaults(func=cmd_generate)

    p = _subparser(
        sub,
        "schema",
        "print the JSON Schema of a problem's instance file",
        "Print the JSON Schema (draft 2020-12) of PROBLEM's instance files.",
        "  schedopt schema admission > admission.schema.json\n",
        common,
    )
    p.add_argument("problem", metavar="PROBLEM", help="problem name, e.g. admission")
    p.set_defaults(func=cmd_schema)

    p = _subparser(
        sub,
        "export",
        "write the exact model as MPS or LP",
        "Write the exact MILP of an instance (first objective level) as MPS or LP, for an\n"
        "external solver.",
        "  schedopt export small.json --format lp --out small.lp\n",
        common,
    )
    p.add_argument("file", metavar="FILE", help="instance JSON file")
    p.add_argument("--format", choices=("mps", "lp"), required=True, help="model file format")
    p.add_argument("--out", metavar="PATH", required=True, help="model file to write")
    p.set_defaults(func=cmd_export)

    p = _subparser(
        sub,
        "methods",
        "list problems and their methods",
        "List the registered problems and, for each, the methods `solve --method` accepts.",
        "  schedopt methods admission\n",
        common,
    )
    p.add_argument("problem", metavar="PROBLEM", nargs="?", help="only this problem")
    p.set_defaults(func=cmd_methods)

    p = _subparser(
        sub,
        "info",
        "describe an instance file",
        "Describe an instance: problem, cluster, jobs by kind, horizon, and the estimated\n"
        "size of the exact model.",
        "  schedopt info small.json\n",
        common,
    )
    p.add_argument("file", metavar="FILE", help="instance JSON file")
    p.set_defaults(func=cmd_info)

    p = _subparser(
        sub,
        "plot",
        "draw a solution as an SVG picture",
        "Validate SOLUTION against FILE and draw it as SVG: for admission, the GPUs of every\n"
        "job in every slot, stacked, against the free-GPU capacity, with guaranteed deadlines\n"
        "marked on the time axis. Hover a block for the job and its GPUs.",
        "  schedopt solve example.json --out sol.json && schedopt plot example.json sol.json "
        "--out plan.svg\n",
        common,
    )
    p.add_argument("file", metavar="FILE", help="instance JSON file")
    p.add_argument("solution", metavar="SOLUTION.json", help="solution JSON file")
    p.add_argument("--out", metavar="PLAN.svg", required=True, help="the SVG file to write")
    p.set_defaults(func=cmd_plot)

    p = _subparser(
        sub,
        "tune",
        "tune a heuristic's parameters by Bayesian optimisation",
        "Tune the parameters of a heuristic (scikit-optimize gp_minimize) on generated\n"
        "instances. The score is the mean objective normalised by the defaults' (defaults =\n"
        "-1.0 for a maximised first objective; lower is better). --save [PATH] records the\n"
        "result in PATH, default $XDG_CONFIG_HOME/schedopt/params/PROBLEM.json (else\n"
        "~/.config/schedopt/params/PROBLEM.json); the parameters shipped with schedopt are\n"
        "never changed. `solve --tuned PATH` (Python: solve(..., tuned=PATH)) uses a saved\n"
        "file; without it method 'auto' uses the shipped parameters.\n"
        "--method takes a heuristic with parameters; any other name lists them.",
        "  schedopt tune admission --method heuristic:edf --size medium --instances 6 \\\n"
        "      --n-calls 30 --save edf.json\n"
        "  schedopt solve small.json --tuned edf.json\n",
        common,
    )
    p.add_argument("problem", metavar="PROBLEM", help="problem name, e.g. admission")
    p.add_argument("--method", required=True, help="a heuristic, e.g. heuristic:edf")
    p.add_argument("--size", default="medium", help="instance size (medium)")
    p.add_argument(
        "--instances",
        type=cli_args.int_in(1, 1000),
        default=6,
        metavar="N",
        help="training instances, 1..1000 (6)",
    )
    p.add_argument(
        "--first-seed",
        type=cli_args.seed,
        default=100,
        metavar="N",
        help="seed of the first training instance (100; keep benchmark seeds apart)",
    )
    p.add_argument(
        "--n-calls",
        type=cli_args.int_in(6, 10_000),
        default=30,
        metavar="N",
        help="evaluations of the objective, 6..10000 (30)",
    )
    p.add_argument(
        "--seed",
        type=cli_args.seed,
        default=0,
        metavar="N",
        help=f"seed of the optimiser, 0..{cli_args.MAX_SEED} (0)",
    )
    p.add_argument(
        "--save",
        nargs="?",
        const="",
        metavar="PATH",
        help="record the tuned parameters in PATH (default: "
        "$XDG_CONFIG_HOME/schedopt/params/PROBLEM.json, else ~/.config/...); "
        "solve uses them only with --tuned PATH",
    )

    p.set_defaults(func=cmd_tune)
    return parser


# --- main -------------------------------------------------------------------------------------
def _report_invalid(err: InvalidInstanceError) -> None:
    console = _stderr()
    for path, reason in err.problems:
        line = f"error: {path}: {reason}" if path else f"error: {reason}"
        console.print(escape(line), soft_wrap=True)
    file = getattr(err, "file", None)
    if file and not any(file in reason for _, reason in err.problems):
        console.print(f"  (in {escape(file)})", soft_wrap=True)


def main(argv: list[str] | None = None) -> int:
    """Run the ``schedopt`` command line with ``argv`` and return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version and argparse's usage errors
        code = exit_.code
        return code if isinstance(code, int) else (EXIT_OK if code is None else EXIT_USAGE)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return args.func(args)
    except InvalidInstanceError as err:
        _report_invalid(err)
        return EXIT_INVALID
    except (UnknownMethodError, UnknownProblemError) as err:
        _stderr().print(f"error: {escape(str(err))}", soft_wrap=True)
        return EXIT_USAGE
    except CliError as err:
        _stderr().print(f"error: {escape(str(err))}", soft_wrap=True)
        return err.code
    except KeyboardInterrupt:
        _stderr().print("interrupted")
        return 130
    except Exception as err:
        if args.debug:
            raise
        console = _stderr()
        if isinstance(err, OSError):  # writing an output file, typically
            where = f"{err.filename}: " if err.filename else ""
            console.print(f"error: {escape(where + (err.strerror or str(err)))}", soft_wrap=True)
            return EXIT_INTERNAL
        text = str(err).strip()
        first = text.splitlines()[0] if text else ""
        console.print(
            f"error: internal error: {type(err).__name__}: {escape(first)} "
            "(rerun with --debug for the traceback)",
            soft_wrap=True,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
