"""``schedopt tune``: tune every heuristic of a problem (or the ones named) by Bayesian
optimisation on training instances, check the result on held-out instances, and save only what
wins there."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.markup import escape

import schedopt.cli.args as cli_args
from schedopt.core.registry import MethodKind, ProblemSpec, get_problem

from .common import EXIT_OK, EXIT_USAGE, CliError, check_outputs, err_console, out_console
from .tune_replay import add_replay_arguments, replay_cases, run_sliding

SCORE_HELP = (
    "score: the mean over instances of each objective level divided by the defaults' value\n"
    "on that instance (by 1 where that value is below 1), weighted 1, 1e-3, ... by level and\n"
    "signed so that lower is better: the defaults score about -1 per maximised and +1 per\n"
    "minimised first level, an instance without a solution 10. 'gain' is the improvement\n"
    "over the defaults in per cent of their score."
)


def add_tune_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("problem", metavar="PROBLEM", help="problem name, e.g. admission")
    p.add_argument(
        "--method",
        action="append",
        metavar="M",
        help="a heuristic to tune (repeatable; default: every tunable heuristic of PROBLEM)",
    )
    p.add_argument("--size", default="medium", action=cli_args.SizeAction)
    cli_args.add_int(p, "--instances", 1, 1000, 6, "training instances, 1..1000 (6)")
    cli_args.add_seed(
        p,
        "seed of the first training instance (100; keep benchmark seeds apart)",
        flag="--first-seed",
        default=100,
    )
    cli_args.add_int(p, "--held-out", 0, 1000, 6, "held-out instances, 0..1000 (6)")
    cli_args.add_seed(
        p, "seed of the first held-out instance (200)", flag="--held-out-seed", default=200
    )
    p.add_argument("--suite", help="train on a benchmark suite's instances instead (bench)")
    p.add_argument("--held-out-suite", metavar="SUITE", help="check on a suite's instances")
    cli_args.add_int(p, "--n-calls", 6, 10_000, 30, "points evaluated per heuristic (30)")
    cli_args.add_int(p, "--batch", 1, 256, 0, "points evaluated at once (default: the workers)")
    p.add_argument(
        "--time-limit",
        type=cli_args.time_limit,
        default=10.0,
        metavar="S",
        help="time limit of one heuristic run (10)",
    )
    cli_args.add_executor(p, "evaluations")
    p.add_argument(
        "--checkpoint",
        metavar="DIR",
        help="record every evaluation in DIR/PROBLEM-METHOD.json; a rerun resumes from it",
    )
    cli_args.add_seed(p, f"seed of the optimiser, 0..{cli_args.MAX_SEED} (0)")
    p.add_argument(
        "--save",
        nargs="?",
        const="",
        metavar="PATH",
        help="record the parameters that beat the defaults on the held-out instances in PATH "
        "(default: $XDG_CONFIG_HOME/schedopt/params/PROBLEM.json, else ~/.config/...); "
        "solve uses them only with --tuned PATH",
    )
    add_replay_arguments(p)


def _methods(spec: ProblemSpec, asked: list[str] | None, replay: bool) -> list[str]:
    tunable = [n for n, m in spec.methods.items() if m.kind is MethodKind.HEURISTIC and m.params]
    if replay and spec.policy is not None and spec.policy.methods:
        tunable = [n for n in tunable if n in spec.policy.methods]
    for name in asked or []:
        if name not in tunable:
            raise CliError(
                f"{name!r} cannot be tuned; tunable {spec.name} heuristics: "
                f"{', '.join(tunable) or 'none'}",
                EXIT_USAGE,
            )
    if not tunable:
        raise CliError(f"{spec.name} has no tunable heuristic", EXIT_USAGE)
    return list(asked) if asked else tunable


def _instances(
    spec: ProblemSpec, suite: str | None, size: str, first: int, count: int, first_flag: bool
) -> tuple[list[Any], list[str]]:
    """Instances and their names: a suite's, or ``count`` generated ones of ``size``."""
    if suite is not None:
        from schedopt.bench.suites import all_suites

        suites = all_suites()
        if suite not in suites:
            raise CliError(f"unknown suite {suite!r}; known: {', '.join(suites)}", EXIT_USAGE)
        if suites[suite].problem != spec.name:
            raise CliError(f"suite {suite!r} is of {suites[suite].problem}", EXIT_USAGE)
        recipes = suites[suite].recipes
        return [r.build() for r in recipes], [f"{suite}/{r.name}" for r in recipes]
    if size not in spec.sizes:
        raise CliError(f"unknown size {size!r}; choose from {', '.join(spec.sizes)}", EXIT_USAGE)
    if first + count - 1 > cli_args.MAX_SEED:
        flags = "--first-seed + --instances" if first_flag else "--held-out-seed + --held-out"
        raise CliError(f"{flags} - 1 must be at most {cli_args.MAX_SEED}", EXIT_USAGE)
    seeds = range(first, first + count)
    return [spec.generate(size, s) for s in seeds], [f"{size}-s{s}" for s in seeds]


def run_tune(args: argparse.Namespace) -> int:
    from schedopt.executor import make_executor
    from schedopt.tuning import load_tuned, save_tuned, tune
    from schedopt.tuning.bayes import MIN_GAIN_PCT
    from schedopt.tuning.policy import tune_policy
    from schedopt.tuning.store import default_save_path

    spec = get_problem(args.problem)
    if args.replay is None and (args.sliding or args.episode_set):
        raise CliError("--sliding and --episode-set apply to --replay only", EXIT_USAGE)
    if args.sliding and args.save is not None:
        raise CliError("--sliding measures re-tuning and saves nothing; drop --save", EXIT_USAGE)
    methods = _methods(spec, args.method, args.replay is not None)
    save_path = None
    if args.save is not None:
        # The shipped parameters are package data and stay untouched: a save goes to the
        # path given, else to the per-user file, and solve reads it only with --tuned.
        save_path = Path(args.save) if args.save else default_save_path(spec.name)
        check_outputs(str(save_path), make_dirs=True)
        if save_path.exists():
            load_tuned(spec.name, save_path)  # the file is added to: it must be readable now
    if args.checkpoint is not None:
        check_outputs(str(Path(args.checkpoint) / "probe.json"), make_dirs=True)
    if args.replay is not None:
        train, train_names, held, held_names = replay_cases(spec, args)
    else:
        train, train_names = _instances(
            spec, args.suite, args.size, args.first_seed, args.instances, True
        )
        held_count = 0 if args.held_out_suite else args.held_out
        held, held_names = (
            _instances(spec, args.held_out_suite, args.size, args.held_out_seed, held_count, False)
            if args.held_out_suite or held_count
            else ([], [])
        )

    err, console = err_console(), out_console()
    err.print(
        f"tuning {', '.join(methods)} of {spec.name} on {len(train)} training and "
        f"{len(held)} held-out instances, {args.n_calls} points each, on {args.executor}"
    )
    err.print(escape(SCORE_HELP))
    saved = 0
    with make_executor(args.executor, jobs=args.jobs or None, address=args.address) as executor:
        if args.replay is not None and args.sliding:
            run_sliding(spec, methods, [*train, *held], args, executor, console)
            return EXIT_OK
        batch = args.batch or executor.workers
        for method in methods:

            def progress(
                k: int, n: int, params: dict[str, Any], score: float, name: str = method
            ) -> None:
                shown = ", ".join(f"{p}={v:.3g}" for p, v in params.items())
                err.print(
                    f"  {escape(name)} [{k:>3}/{n}] score {score:+.5f}  {escape(shown)}",
                    soft_wrap=True,
                )

            checkpoint = None
            if args.checkpoint is not None:
                stem = f"{spec.name}-{method.replace(':', '-')}.json"
                checkpoint = Path(args.checkpoint) / stem
            common: dict[str, Any] = dict(
                held_out=held,
                n_calls=args.n_calls,
                batch=batch,
                seed=args.seed,
                executor=executor,
                checkpoint=checkpoint,
                progress=progress,
            )
            if args.replay is not None:
                result = tune_policy(spec, method, train, **common)
            else:
                result = tune(method, train, time_limit_s=args.time_limit, **common)
            line = (
                f"{method}: training score {result.score:+.5f} against the defaults' "
                f"{result.default_score:+.5f} (gain {result.gain_pct:+.2f}%)"
            )
            if result.held_out_gain_pct is not None:
                line += (
                    f"; held out {result.held_out_score:+.5f} against "
                    f"{result.held_out_default_score:+.5f} (gain {result.held_out_gain_pct:+.2f}%"
                    f", spread {result.held_out_spread:.5f})"
                )
            console.print(escape(line), soft_wrap=True)
            for k, v in result.params.items():
                console.print(f"  {k} = {v}")
            if save_path is None:
                continue
            if not result.wins_held_out:
                console.print(
                    f"  not saved: not {MIN_GAIN_PCT}% better than the defaults on the "
                    "held-out instances"
                )
                continue
            path = save_tuned(spec.name, method, result.entry(train_names, held_names), save_path)
            console.print(f"  saved to {escape(str(path))}")
            saved += 1
    if save_path is not None and saved:
        console.print(
            f"use them with: schedopt solve FILE --tuned {escape(str(save_path))}  "
            "(Python: schedopt.solve(..., tuned=path))"
        )
    return EXIT_OK
