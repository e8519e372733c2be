"""``schedopt validate`` and ``schedopt plot``: the commands that read an instance and a solution
and check the solution with the problem's independent validator."""

from __future__ import annotations

import argparse

from rich.markup import escape

from schedopt.core.registry import problem_of

from .common import (
    EXIT_OK,
    EXIT_VALIDATION_FAILED,
    check_outputs,
    err_console,
    fmt,
    load,
    load_solution,
    out_console,
    write_json,
    write_plot,
)


def _add_instance_and_solution(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="instance JSON file")
    p.add_argument("solution", metavar="SOLUTION.json", help="solution JSON file")


# --- validate ---------------------------------------------------------------------------------
def add_validate_arguments(p: argparse.ArgumentParser) -> None:
    _add_instance_and_solution(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run_validate(args: argparse.Namespace) -> int:
    inst = load(args.file)
    spec = problem_of(inst)
    sol = load_solution(inst, args.solution)
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
        write_json(
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
    console = out_console()
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
            shown = fmt(objectives[term.name])
            console.print(f"  {term.sense.value} {escape(term.name):<30} {shown}{escape(unit)}")
    if metrics:
        for key, value in metrics.items():
            console.print(f"  {escape(key):<34} {fmt(value)}")
    if note:
        console.print(f"[dim]{escape(note)}[/]")
    return EXIT_VALIDATION_FAILED if violations else EXIT_OK


# --- plot -------------------------------------------------------------------------------------
def add_plot_arguments(p: argparse.ArgumentParser) -> None:
    _add_instance_and_solution(p)
    p.add_argument("--out", metavar="PLAN.svg", required=True, help="the SVG file to write")


def run_plot(args: argparse.Namespace) -> int:
    check_outputs(args.out)
    inst = load(args.file)
    spec = problem_of(inst)
    sol = load_solution(inst, args.solution)
    violations = spec.validate(inst, sol)
    if violations:
        for v in violations:
            err_console().print(f"[{v.constraint_id}] {escape(v.message)}", soft_wrap=True)
        err_console().print("error: the solution is not valid; nothing plotted")
        return EXIT_VALIDATION_FAILED
    write_plot(spec, inst, sol, args.out)
    return EXIT_OK
