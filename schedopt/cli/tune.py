"""``schedopt tune``: tune a heuristic's parameters by Bayesian optimisation on generated
instances, and optionally save them where ``solve --tuned`` reads them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.markup import escape

import schedopt.cli.args as cli_args
from schedopt.core.registry import MethodKind, get_problem

from .common import EXIT_OK, EXIT_USAGE, CliError, check_outputs, err_console, out_console

#: What a tuning score is, for ``tune --help`` and the command's output.
SCORE_MEANING = (
    "score: for each training instance, every objective level divided by the default\n"
    "parameters' value of it (by 1 where that is below 1 in size), negated where the level\n"
    "is maximised (so lower is better),\n"
    "weighted 1, 0.001, 0.000001, ... by level; then the mean over the instances (an instance\n"
    "without a solution counts +10). The defaults score about -1 when the first objective is\n"
    "maximised, +1 when minimised (-1.001: two maximised levels); -1.05 or +0.95 is 5%\n"
    "better than the defaults on the first objective."
)


def add_tune_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("problem", metavar="PROBLEM", help="problem name, e.g. admission")
    p.add_argument("--method", required=True, help="a heuristic, e.g. heuristic:edf")
    p.add_argument("--size", default="medium", action=cli_args.SizeAction)
    cli_args.add_int(p, "--instances", 1, 1000, 6, "training instances, 1..1000 (6)")
    cli_args.add_seed(
        p,
        "seed of the first training instance (100; keep benchmark seeds apart)",
        flag="--first-seed",
        default=100,
    )
    cli_args.add_int(p, "--n-calls", 6, 10_000, 30, "evaluations of the objective, 6..10000 (30)")
    cli_args.add_seed(p, f"seed of the optimiser, 0..{cli_args.MAX_SEED} (0)")
    p.add_argument(
        "--save",
        nargs="?",
        const="",
        metavar="PATH",
        help="record the tuned parameters in PATH (default: "
        "$XDG_CONFIG_HOME/schedopt/params/PROBLEM.json, else ~/.config/...); "
        "solve uses them only with --tuned PATH",
    )


def run_tune(args: argparse.Namespace) -> int:
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
        check_outputs(str(save_path), make_dirs=True)
        if save_path.exists():
            load_tuned(spec.name, save_path)  # the file is added to: it must be readable now
    seeds = range(args.first_seed, args.first_seed + args.instances)
    instances = [spec.generate(args.size, s) for s in seeds]
    err = err_console()

    def progress(call: int, params: dict[str, Any], score: float) -> None:
        shown = ", ".join(f"{k}={v:.3g}" for k, v in params.items())
        err.print(f"  [{call:>3}/{args.n_calls}] score {score:+.5f}  {escape(shown)}")

    err.print(
        f"tuning {args.method} on {len(instances)} {args.size} instances "
        f"(seeds {seeds.start}..{seeds.stop - 1}), {args.n_calls} evaluations; score = the "
        "objective levels relative to the defaults', signed so that lower is better "
        "(tune --help says how)"
    )
    result = tune(args.method, instances, n_calls=args.n_calls, seed=args.seed, progress=progress)
    console = out_console()
    gain = (result.default_score - result.score) / max(abs(result.default_score), 1e-12)
    console.print(
        f"best score {result.score:+.5f} (defaults {result.default_score:+.5f}; lower is "
        f"better: {100 * gain:.2f}% better than the defaults) in {result.seconds:.1f} s"
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
