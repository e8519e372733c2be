"""``decomp:physical``: the template plan widened to the physical plan space (formulations/
reconfig.md, W1–W7; #17 item 3), with the stage-position bound (Q7–Q9) beside it.

The template space gives every pipeline one TP degree and at most one slow group, so the
GPUs of damaged hosts (a failed GPU leaves 7: no group of 8) and most slow GPUs stay idle.
Here the GPUs a plan leaves idle are packed, host by host, into the largest allowed groups
(slow GPUs in the groups as they are), chained into new pipelines with TP differing between
stages and the layers split by each stage's own speed and memory at its position, and added
where they lower L1; the micro-batches are then handed out again by min-max. Whole plans
also come from pipeline columns priced by the bound's dynamic program (W7, ``columns.py``),
at targets climbing from the bound. Every plan is checked by the validator (V1–V8 unchanged).

W6's designs, one per target pipe time and way of cutting the hosts, are independent
sub-solves: :class:`~schedopt.executor.Task` objects (:func:`design_plan`, picklable input) run
on the executor ``params`` names (``schedopt.model.decompose.executor_choice``; inline by
default, in the order a sequential run takes them), each ending by the caller's deadline.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from schedopt.core.stopping import Deadline
from schedopt.executor import Executor, InlineExecutor, Task
from schedopt.model.decompose import JOIN_RESERVE_S, Budget, budget, run_parts

from .budgets import Work, phase_deadline
from .chains import _plan, idle_groups
from .design import Chain, Designer, Partitioner
from .instance import ReconfigInstance
from .solution import ReconfigSolution
from .validate import evaluate, validate

if TYPE_CHECKING:
    from .price_bound import Gathered

#: W5 tries from 1 to this many pipelines dealt from scratch.
MAX_DEALT = 64


def _chains_of(part: Partitioner, sol: ReconfigSolution) -> list[Chain]:
    """The given plan's pipelines, each with its layer split re-chosen for its own groups."""
    out = []
    for pp in sol.pipelines:
        ch = part.chain([s.gpus for s in pp.stages])
        if ch is None:  # cannot happen for a valid plan; keep its own split then
            sizes = tuple(s.layer_end - s.layer_start for s in pp.stages)
            ch = Chain(tuple(s.gpus for s in pp.stages), sizes, 0)
        out.append(ch)
    return out


def new_chains(
    part: Partitioner,
    pool: list[tuple[str, ...]],
    pipe_us: int,
    deadline: Deadline | None,
    order: int = 0,
) -> list[Chain]:
    """W3: pipelines from the pool, largest groups first (they hold the most in flight), each
    of the depth with the most micro-batches per GPU within ``pipe_us`` (``order`` 1: the
    fastest groups first, so slow groups gather in pipelines of their own)."""
    inst = part.inst
    if order:
        pool = sorted(pool, key=lambda g: (-part.kappa(g), -len(g)))
    else:
        pool = sorted(pool, key=lambda g: (-len(g), -part.kappa(g)))
    out: list[Chain] = []
    while pool and (deadline is None or not deadline.expired()):
        best: tuple[float, int, Chain] | None = None
        for k in range(1, min(inst.max_stages, len(pool), part.L) + 1):
            ch = part.chain(pool[:k])
            if ch is None:
                continue
            m = pipe_us // ch.tau - k + 1
            if m >= 1 and (best is None or m / ch.gpus > best[0]):
                best = (m / ch.gpus, k, ch)
        if best is None:
            break
        out.append(best[2])
        pool = pool[best[1] :]
    return out


def widen(
    inst: ReconfigInstance,
    sol: ReconfigSolution,
    deadline: Deadline | None = None,
    executor: Executor | None = None,
    counts: dict[str, float | str] | None = None,
    lower: int | None = None,
    column_share: float | None = None,
    gathered: Gathered | None = None,
    keep_s: float = 0.0,
    work: Work | None = None,
) -> ReconfigSolution:
    """W1–W7: the plan, re-split per stage (W2), with pipelines from its idle GPUs added while
    they lower L1 (W3, W4), from scratch too (W5), designed (W6) and from priced columns (W7,
    targets from ``lower``, a proven bound in µs, if known; ``column_share`` of the time,
    ``COLUMN_SHARE`` by default); the best valid plan of these, never worse than ``sol`` (the
    validator's own evaluation decides). W6's designs run on ``executor`` (default: in this
    process); what became of them goes into ``counts`` (``designs_solved``,
    ``designs_failed``). ``gathered``: the bound's columns and prices; with ``lower`` and
    time for it (``_branch_fits``), W8 first (``branch.py``). ``keep_s``: what follows W7
    (W6, W3-W5) ends that much earlier than ``deadline`` (W7's share is of ``deadline``).
    ``work`` (deterministic mode): budgets of work in place of the shares of ``deadline``
    and of the times measured here (``budgets.py``); ``deadline`` is then the runaway cap."""
    part = Partitioner(inst)
    best, best_val = sol, evaluate(inst, sol)
    base = _chains_of(part, sol)

    def consider(chains: list[Chain]) -> None:
        nonlocal best, best_val
        cand = _plan(inst, chains)
        if cand is None or validate(inst, cand):
            return
        val = evaluate(inst, cand)
        if val < best_val:
            best, best_val = cand, val

    started = time.perf_counter()
    consider(base)
    consider_s = time.perf_counter() - started  # one plan built and judged, at this load
    # a design ends as this did (a plan built, validated, evaluated), then sends it back: kept
    # back from its budget, twice over, so that a pool does not kill it with its plan made
    reserve_s = JOIN_RESERVE_S + 2 * consider_s
    # what follows W7 builds plans by ``tail``, one plan's judging (and ``keep_s``) before
    # ``deadline``, and judges one only with that much left: beside a CPU burner at a quarter
    # of a core, the starts' last plans were judged after ``deadline`` had passed and the 10 s
    # row at 1,024 GPUs ended 0.15-0.40 s past its limit (RESULTS.md, #17)
    # (deterministic mode, ``work``: ``deadline`` itself, the runaway cap)
    tail = deadline
    if deadline is not None and work is None:
        tail = deadline.earlier(consider_s + keep_s)
    counts = {} if counts is None else counts
    upper = round(best_val[0] * 1e6)  # W7's search as without W8 (its landing moves with its start)
    if (
        gathered is not None
        and gathered.sd is not None
        and lower is not None
        and _branch_fits(inst, _seconds_left(deadline, work), gathered)
    ):
        from .branch import branched  # W8: HiGHS, on first use

        w8 = phase_deadline(deadline, BRANCH_SHARE, work is not None)
        t8 = time.perf_counter()
        nodes = None if work is None else work.nodes
        sd, seqs, prices = gathered.sd, gathered.pool, gathered.prices
        chains = branched(sd, part, seqs, prices, lower, w8, nodes=nodes)
        if work is None:  # (a time: not in a deterministic run's stats)
            counts["branch_s"] = round(time.perf_counter() - t8, 3)
        before = best_val
        consider(chains or [])
        if best_val < before:
            counts["branch_plan_s"] = best_val[0]
    share = COLUMN_SHARE if column_share is None else column_share
    own = phase_deadline(deadline, share, work is not None)
    from .targets import columned as search  # W7: HiGHS, on first use
    from .targets import met

    # W7 only where it can gain: not once a plan (W8's) meets the bound within its tolerance
    gain = not met(lower, round(best_val[0] * 1e6) - 1)
    columned = search(inst, part, upper, own, lower, base, tail, work) if gain else []
    for chains in columned:  # W7's best
        consider(chains)
    upper = round(best_val[0] * 1e6)
    if executor is None:
        with InlineExecutor() as inline:
            designed = _designed(inst, upper, tail, inline, counts, reserve_s, work)
    else:
        designed = _designed(inst, upper, tail, executor, counts, reserve_s, work)
    for start in (*columned, *designed, base, []):  # W7's and W6's plans: the best starts
        chains = list(start)
        for order in (0, 1, 0):  # W3 by size then by speed, W4 again on what is left
            if tail is not None and tail.expired():
                break
            taken = {g for ch in chains for grp in ch.groups for g in grp}
            current = _plan(inst, chains) if chains else None
            ref = round(evaluate(inst, current)[0] * 1e6) if current else round(best_val[0] * 1e6)
            extra = new_chains(part, idle_groups(inst, taken), ref, tail, order)
            chains = _add_while_better(inst, chains, extra, tail)
        if chains and (tail is None or not tail.expired()):
            consider(chains)
    pool = idle_groups(inst, set())
    for k in range(1, min(inst.micro_batches, len(pool), MAX_DEALT) + 1):  # W5: from scratch
        if tail is not None and tail.expired():
            break
        dealt = deal(part, pool, k)
        if dealt:
            consider(dealt)
    return best


#: W7's share of the widening's time (the first thing it runs, after W8). At 1,024 GPUs its
#: packings' MILPs near 5.08-5.10 s need 0.3-0.6 CPU s each; with 0.8 one cut by its share
#: left 1 run in 4-5 at 1.17% where 0.84% (or 0.78%) lies below, and W6, after it, never made
#: the answer there (RESULTS.md, #17).
COLUMN_SHARE = 0.9
#: W8 (the bound's columns, price-and-branch) runs with at least this much left for widening
#: (at 256 GPUs it took 13 s at load 5: pricing every row 7 s, the integer master 6 s), and
#: takes at most this share of it (RESULTS.md, #17).
BRANCH_MIN_S = 15.0
BRANCH_SHARE = 0.6
#: With less than BRANCH_MIN_S left, W8 still runs with BRANCH_SHORT_S left on up to
#: BRANCH_SHORT_GPUS GPUs once the bound has priced BRANCH_SHORT_ROUNDS rounds: at 256 GPUs,
#: from 3-4 rounds it takes 1.5-2 s (load 1.3-2.5) and finds 12.416 s; from 1-2 rounds (the
#: bound at 12.222 s) its MIP takes 2 s and its plan is 12.70-12.79 s, and W7 loses the time;
#: at 1,024 GPUs its plan (5.09-5.11 s) loses to W7's 5.078 s (RESULTS.md, #17).
BRANCH_SHORT_S = 2.5
BRANCH_SHORT_GPUS = 512
BRANCH_SHORT_ROUNDS = 3


def _seconds_left(deadline: Deadline | None, work: Work | None) -> float | None:
    """The seconds widening has left for W8's rule: ``deadline``'s (None: no deadline), or in
    deterministic mode those the limit deems it (``Work.widen_s``)."""
    if work is not None:
        return work.widen_s
    return None if deadline is None else deadline.remaining()


def _branch_fits(inst: ReconfigInstance, left: float | None, gathered: Gathered) -> bool:
    """W8 runs with no deadline (``left`` None), with BRANCH_MIN_S left, or with
    BRANCH_SHORT_S left on up to BRANCH_SHORT_GPUS GPUs after BRANCH_SHORT_ROUNDS of the
    bound's prices."""
    if not gathered.prices:
        return False
    if left is None or left >= BRANCH_MIN_S:
        return True
    small = inst.cluster.num_gpus <= BRANCH_SHORT_GPUS
    rounds = len(gathered.prices) >= BRANCH_SHORT_ROUNDS
    return small and rounds and left >= BRANCH_SHORT_S


#: W6's target pipe times, as fractions of the start's L1 (then a finer pass around the best).
#: From 0.8 outwards: the best at 256 and 1,024 GPUs (Llama-2 70B, 16 + 16), so a short
#: limit tries it first.
TARGETS = (0.8, 0.85, 0.75, 0.9, 0.7, 0.95, 0.65, 0.6)


def design_plan(
    inst: ReconfigInstance, apart: bool, target_us: int, budget: Budget
) -> tuple[tuple[float, ...], list[Chain]] | None:
    """W6 for one target pipe time (a task): the pipelines designed from every surviving GPU
    (cut ``apart`` or not, W1) as a valid plan's (value, chains), or None. A design cut short
    by the budget keeps the pipelines it has."""
    part = Partitioner(inst)
    designer = Designer(part, idle_groups(inst, set(), apart))
    chains = [part.chain(gs) for gs in designer.plan(target_us, budget.deadline())]
    ok = [ch for ch in chains if ch is not None]
    plan = _plan(inst, ok) if ok else None
    if plan is None or validate(inst, plan):
        return None
    return evaluate(inst, plan), ok


def _designed(
    inst: ReconfigInstance,
    upper: int,
    deadline: Deadline | None,
    pool: Executor,
    counts: dict[str, float | str],
    reserve_s: float,
    work: Work | None = None,
) -> list[list[Chain]]:
    """W6 (design.py): pipelines designed for target pipe times below ``upper``, from every
    surviving GPU (cut both ways, W1), as tasks on ``pool``: the targets of TARGETS, then a
    finer pass around the best; the best few plans, for W3-W4 to add to. ``work``
    (deterministic mode): the first ``work.designs`` targets, no finer pass."""
    found: list[tuple[tuple[float, ...], int, float, list[Chain]]] = []
    fractions = list(TARGETS) if work is None else list(TARGETS[: work.designs])
    for rnd in range(1 if work else 2):
        ways = [(apart, f) for apart in (False, True) for f in fractions]
        got = _run_designs(inst, upper, ways, deadline, pool, len(found), counts, reserve_s)
        found.extend(got)
        if not found or rnd or (deadline is not None and deadline.expired()):
            break
        top = min(found, key=lambda x: (x[0], x[1]))[2]
        fractions = [top - 0.03, top - 0.015, top + 0.015, top + 0.03]
    found.sort(key=lambda x: (x[0], x[1]))  # ties: in the order a sequential run made them
    return [chains for _, _, _, chains in found[:3]]


def _run_designs(
    inst: ReconfigInstance,
    upper: int,
    ways: list[tuple[bool, float]],
    deadline: Deadline | None,
    pool: Executor,
    first: int,
    counts: dict[str, float | str],
    reserve_s: float,
) -> list[tuple[tuple[float, ...], int, float, list[Chain]]]:
    """One round of W6's designs on ``pool``, each task ending by ``deadline`` less
    ``reserve_s`` (making its plan and sending it back); (value, order, fraction, chains) of
    the valid plans."""

    def tasks() -> Iterator[Task]:
        for k, (apart, f) in enumerate(ways):
            if deadline is None:
                given = Budget(math.inf)
            else:  # the whole time left: a design is cut short only by the deadline
                given = budget(deadline, pool, deadline.remaining() - reserve_s, reserve_s)
            yield Task(f"design{first + k}", design_plan, (inst, apart, int(upper * f), given))

    answers, stats = run_parts(pool, tasks(), deadline)
    solved = counts.get("designs_solved", 0.0)
    counts["designs_solved"] = float(solved) + float(stats["parts_solved"])
    if "parts_failed" in stats:
        counts["designs_failed"] = stats["parts_failed"]
    out = []
    for k, (_, f) in enumerate(ways):
        got = answers.get(f"design{first + k}")
        if got is not None:
            out.append((got[0], first + k, f, got[1]))
    return out


def deal(part: Partitioner, pool: list[tuple[str, ...]], k: int) -> list[Chain]:
    """W5: the groups dealt to ``k`` pipelines, largest first, each to the pipeline with the
    fewest GPUs that has a stage left (``max_stages``); each pipeline's groups then in stage
    order, largest first, and split (W2). Pipelines that hold no split are left out."""
    depth = min(part.inst.max_stages, part.L)
    got: list[list[tuple[str, ...]]] = [[] for _ in range(k)]
    heap = [(0, i) for i in range(k)]  # (GPUs, pipeline) of those with a stage left
    for g in sorted(pool, key=lambda g: (-len(g), -part.kappa(g))):
        if not heap:
            break
        gpus, i = heapq.heappop(heap)
        got[i].append(g)
        if len(got[i]) < depth:
            heapq.heappush(heap, (gpus + len(g), i))
    out = []
    for groups in got:
        if groups:
            ch = part.chain(sorted(groups, key=lambda g: (-len(g), -part.kappa(g))))
            if ch is not None:
                out.append(ch)
    return out


def _add_while_better(
    inst: ReconfigInstance, chains: list[Chain], extra: list[Chain], deadline: Deadline | None
) -> list[Chain]:
    """W4: each new pipeline, most micro-batches per GPU first, kept when L1 falls with it."""
    chains = list(chains)
    current = _plan(inst, chains) if chains else None
    value = None if current is None else evaluate(inst, current)
    for ch in sorted(extra, key=lambda ch: ch.tau * ch.gpus):
        if deadline is not None and deadline.expired():
            break
        trial = _plan(inst, [*chains, ch])
        if trial is None or validate(inst, trial):
            continue
        got = evaluate(inst, trial)
        if value is None or got[0] < value[0]:
            chains.append(ch)
            value = got
    return chains
