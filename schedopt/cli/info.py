"""``schedopt info`` and ``schedopt export``: describe an instance file, or write its exact model
for an external solver."""

from __future__ import annotations

import argparse
from collections import Counter

from rich.markup import escape

from schedopt.core.registry import problem_of

from .common import EXIT_OK, EXIT_USAGE, CliError, check_outputs, err_console, load, out_console


def _add_instance(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="instance JSON file")


# --- info -------------------------------------------------------------------------------------
def add_info_arguments(p: argparse.ArgumentParser) -> None:
    _add_instance(p)


def run_info(args: argparse.Namespace) -> int:
    inst = load(args.file)
    spec = problem_of(inst)
    console = out_console()
    console.print(f"[bold]{escape(spec.name)}[/] instance {escape(getattr(inst, 'name', ''))}")
    if spec.description:
        console.print(f"  {escape(spec.description)}")
    cluster = getattr(inst, "cluster", None)
    if cluster is not None:
        console.print(escape(cluster.summary()), soft_wrap=True)
    unavailable = getattr(inst, "unavailable_gpus", ())
    if unavailable:
        console.print(f"  unavailable GPUs: {len(unavailable)}")
    workers = getattr(inst, "workers", None)  # GPUs per type, where there is no Cluster
    if workers:
        console.print("GPUs: " + ", ".join(f"{n} {w}" for w, n in sorted(workers.items())))
    jobs = getattr(inst, "jobs", None)
    if jobs is not None:
        # job kinds where the problem has them (admission's SLO / best-effort), else the count
        kinds = Counter(j.kind.value for j in jobs if getattr(j, "kind", None) is not None)
        shown = f" ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))})" if kinds else ""
        admitted = sum(1 for j in jobs if getattr(j, "admitted", False))
        console.print(
            f"jobs: {len(jobs)}{shown}" + (f"; {admitted} admitted earlier" if admitted else "")
        )
    slots, slot_s = getattr(inst, "slots", None), getattr(inst, "slot_s", None)
    if slots is not None and slot_s is not None:
        console.print(f"horizon: {slots} slots × {slot_s:g} s = {slots * slot_s:g} s")
    for label, text in spec.info(inst) if spec.info is not None else ():
        console.print(f"{escape(label)}: {escape(text)}", soft_wrap=True)
    console.print(f"exact model: about {spec.estimate_variables(inst):,} variables")
    return EXIT_OK


# --- export -----------------------------------------------------------------------------------
def add_export_arguments(p: argparse.ArgumentParser) -> None:
    _add_instance(p)
    p.add_argument("--format", choices=("mps", "lp"), required=True, help="model file format")
    p.add_argument("--out", metavar="PATH", required=True, help="model file to write")


def run_export(args: argparse.Namespace) -> int:
    check_outputs(args.out)
    inst = load(args.file)
    spec = problem_of(inst)
    if spec.export_model is None:
        raise CliError(f"problem {spec.name!r} has no exportable model", EXIT_USAGE)
    spec.export_model(inst, args.out, args.format)
    err_console().print(
        f"wrote the {args.format.upper()} model of {escape(args.file)} to {escape(args.out)}"
    )
    return EXIT_OK
