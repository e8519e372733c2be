"""Column generation's schedule checks on the case workers (#17): when ``colgen`` has case
workers (an executor with more workers than the checks' own), a round's checks go to them in
batches, and the columns join the master in the proposals' order whatever order the batches
finish in (a reproducible master)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator

import schedopt
from schedopt.core.options import SolveOptions
from schedopt.core.stopping import Deadline
from schedopt.executor import Executor, InlineExecutor, Task, TaskResult, run_task
from schedopt.problems.cosched import colgen, decomp, generate_custom
from schedopt.problems.cosched.colgen import Master, check, check_batch, checked
from schedopt.problems.cosched.heuristics import heuristic_data
from schedopt.problems.cosched.shares import AGG_SCALE, could_raise


class Backwards(Executor):
    """Two 'workers' in this process: every task run here, the results handed back in the
    reverse of the tasks' order (as a pool may finish them); the functions it ran."""

    kind = "backwards"

    def __init__(self) -> None:
        super().__init__(2)
        self.ran: list[object] = []

    def run(
        self, tasks: Iterable[Task], *, deadline: Deadline | None = None, ahead: int = 0
    ) -> Iterator[TaskResult]:
        done = []
        for t in tasks:
            self.ran.append(t.fn)
            done.append(run_task(t))
        yield from reversed(done)


class Counting(InlineExecutor):
    def __init__(self) -> None:
        super().__init__()
        self.ran: list[object] = []

    def run(
        self, tasks: Iterable[Task], *, deadline: Deadline | None = None, ahead: int = 0
    ) -> Iterator[TaskResult]:
        def seen() -> Iterator[Task]:
            for t in tasks:
                self.ran.append(t.fn)
                yield t

        yield from super().run(seen(), deadline=deadline, ahead=ahead)


@functools.cache
def _setup():
    inst = generate_custom(12, 12, 16, 16, 1, (0, 1))
    hint = schedopt.solve(inst, "heuristic:packing", time_limit_s=5, deterministic=True).solution
    data = heuristic_data(inst)
    start, _ = decomp._start(inst, data, SolveOptions(hint=hint), Deadline.after(60))
    return data, start


def test_the_rounds_checks_go_to_the_case_workers() -> None:
    """With case workers, no check runs on the checks' own (inline) executor."""
    data, start = _setup()
    own, workers = Counting(), Backwards()
    gen = colgen.generate(
        data, start, Deadline.after(600), own, Deadline.after(600), 4, False, workers
    )
    assert gen.rounds == 4
    assert check_batch in workers.ran
    assert check not in own.ran and check_batch not in own.ran
    # and without case workers, on the executor given, one task a group (as before)
    own = Counting()
    colgen.generate(data, start, Deadline.after(600), own, Deadline.after(600), 2, False, None)
    assert check in own.ran


def test_the_checked_columns_keep_the_proposals_order() -> None:
    """Batches finished backwards give the columns one task a group gives, in that order."""
    data, start = _setup()
    proposed = [c.members for c in start]
    # pairs of the starting groups too, some of which the check shrinks or cannot schedule
    proposed += [a.members + b.members for a, b in zip(start[::2], start[1::2], strict=False)]
    inline = checked(data, proposed, Deadline.after(600), True, InlineExecutor())
    workers = Backwards()
    batched = checked(data, proposed, Deadline.after(600), True, InlineExecutor(), workers)
    assert workers.ran and set(workers.ran) == {check_batch}
    assert len(inline) > len(start)
    assert [Master.key(c) for c in batched] == [Master.key(c) for c in inline]


def test_the_scaled_aggregate_bound_is_tried_only_below_what_it_can_reach() -> None:
    """At most s times the aggregate bound, at most the master's LP (z_R' ≤ LP), and at most
    c(S) / π_agg(S) times the aggregate bound for any group S of R' (θ* is the least)."""
    data, start = _setup()
    from schedopt.problems.cosched.data import aggregate_shares

    shares = aggregate_shares(data) or []
    agg = sum(shares)
    top = AGG_SCALE * agg
    assert could_raise(data, None, top)
    assert could_raise(data, 0.9 * top, top)
    assert not could_raise(data, top, 2 * top)
    assert not could_raise(data, 0.9 * top, 0.9 * top)
    # a group whose cost is 1.2 times its members' shares caps θ* at 1.2
    group = (1.2 * (shares[0] + shares[1]), [0, 1])
    assert could_raise(data, 1.19 * agg, 2 * top, [group])
    assert not could_raise(data, 1.21 * agg, 2 * top, [group])
    # the starting columns are groups of R': θ* is at least 1 (the shares are dual feasible)
    groups = [(c.cost(data), [j for j, _ in c.members]) for c in start]
    assert could_raise(data, 0.999 * agg, 2 * top, groups)
