"""W7's search over target L1s (formulations/reconfig.md, W7; #17 item 3): pipeline columns
(``columns.py``) over each W1 cut of the surviving GPUs, then over the hosts' packings, at
targets climbing from the proven bound, then bisected below the best plan found; while the
time lasts, the packings' bisection starts again from the bound with the columns it has
gathered. Columns are kept from one target and one supply to the next, and the packings' MILP
starts from the best plan's packings. A heuristic: the validator judges every plan."""

from __future__ import annotations

import time

from schedopt.core.stopping import Deadline, DeadlineReached

from .budgets import Work
from .chains import _plan, idle_groups
from .design import Chain, Partitioner
from .instance import ReconfigInstance
from .validate import evaluate, validate

#: W7's first target: this much above the bound, and at least this fraction of the start's
#: L1 (a bound cut short by the time is far below); its step up while nothing is found.
COLUMN_FIRST = 0.01
COLUMN_FLOOR = 0.8
COLUMN_STEP = 0.03
#: W7's bisection stops with its targets this close (relative): the packings' (the best
#: plans), and the cuts' coarser, so that the packings get their turn at 10 s (#17).
COLUMN_TOL = 1e-3
CUT_TOL = 2e-2
#: The all-reduce level of the packings' passes in turn: the best plan's, free (six levels),
#: and each column's own (optimistic: the validator's L1 decides; at 256 GPUs in 60 s the
#: first two stopped at 12.503 s, this one, its targets up to 3% above, found 12.496 s).
MODES = ("best", "free", "own")
#: Once a pass of each mode found nothing, one more from a second start: the best plan's
#: level, its targets bisected between the best plan and COLUMN_STEP above it, not between
#: the bound and it (the MILP's plan is not monotone in its target: at 1,024 GPUs a target
#: 0.3% above the best plan gave a plan 0.2% below it, #17); the cycle goes on if it finds a
#: better plan (before, a column was enough).
SECOND = "above"


def columned(
    inst: ReconfigInstance,
    part: Partitioner,
    upper: int,
    deadline: Deadline | None,
    lower: int | None = None,
    start: list[Chain] | None = None,
    hard: Deadline | None = None,
    work: Work | None = None,
) -> list[list[Chain]]:
    """W7 (columns.py): whole pipelines from priced columns over each W1 cut of every
    surviving GPU, then over the hosts' packings (the master cuts the hosts), at targets
    climbing from ``COLUMN_FIRST`` above ``lower`` (a proven bound; at least
    ``COLUMN_FLOOR·upper``) by ``COLUMN_STEP`` until the columns hold ``M``, then bisected
    below the plan found; over the packings, again from ``lower`` while a pass finds a plan or
    new columns and the time lasts. ``start``: the plan of L1 ``upper`` (its pipelines are
    columns from the first target on); the best plan found (none or one). A target starts before
    ``deadline`` and with at least the time the last one took left before ``hard`` (else
    ``deadline``): it may run past ``deadline``, as its MILP's share of it lets it, not past
    ``hard``. ``work`` (deterministic mode): at most ``work.targets`` targets, each MILP on
    ``work.nodes`` nodes, ``deadline`` only the runaway cap (no time measured)."""
    from .columns import Columns  # HiGHS, on first use
    from .stage_bound import stage_data

    try:
        sd = stage_data(inst, True, deadline)
    except DeadlineReached:  # its share ran out while packing the hosts: no plan from here
        return []
    if sd is None:
        return []
    found: list[tuple[tuple[float, ...], list[Chain]]] = []
    seqs: set[tuple[int, ...]] = set()  # the columns, kept over every target and supply
    hi = upper - 1  # the highest target still worth trying: below the best plan found
    floor = lower or int(upper * COLUMN_FLOOR)  # no plan below a proven bound
    # the packings' passes' states at their ends (mode, columns, best plan): a pass of that
    # mode from there again has its targets and level (both fixed by the mode and the best
    # plan) and every column it priced; no column entered and no plan came since, so it is
    # skipped as one that found nothing (at 16 GPUs such passes found neither, #17)
    ended: set[tuple[str, int, int]] = set()
    # a target is tried only with at least the time the last one took left before ``hard``:
    # its pricing's fixed work does not shrink with the time left (beside a CPU burner at
    # 1,024 GPUs, at a seventh of a core, a target took 0.54 s, and the last one, started
    # with 0.01 s left, ended W7 0.53 s past its deadline and the 10 s row past its limit;
    # held to ``deadline`` itself, W7 lost its last target to W6, RESULTS.md, #17)
    last_s = 0.0
    limit = deadline if hard is None else hard

    tried = 0  # targets tried (deterministic mode: ``work.targets`` at most)

    def no_time() -> bool:
        if work is not None and tried >= work.targets:
            return True
        if deadline is None:
            return False
        if work is not None:  # the runaway cap alone
            return deadline.expired()
        return deadline.expired() or (limit is not None and limit.remaining() <= last_s)

    first = max(int((lower or 0) * (1 + COLUMN_FIRST)), int(upper * COLUMN_FLOOR))
    for apart in (False, None, True):  # a W1 cut, the hosts' packings, the other cut
        cols = Columns(sd, part, None if apart is None else idle_groups(inst, set(), apart), seqs)
        best = min(found, key=lambda x: x[0])[1] if found else start or []
        seqs.update(q for q in map(cols.seq, best) if q is not None)
        if apart is None:
            cols.start = cols.packings_of(best)  # the MILP's first start: the best plan's hosts
        # the MILP's all-reduce level: the best plan's (free, six levels, until there is one)
        level = max((part.c.sync_us(ch.gpus) for ch in best), default=None)
        mode, idle = 0, 0  # the pass's level (MODES); passes in a row with nothing found
        name = MODES[mode]  # the pass's mode, or SECOND
        failed, lam = floor - 1, min(first, hi)  # ``failed``: the highest target that failed
        # the highest target whose MILP its time share cut (``Columns.cut``): unknown, not
        # failed: the search goes on above it, and comes back below once a plan comes
        unknown = failed
        if apart is None and found:  # the cut's best is a plan already: bisect below it,
            # at most COLUMN_STEP below (a bound cut short by the time is far below)
            lam = max((failed + hi + 1) // 2, int(hi * (1 - COLUMN_STEP)))
        tol = COLUMN_TOL if apart is None else CUT_TOL  # the packings' plans are the better
        top = hi  # the pass's highest target: below the best plan (above it in "own" mode)
        while True:
            known, best_us = len(seqs), hi  # a pass's progress: a column or a better plan
            if apart is None and (name, known, hi) in ended:
                top = failed  # the same pass again: skipped, a pass that found nothing
            while top - max(failed, unknown) > max(1.0, tol * top):
                if no_time():
                    break  # no time for another target (above)
                if met(lower, hi):
                    break
                cols.level = None if name == "free" else level
                cols.own = name == "own"
                began = time.perf_counter()
                # (deterministic mode: its MILP on a node budget)
                chains = cols.plan(lam, deadline, None if work is None else work.nodes)
                last_s = time.perf_counter() - began
                tried += 1
                plan = _plan(inst, chains) if chains else None
                if chains is None and cols.cut:
                    unknown = lam  # (at 1,024 GPUs 5.1009 s cut, 5.0833 s below it, #17)
                elif chains is None or plan is None or validate(inst, plan):
                    failed = lam
                else:
                    val = evaluate(inst, plan)
                    if val[0] * 1e6 <= hi:  # the best so far: its all-reduce is the level
                        level = max(part.c.sync_us(ch.gpus) for ch in chains)
                    found.append((val, chains))
                    hi = min(hi, round(val[0] * 1e6) - 1)
                    # a plan above the best (as "own" and SECOND may find): bisect below it
                    top = min(top, lam - 1, hi if name in ("best", "free") else lam - 1)
                    unknown = failed  # back below the targets cut (``top`` fell: it ends)
                # climb while nothing is found, then bisect between the failures and the best
                low = max(failed, unknown)
                lam = (low + top + 1) // 2 if found else int(low * (1 + COLUMN_STEP)) + 1
                lam = min(lam, top)
            if apart is not None or no_time():
                break
            if met(lower, hi):
                break  # the best plan meets the bound within the tolerance: nothing to gain
            ended.add((name, len(seqs), hi))
            progress = len(seqs) > known or hi < best_us
            if name == SECOND and hi >= best_us:
                # no better plan from the second start either: the cycle went round again
                # for its columns alone, and at 16 GPUs (the plan found in the first pass at
                # 1.5 s) that round took 3.5 of W7's 8 s and found nothing (#17)
                break
            idle = 0 if progress or name == SECOND else idle + 1
            # (each pass either adds one of finitely many sequences or lowers the best plan,
            # so the passes end even without a deadline)
            # time left: the packings again from the bound, with the columns gathered since
            # (a failed target proves nothing; it may hold with more columns), the next mode;
            # "own" also above the best plan (its plans may come out below their target);
            # once every mode found nothing, SECOND: only above the best plan
            if idle == len(MODES):
                name = SECOND
            else:
                mode = (mode + 1) % len(MODES)
                name = MODES[mode]
            failed = unknown = hi if name == SECOND else floor - 1
            top = int(hi * (1 + COLUMN_STEP)) if name in ("own", SECOND) else hi
            lam = (failed + top + 1) // 2
        if met(lower, hi) or no_time():
            break  # not the other cut either
    return [min(found, key=lambda x: x[0])[1]] if found else []


def met(lower: int | None, hi: int) -> bool:
    """The best plan (L1 ``hi + 1`` µs) is within COLUMN_TOL of the proven bound ``lower``: no
    plan W7 could find gains more than its own tolerance (#17)."""
    return lower is not None and hi + 1 - lower <= COLUMN_TOL * (hi + 1)
