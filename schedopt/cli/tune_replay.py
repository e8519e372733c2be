"""``schedopt tune PROBLEM --replay TRACE``: policy-level tuning on replays of a public trace
(AutoSched): each heuristic's knobs scored by the problem's replay metrics (admission: deadline
misses, then best-effort JCT) over training episodes, checked on the episodes that follow.
``--sliding`` re-tunes window after window as the workload drifts, against the defaults and
one tuning (:func:`schedopt.tuning.policy.sliding_retune`)."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

import schedopt.cli.args as cli_args
from schedopt.core.registry import ProblemSpec

from .common import EXIT_USAGE, CliError

#: Where the public traces are, relative to a checkout of the repository.
DEFAULT_DATA = Path("..") / "shared" / "data"


def add_replay_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "policy-level tuning on a replay (instead of instances)",
        "Episodes are consecutive windows of --episode-size (jobs for admission) of TRACE, "
        "from --start on: --instances of them to tune on, then --held-out to check on.",
    )
    g.add_argument("--replay", metavar="TRACE", help="tune on replays of TRACE (see below)")
    g.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help=f"the trace folder ({DEFAULT_DATA})"
    )
    g.add_argument(
        "--start",
        type=cli_args.int_in(0, 10**9),
        default=0,
        metavar="N",
        help="first job of the first episode (0)",
    )
    g.add_argument(
        "--episode-size",
        type=cli_args.int_in(1, 10**6),
        default=100,
        metavar="N",
        help="size of one episode (100)",
    )
    g.add_argument(
        "--episode-set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="set a field of every episode (admission: hosts, time_limit_s, slot_s, ...); "
        "repeatable",
    )
    g.add_argument(
        "--sliding",
        action="store_true",
        help="re-tune as the workload drifts: the episodes are windows in order; tune once "
        "on window 0, then score every later window with the defaults, the one-time tuning "
        "and a tuning of the window before it (warm-started from the one before that)",
    )


def _episode_updates(pairs: list[str]) -> dict[str, Any]:
    updates: dict[str, Any] = {}
    for pair in pairs:
        field, sep, text = pair.partition("=")
        if not sep or not field:
            raise CliError(f"--episode-set wants FIELD=VALUE, not {pair!r}", EXIT_USAGE)
        try:
            updates[field] = json.loads(text)
        except json.JSONDecodeError:
            updates[field] = text
    return updates


def _fits(value: Any, current: Any) -> bool:
    """``value`` may replace ``current``: the same scalar type (an int where a float is; never
    a bool for a number, nor a structured field such as an episode's jobs)."""
    kind = type(current)
    if kind not in (bool, int, float, str):
        return False
    if kind is float:
        return type(value) in (int, float)
    return type(value) is kind


def replay_cases(
    spec: ProblemSpec, args: argparse.Namespace
) -> tuple[list[Any], list[str], list[Any], list[str]]:
    """Training and held-out episodes, with their names."""
    if spec.policy is None:
        raise CliError(f"{spec.name} has no replay to tune a policy on", EXIT_USAGE)
    if args.replay not in spec.policy.traces:
        raise CliError(
            f"unknown trace {args.replay!r} for {spec.name}; known: "
            f"{', '.join(spec.policy.traces)}",
            EXIT_USAGE,
        )
    count = args.instances + args.held_out
    cases = spec.policy.episodes(args.data, args.replay, args.start, count, args.episode_size)
    updates = _episode_updates(args.episode_set)
    if updates:
        if not cases or not dataclasses.is_dataclass(cases[0]):
            raise CliError(f"{spec.name}'s episodes have no fields to set", EXIT_USAGE)
        known = {f.name for f in dataclasses.fields(cases[0])}
        unknown = sorted(set(updates) - known)
        if unknown:
            raise CliError(
                f"--episode-set: {spec.name}'s episodes have no field {', '.join(unknown)}; "
                f"fields: {', '.join(sorted(known))}",
                EXIT_USAGE,
            )
        for field, value in updates.items():
            if not _fits(value, getattr(cases[0], field)) or field == "name":
                raise CliError(
                    f"--episode-set {field}={value!r}: not a value of that field (a "
                    f"{type(getattr(cases[0], field)).__name__}; settable: the numbers, flags "
                    "and words of an episode other than its name)",
                    EXIT_USAGE,
                )
            if type(getattr(cases[0], field)) is float:
                updates[field] = float(value)
        cases = [dataclasses.replace(c, **updates) for c in cases]
    names = [getattr(c, "name", str(k)) for k, c in enumerate(cases)]
    n = args.instances
    return cases[:n], names[:n], cases[n:], names[n:]


def run_sliding(
    spec: ProblemSpec,
    methods: list[str],
    windows: list[Any],
    args: argparse.Namespace,
    executor: Any,
    console: Any,
) -> None:
    """``--sliding``: one table per heuristic, a row per window from the second on."""
    from rich.table import Table

    from schedopt.tuning.policy import sliding_retune

    assert spec.policy is not None
    if len(windows) < 2:
        raise CliError(
            "--sliding needs at least two windows (--instances + --held-out)", EXIT_USAGE
        )
    terms = [t.name for t in spec.policy.terms]
    console.print(", ".join(f"L{k + 1}: {name}" for k, name in enumerate(terms)))
    for method in methods:
        table = Table(title=f"{spec.name} {method}: each window scored before it is tuned on")
        table.add_column("window", justify="left", no_wrap=True)
        for k in range(len(terms)):
            for who in ("defaults", "one-time", "sliding"):
                table.add_column(f"L{k + 1} {who}", justify="right")
        for w in sliding_retune(
            spec,
            method,
            windows,
            n_calls=args.n_calls,
            batch=args.batch or executor.workers,
            seed=args.seed,
            executor=executor,
        ):
            cells = []
            for k in range(len(terms)):
                for got in (w.defaults, w.one_time, w.sliding):
                    cells.append("-" if got is None else f"{got[k]:.6g}")
            table.add_row(w.window, *cells)
        console.print(table)


__all__ = ["add_replay_arguments", "replay_cases", "run_sliding"]
