"""Decomposition as a method (DESIGN.md, "Scale and distribution"; issue #17).

A problem splits its instance into parts (POP's random split, Narayanan et al., NSDI'21, or a
split that follows the topology and the problem's structure), each part a small problem of its
own whose answers join into a plan for the whole instance. This module is what every problem's
decomposition shares:

1. the bound first: a relaxation of the *whole* instance (never the parts' own bounds, which
   bound nothing about the whole), under its own share of the time;
2. the parts, as :class:`~schedopt.executor.Task` objects run by an executor (``"inline"``
   now; a process pool is the same call with another ``executor`` argument), each given a time
   budget that fits the deadline with the number of workers there are;
3. ``join`` the answers that came back (a part that failed or ran out of time is missing from
   the mapping; the problem's join repairs around it), which returns the solution for the whole
   instance, or None;
4. an :class:`~schedopt.core.registry.Outcome` that is FEASIBLE with the bound: ``solve``
   validates the joined solution as every answer and reports the gap against the bound. It is
   never OPTIMAL: the parts' proofs say nothing about the whole, and the bound proves at most
   the first level (the explanation says when it does).

Part functions must be module-level and their arguments picklable (the process pool sends them
to workers); each receives a :class:`Budget`, not a ``Deadline`` (a worker's clock is its own).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from schedopt.core.errors import InvalidInstanceError
from schedopt.core.options import SolveOptions, whole_number
from schedopt.core.registry import MethodKind, MethodSpec, Outcome, Runner
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.executor import EXECUTORS, Executor, Task, TaskResult, make_executor

#: Most worker processes ``params["workers"]`` may ask for (the CLI's ``--jobs`` range), and
#: most parts ``params["parts"]`` may ask for.
MAX_WORKERS = 4096
MAX_PARTS = 100_000
#: Seconds kept back from the parts for joining and repairing their answers.
JOIN_RESERVE_S = 0.05


@dataclass(frozen=True)
class Bound:
    """A proven bound on the first level of the whole instance, or None."""

    value: float | None
    stats: Mapping[str, float | str] = field(default_factory=dict)


@dataclass(frozen=True)
class Decomposition:
    """One instance split into parts, as a problem hands it to :func:`run`.

    ``part(p, budget)`` is the task of part ``p`` (of ``count``), to finish within its
    :class:`Budget` (``budget.deadline()`` in the worker). It is made when an executor takes
    it, so every part of a sequential run gets a fair share of what is left then.
    ``join(answers, deadline)`` turns
    the parts' answers (keyed by task key; failed parts missing) into
    ``(solution or None, stats)``; ``bound(seconds)`` is the whole instance's bound, computed
    in this process first.
    """

    part: Callable[[int, Budget], Task]
    count: int
    join: Callable[[Mapping[str, Any], Deadline], tuple[Any, dict[str, float | str]]]
    bound: Callable[[float], Bound]
    #: Seconds joining is expected to take (kept back from the parts), beyond JOIN_RESERVE_S.
    join_reserve_s: float = 0.0
    #: The level the bound is on, for the explanation ("L1").
    level: str = "L1"
    #: Share of the time left that :attr:`bound` gets.
    bound_share: float = 0.25
    #: The problem's last word on the Outcome (a note on its solution), applied at the end.
    finish: Callable[[Outcome], Outcome] = lambda outcome: outcome


@dataclass(frozen=True)
class Budget:
    """A part's time, picklable: ``seconds`` from the part's start and, for executors on this
    machine (inline, a process pool), ``until``, the caller's end on this machine's monotonic
    clock, so that a worker's start-up and a wait in the queue come out of the part's time
    rather than past the caller's deadline. (A Ray worker on another machine has another
    clock: it gets ``seconds`` alone.)"""

    seconds: float
    until: float | None = None

    def deadline(self) -> Deadline:
        """The part's deadline, on the clock of the process it runs in."""
        left = self.seconds
        if self.until is not None:
            left = min(left, self.until - time.monotonic())
        return Deadline.after(max(0.0, left))


#: Executors whose workers share this machine's monotonic clock.
LOCAL_EXECUTORS = ("inline", "process")

#: Share of a part's fair time it is given: a solver returns a little after its limit (CP-SAT's
#: last callback, reading the point back), and in a sequential run every overrun would delay
#: the parts after it.
PART_SHARE = 0.9


def part_budget(deadline: Deadline, count: int, workers: int, reserve_s: float) -> float:
    """Seconds each of ``count`` parts (not yet started) may take so that all finish by
    ``deadline`` less ``reserve_s`` on ``workers`` workers running them in waves."""
    waves = -(-count // max(1, workers))
    return max(0.0, PART_SHARE * (deadline.remaining() - reserve_s) / max(1, waves))


def budget(deadline: Deadline, pool: Executor, seconds: float, reserve_s: float = 0.0) -> Budget:
    """A task's :class:`Budget` of ``seconds``, ended (for ``pool``'s workers on this machine)
    by ``deadline`` less ``reserve_s``, whatever its start-up and its wait in the queue took."""
    local = pool.kind in LOCAL_EXECUTORS
    until = time.monotonic() + deadline.remaining() - reserve_s if local else None
    return Budget(seconds, until)


def budgets(deadline: Deadline, count: int, pool: Executor, reserve_s: float) -> Iterator[Budget]:
    """The budgets of ``count`` parts run by ``pool``, each fixed when it is asked for (zip
    them lazily with the tasks: every part of a sequential run gets a fair share of what is
    left then, :func:`part_budget`)."""
    for p in range(count):
        seconds = part_budget(deadline, count - p, pool.workers, reserve_s)
        yield budget(deadline, pool, seconds, reserve_s)


def _tasks(
    decomposition: Decomposition, deadline: Deadline, pool: Executor, reserve_s: float
) -> Iterator[Task]:
    """The parts' tasks, each made (and its budget fixed) when the executor asks for it."""
    for p, part_time in enumerate(budgets(deadline, decomposition.count, pool, reserve_s)):
        yield decomposition.part(p, part_time)


def run_parts(
    executor: Executor, tasks: Iterable[Task], deadline: Deadline | None
) -> tuple[dict[str, Any], dict[str, float | str]]:
    """The answers of the tasks that finished (by key) and what became of the others
    (``deadline`` None: no limit)."""
    answers: dict[str, Any] = {}
    stats: dict[str, float | str] = {}
    failed: list[str] = []
    slowest = 0.0
    result: TaskResult
    for result in executor.run(tasks, deadline=deadline):
        slowest = max(slowest, result.elapsed_s)
        if result.ok:
            answers[result.key] = result.value
        else:
            failed.append(f"{result.key}: {'timed out' if result.timed_out else result.error}")
    stats["parts_solved"] = float(len(answers))
    stats["parts_slowest_s"] = round(slowest, 3)
    if failed:
        stats["parts_failed"] = "; ".join(failed[:5])
    return answers, stats


def run(
    decomposition: Decomposition,
    deadline: Deadline,
    *,
    executor: str = "inline",
    workers: int | None = None,
) -> Outcome:
    """The decomposition's Outcome: bound, parts through ``executor``, join."""
    t0 = time.perf_counter()
    bound = decomposition.bound(deadline.share(decomposition.bound_share))
    bound_s = time.perf_counter() - t0
    stats: dict[str, float | str] = {**bound.stats, "bound_s": round(bound_s, 3)}
    reserve = JOIN_RESERVE_S + decomposition.join_reserve_s
    with make_executor(executor, jobs=workers) as pool:
        tasks = _tasks(decomposition, deadline, pool, reserve)
        answers, part_stats = run_parts(pool, tasks, deadline.earlier(reserve))
        stats.update(part_stats)
        stats.update(pool.describe())
    t1 = time.perf_counter()
    stats["parts_s"] = round(t1 - t0 - bound_s, 3)  # the pool's start, the parts, its close
    solution, join_stats = decomposition.join(answers, deadline)
    stats["join_s"] = round(time.perf_counter() - t1, 3)  # unless the join says its own
    stats.update(join_stats)
    elapsed = time.perf_counter() - t0
    if solution is None:
        return Outcome(
            Status.NO_SOLUTION,
            bound=bound.value,
            build_s=bound_s,
            solve_s=elapsed - bound_s,
            explanation="the parts' answers could not be joined into a plan for the whole "
            "instance" + (f" ({part_stats['parts_failed']})" if "parts_failed" in stats else ""),
            stats=stats,
        )
    # What the status rests on, in the stats (the explanation is left to the problem's notes):
    stats["decomposition"] = (
        (
            f"joined from {decomposition.count} parts"
            if decomposition.count
            else "no parts (the join worked on the whole instance)"
        )
        + f"; the bound on {decomposition.level} is a "
        "relaxation of the whole instance, the parts' own proofs say nothing about the whole"
    )
    found = Outcome(
        Status.FEASIBLE,
        solution=solution,
        bound=bound.value,
        build_s=bound_s,
        solve_s=elapsed - bound_s,
        stats=stats,
    )
    return decomposition.finish(found)


#: ``split(instance, options, deadline, random)``: a problem's decomposition of one instance
#: (``random``: POP's split), or an early Outcome (a case it does not split).
Split = Callable[[Any, SolveOptions, Deadline, bool], "Decomposition | Outcome"]


def whole_param(options: SolveOptions, name: str, default: int, low: int, high: int) -> int:
    """``options.params[name]`` as a whole number in ``[low, high]`` (``default`` without it);
    any other value is refused with :class:`InvalidInstanceError` naming ``params.<name>``."""
    return whole_number(f"params.{name}", options.params.get(name, default), low, high)


def executor_choice(options: SolveOptions) -> tuple[str, int | None]:
    """The executor a decomposition's parts run on, from ``options.params``: ``executor``
    (``"inline"``, the default; ``"process"``, ``"ray"``) and ``workers`` (default: the
    executor's own, :func:`~schedopt.executor.make_executor`)."""
    kind = options.params.get("executor", "inline")
    if kind not in EXECUTORS:
        raise InvalidInstanceError(
            "params.executor", f"must be one of {', '.join(EXECUTORS)} (got {kind!r})"
        )
    if options.params.get("workers") is None:
        return kind, None
    return kind, whole_param(options, "workers", 1, 1, MAX_WORKERS)


def open_executor(options: SolveOptions) -> Executor:
    """The executor of :func:`executor_choice`, for a problem that runs several rounds of
    tasks on one pool (its workers start once); close it (``with``) on every path."""
    kind, workers = executor_choice(options)
    return make_executor(kind, jobs=workers)


def runner(split: Split, random: bool) -> Runner:
    """The method that splits with ``split`` and runs the parts (``options.params``:
    ``executor``, ``workers``; ``parts`` is the problem's)."""

    def by_parts(instance: Any, options: SolveOptions, deadline: Deadline) -> Outcome:
        t0 = time.perf_counter()
        d = split(instance, options, deadline, random)
        if isinstance(d, Outcome):
            return d
        build_s = time.perf_counter() - t0
        kind, workers = executor_choice(options)
        out = run(d, deadline, executor=kind, workers=workers)
        return replace(out, build_s=out.build_s + build_s)

    return by_parts


def methods(
    split: Split, structured: str, pop: str, *, first: bool = False
) -> tuple[MethodSpec, ...]:
    """A problem's two decomposition methods: ``decomp`` (its own split) and ``decomp:pop``
    (POP's random split), described by ``structured`` and ``pop``. They are listed as
    heuristics: they prove no optimum (their bound is the whole instance's relaxation), and
    ``auto`` picks them by size (``auto_route``). With ``first``, ``decomp`` is marked
    :attr:`~schedopt.core.registry.MethodSpec.decomposition`: ``auto`` runs it before (and
    instead of) the heuristics, for a problem whose parts make their own starting plan and
    where that was measured better."""
    return (
        MethodSpec(
            "decomp",
            MethodKind.HEURISTIC,
            runner(split, False),
            structured,
            decomposition=first,
        ),
        MethodSpec("decomp:pop", MethodKind.HEURISTIC, runner(split, True), pop),
    )


__all__ = [
    "JOIN_RESERVE_S",
    "LOCAL_EXECUTORS",
    "PART_SHARE",
    "Bound",
    "Budget",
    "Decomposition",
    "budget",
    "budgets",
    "executor_choice",
    "methods",
    "open_executor",
    "part_budget",
    "run",
    "run_parts",
    "runner",
]
