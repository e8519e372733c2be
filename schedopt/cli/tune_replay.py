"""``schedopt tune PROBLEM --replay TRACE``: policy-level tuning on replays of a public trace
(AutoSched): each heuristic's knobs scored by the problem's replay metrics (admission: deadline
misses, then best-effort JCT) over training episodes, checked on the episodes that follow."""

from __future__ import annotations

import argparse
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
    names = [getattr(c, "name", str(k)) for k, c in enumerate(cases)]
    n = args.instances
    return cases[:n], names[:n], cases[n:], names[n:]


__all__ = ["add_replay_arguments", "replay_cases"]
