"""``schedopt generate``, ``schema`` and ``methods``: the commands about a problem by its name,
with no instance file to read."""

from __future__ import annotations

import argparse
import json
import sys

from rich.markup import escape
from rich.table import Table

import schedopt
import schedopt.cli.args as cli_args
from schedopt.core.registry import ProblemSpec, get_problem, problem_names

from .common import EXIT_OK, EXIT_USAGE, CliError, check_outputs, err_console, out_console


def _add_problem(p: argparse.ArgumentParser) -> None:
    p.add_argument("problem", metavar="PROBLEM", help="problem name, e.g. admission")


# --- generate ---------------------------------------------------------------------------------
def add_generate_arguments(p: argparse.ArgumentParser) -> None:
    _add_problem(p)
    p.add_argument("--size", default="small", action=cli_args.SizeAction)
    cli_args.add_seed(p, f"seed, 0..{cli_args.MAX_SEED} (0)")
    p.add_argument("--out", metavar="FILE", help="write here instead of stdout")


def run_generate(args: argparse.Namespace) -> int:
    check_outputs(args.out)
    spec = get_problem(args.problem)
    if args.size not in spec.sizes:
        raise CliError(
            f"unknown size {args.size!r} for {spec.name}; choose from {', '.join(spec.sizes)}",
            EXIT_USAGE,
        )
    inst = spec.generate(args.size, args.seed)
    if args.out:
        schedopt.dump(inst, args.out)
        err_console().print(
            f"wrote {escape(args.out)} ({escape(getattr(inst, 'name', spec.name))})"
        )
    else:
        sys.stdout.write(schedopt.io.to_json(inst))
        sys.stdout.flush()
    return EXIT_OK


# --- schema -----------------------------------------------------------------------------------
def add_schema_arguments(p: argparse.ArgumentParser) -> None:
    _add_problem(p)


def run_schema(args: argparse.Namespace) -> int:
    get_problem(args.problem)  # a clear error for an unknown name
    sys.stdout.write(json.dumps(schedopt.io.json_schema(args.problem), indent=2) + "\n")
    sys.stdout.flush()
    return EXIT_OK


# --- methods ----------------------------------------------------------------------------------
def add_methods_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("problem", metavar="PROBLEM", nargs="?", help="only this problem")


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
        f"heuristics ({heuristics}), then {spec.auto_exact}"
        + (" (or, by the instance's size, another method)" if spec.auto_route else "")
        + " warm-started with the best of them",
    )
    for name, method in spec.methods.items():
        table.add_row(escape(name), method.kind.value, escape(method.description))
    return table


def run_methods(args: argparse.Namespace) -> int:
    names = [args.problem] if args.problem else list(problem_names())
    console = out_console()
    for i, name in enumerate(names):
        if i:
            console.print()
        console.print(_methods_table(get_problem(name)))
    return EXIT_OK
