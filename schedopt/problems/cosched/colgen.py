"""Column generation over groups (formulations/cosched.md, "Column-generation bound on L1").

:class:`Master` is the restricted master LP on HiGHS over groups that have a schedule;
:func:`.greedy.price` proposes groups of the relaxed space R with a negative reduced cost
(greedily: a heuristic), and :func:`check` — the sub-solve, run through an executor — builds
each one's explicit periodic schedule. :func:`generate` alternates them, then proves the
Farley bound of the last duals (:mod:`.farley`), valid over all of R whatever columns were
found.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from schedopt.backends.first_import import CPSAT, solver_in_time
from schedopt.backends.highs_quiet import quiet_highs
from schedopt.core.gates import first_import_deadline
from schedopt.core.stopping import Deadline
from schedopt.executor import Executor, Task

from .data import ModelData, aggregate_shares
from .farley import LEVELS, CaseState, Combos, Stack, farley_bound
from .greedy import Members, box_fits, boxes_of, price
from .group_exact import schedule_exact
from .heuristics import build
from .schedule import Planned, host_counts
from .shares import AGG_FLOOR, best_farley, could_raise, scaled_aggregate

if TYPE_CHECKING:
    pass

#: Seconds the exact scheduler may take on a group the heuristic one could not schedule.
EXACT_CHECK_S = 0.3
#: Greedy pricing alone while a round adds at least this many groups; then exact pricing too.
GREEDY_STALL = 8
#: Weight of the best bound's duals in the duals exact pricing uses (0: the master's own), from
#: SMOOTH_FROM_JOBS jobs; below, none (:func:`smoothing`).
SMOOTH, SMOOTH_FROM_JOBS = 0.5, 100
#: Cost of the artificial column that covers one job (keeps the restricted master feasible).
ARTIFICIAL = 1e7
#: Converged: a proven bound within this share of the master LP (which is at least z_R'),
#: so no round can raise the bound by more (the case models round π up to 1/10,000).
CONVERGED = 1e-4
#: Most times CASE_S a case model gets when rounds at the master's duals add nothing.
MAX_EFFORT = 16.0


@dataclass(frozen=True)
class Column:
    """A group that has an explicit periodic schedule (``planned``, with ``hosts``)."""

    members: Members
    hosts: tuple[int, ...]
    planned: Planned

    def cost(self, data: ModelData) -> float:
        return sum(n * data.cost[p] for p, n in enumerate(self.hosts))


# (no `threads` on the master: HiGHS keeps one thread pool per process and fails a run that
# asks for another size, as in model/emit_highs.py)


class Master:
    """``min Σ c_a λ_a``: every job covered once (rows 0..|J|-1, duals π), hosts per pool
    within the pool (next rows, duals y ≤ 0); one artificial column per job."""

    def __init__(self, data: ModelData):
        self.data = data
        self.n, self.np = len(data.jobs), len(data.pools)
        import highspy  # the solver is imported when first used (#16 item 11)

        h = self.h = quiet_highs()
        inf = highspy.kHighsInf
        lower = [1.0] * self.n + [-inf] * self.np
        upper = [1.0] * self.n + [float(x) for x in data.hosts]
        h.addRows(self.n + self.np, np.array(lower), np.array(upper), 0, [], [], [])
        for j in range(self.n):
            h.addCol(ARTIFICIAL, 0.0, inf, 1, np.array([j], np.int32), np.array([1.0]))
        self.columns: list[Column] = []
        self.keys: set[tuple] = set()

    @classmethod
    def of(cls, data: ModelData, columns: Iterable[Column]) -> Master:
        """The master over ``columns`` (each once, in their order)."""
        master = cls(data)
        for col in columns:
            master.add(col)
        return master

    @staticmethod
    def key(col: Column) -> tuple:
        """What makes two columns the same: members, their options and the hosts."""
        return (tuple(sorted((j, tuple(o.index for o in c)) for j, c in col.members)), col.hosts)

    def add(self, col: Column) -> bool:
        key = self.key(col)
        if key in self.keys:
            return False
        self.keys.add(key)
        rows = [j for j, _ in col.members] + [self.n + p for p, n in enumerate(col.hosts) if n]
        vals = [1.0] * len(col.members) + [float(n) for n in col.hosts if n]
        self.h.addCol(
            col.cost(self.data),
            0.0,
            self.h.getInfinity(),
            len(rows),
            np.array(rows, np.int32),
            np.array(vals),
        )
        self.columns.append(col)
        return True

    def solve(self, seconds: float) -> tuple[float, np.ndarray, np.ndarray] | None:
        """The LP's value and duals (π per job, y per pool), None if not solved to optimality."""
        self.h.setOptionValue("time_limit", max(0.01, seconds))
        self.h.run()
        import highspy

        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        dual = np.asarray(self.h.getSolution().row_dual)
        return self.h.getInfo().objective_function_value, dual[: self.n], dual[self.n :]


def check(
    data: ModelData,
    members: Members,
    deadline: Deadline | None = None,
    deterministic: bool = False,
) -> Column | None:
    """The sub-solve: an explicit periodic schedule for the members (the heuristics'
    scheduler, fewest hosts; else the exact one of :mod:`.group_exact` for up to
    :data:`EXACT_CHECK_S`, deterministic seconds if ``deterministic``), dropping the
    last-added member until one is found; within ``deadline`` (the inline executor does not
    interrupt a task)."""
    group = list(members)
    while group:
        if deadline is not None and deadline.expired():
            return None
        built = build(data, [(data.jobs[j], opts) for j, opts in group], deadline)
        if built is not None:
            return Column(tuple(group), tuple(built.hosts), built.planned)
        chosen = [(data.jobs[j], opts) for j, opts in group]
        hosts = host_counts(data, chosen)
        cap = math.inf if deadline is None else deadline.remaining()
        seconds = cap if deterministic else min(EXACT_CHECK_S, cap)
        if (
            seconds > 0.02
            and hosts is not None
            and all(n <= data.hosts[p] for p, n in enumerate(hosts))
            # CP-SAT's first import gated by the whole check's deadline, not the 0.3 s share
            # (deterministic: not gated); refused, the group is left as the heuristic left it
            and solver_in_time(CPSAT, first_import_deadline(deadline, deterministic))
        ):
            work = EXACT_CHECK_S if deterministic else None
            exact = schedule_exact(chosen, min(seconds, 3600.0), 0, work)
            if exact:
                return Column(tuple(group), tuple(hosts), exact)
        group.pop()
    return None


#: Check tasks per case worker in a round, when the checks run on the case workers: each task
#: a share of the round's groups (the data pickled once a task, 64 kB at 4,096 × 200), a few a
#: worker so one slow group (the exact scheduler's 0.3 s) does not hold the others back.
CHECK_BATCHES = 3
#: Seconds a batch of checks on a worker ends before the round's deadline (then it is killed,
#: and the groups it checked are lost with it).
CHECK_MARGIN_S = 0.05


def check_batch(
    data: ModelData, groups: list[Members], seconds: float, deterministic: bool = False
) -> list[Column | None]:
    """:func:`check` of each group in turn, all within ``seconds`` (counted on the worker)."""
    dl = Deadline.after(seconds)
    return [check(data, m, dl, deterministic) for m in groups]


def checked(
    data: ModelData,
    proposed: list[Members],
    dl: Deadline,
    deterministic: bool,
    executor: Executor,
    cases: Executor | None = None,
) -> list[Column]:
    """The columns the schedule checks of ``proposed`` build, in the proposals' order whatever
    order the tasks finish in (a reproducible master). On ``cases``' workers when it has more
    than ``executor`` (the case workers, idle between exact pricing's case models: at 4,096 ×
    200 the checks took 14 of a minute's 45 s of rounds in the solving process, #17), in
    :data:`CHECK_BATCHES` tasks a worker; else one task a group on ``executor``."""
    out: list[Column | None] = [None] * len(proposed)
    if cases is not None and cases.workers > executor.workers:
        k = min(len(proposed), CHECK_BATCHES * cases.workers)
        # made as a worker frees up, so each batch's seconds are those left when it starts
        batches = (
            Task(
                str(b),
                check_batch,
                (data, proposed[b::k], dl.remaining() - CHECK_MARGIN_S, deterministic),
            )
            for b in range(k)
        )
        for res in cases.run(batches, deadline=dl):
            if res.ok:
                b = int(res.key)
                out[b::k] = res.value
    else:
        tasks = [Task(str(i), check, (data, m, dl, deterministic)) for i, m in enumerate(proposed)]
        for res in executor.run(tasks, deadline=dl):
            if res.ok:
                out[int(res.key)] = res.value
    return [c for c in out if c is not None]


@dataclass
class Generated:
    """What column generation found, and the bound it proved."""

    bound: float | None  # the Farley bound of the last duals, $/h (None: none in time)
    lp: float | None  # the last restricted master's value
    rounds: int
    columns: list[Column] = field(default_factory=list)
    #: per round: the master LP's value, the round's exact bound (None: a greedy round or
    #: none in time) and the columns after it
    trace: list[tuple[float, float | None, int]] = field(default_factory=list)
    #: the scaled aggregate bound, if it was tried and ended in time
    scaled: float | None = None
    #: the best bound of the rounds and of the last duals, without the scaled aggregate one
    own: float | None = None


def smoothing(data: ModelData) -> float:
    """Wentges' α for exact pricing (formulation, "Column generation with exact pricing"):
    :data:`SMOOTH` from :data:`SMOOTH_FROM_JOBS` jobs, where the rounds do not converge in the
    limit (4,096 GPUs x 200 jobs); 0 below, where they do and the smoothing slows them: at 656
    GPUs x 40 jobs in deterministic mode, to convergence, 26 rounds and 252 case models at ½
    against 22 and 184 at 0 (#17)."""
    return SMOOTH if len(data.jobs) >= SMOOTH_FROM_JOBS else 0.0


def _groups(master: Master) -> list[tuple[float, list[int]]]:
    """The master's columns as (cost, member jobs): scheduled groups, so groups of R'."""
    return [(c.cost(master.data), [j for j, _ in c.members]) for c in master.columns]


def levels_of(data: ModelData) -> list[int]:
    slos = sorted({j.slo for j in data.jobs})
    if len(slos) <= LEVELS:
        return slos
    return sorted({slos[round(i * (len(slos) - 1) / (LEVELS - 1))] for i in range(LEVELS)})


def generate(
    data: ModelData,
    start: list[Column],
    deadline: Deadline,
    executor: Executor,
    bound_deadline: Deadline,
    rounds: int | None = None,
    deterministic: bool = False,
    cases: Executor | None = None,
    incoming: Callable[[], list[Column]] | None = None,
) -> Generated:
    """Rounds of restricted master LP and pricing (columns checked through ``executor``)
    until converged or at a fixed point (formulation, "The stop rule"), ``rounds`` rounds or
    ``deadline``; per round ``trace`` (LP, exact bound, columns); then the Farley bound
    of the last duals, by ``bound_deadline``. ``deterministic``: CP-SAT stops on its
    deterministic time, so with a round budget and far deadlines a run is reproducible. Each
    round prices greedily and proves the Farley bound of its duals over R', whose exact case
    bounds (CP-SAT, :mod:`.pricing`) also find groups: the best bound of any round is valid,
    and when exact pricing finds no group it equals the LP. ``cases``: an executor whose
    workers run exact pricing's case models (:mod:`.refine`). ``incoming``: columns made
    elsewhere meanwhile (the packing plan's groups, made on a worker), taken before each
    round."""
    master = Master.of(data, start)
    combos = [Combos(data, j) for j in data.jobs]
    levels = levels_of(data)
    boxes = boxes_of(data, combos)
    stack = Stack(combos, len(data.pools))
    fits = box_fits(data, stack, boxes)
    state = CaseState(deterministic)
    done = 0
    solved = None
    best: float | None = None
    exact = False  # greedy pricing first; exact case bounds once it finds few new groups
    center: tuple[np.ndarray, np.ndarray] | None = None  # the duals of the best bound
    alpha = smooth = smoothing(data)
    shares = aggregate_shares(data)
    floor = None if shares is None else AGG_FLOOR * sum(shares)
    last = 0.0  # seconds the last round took
    trace: list[tuple[float, float | None, int]] = []
    scaled: float | None = None  # the scaled aggregate bound (None: not tried, or no time)
    tried = False
    while rounds is None or done < rounds:
        # Once exact rounds prove more than the scaled aggregate bound could add, they are the
        # bound stage itself: they run on into its time (its last duals' bound is one more).
        far = exact and best is not None and (floor is None or best >= floor)
        dl = bound_deadline if far else deadline
        if far and not tried and rounds is None and deadline.expired() and solved is not None:
            # The rounds enter the bound stage's time: the scaled aggregate bound first, if it
            # could be higher (under load the rounds' 3,104-3,139 $/h stopped it where it
            # gave 3,229-3,248 at 4,096 x 200, #17), with the case models on the workers.
            tried = True
            if could_raise(data, best, solved[0], _groups(master)):
                scaled = scaled_aggregate(data, bound_deadline, combos, state.copy(), cases)
        if dl.remaining() <= (last if exact and rounds is None else 0.0):
            break  # no time for a round like the last (it would eat the bound stage's)
        began = time.perf_counter()
        done += 1
        for col in incoming() if incoming is not None else ():
            master.add(col)
        solved = master.solve(dl.remaining())
        if solved is None:
            break
        lp, pi, y = solved
        b = None
        proposed = price(data, combos, pi, y, levels, boxes, dl, stack, fits)
        if exact:
            # Exact pricing at duals smoothed towards those of the best bound (Wentges):
            # fewer rounds; any duals give a valid bound.
            ps, ys = (
                (pi, y)
                if center is None
                else (
                    smooth * center[0] + (1 - smooth) * pi,
                    smooth * center[1] + (1 - smooth) * y,
                )
            )
            found: list[tuple[tuple[int, int], ...]] = []
            b = farley_bound(data, ps, ys, dl, dl, found, combos, state, cases)
            if b is not None and (best is None or b > best):
                best, center = b, (ps, ys)
            proposed += [tuple((j, combos[j].options[c]) for j, c in f) for f in found]
        added = 0
        for col in checked(data, proposed, dl, deterministic, executor, cases):
            added += master.add(col)
        last = time.perf_counter() - began
        trace.append((lp, b, len(master.columns)))
        if best is not None and best >= (1 - CONVERGED) * lp:
            break  # converged: no column of R' has a reduced cost below the tolerance
        if added < GREEDY_STALL:
            if not added and exact:
                if center is not None and smooth > 0:
                    smooth = 0.0  # a mispricing: the next round prices at the master's duals
                    continue
                # Exact pricing at the master's own duals found no new column. Stop only if
                # every case was decided (θ exact over R' at these duals: a round more would
                # prove the same); else the same duals again, the open cases with twice the
                # time (formulation, "The stop rule").
                if b is not None and not state.undecided:
                    break
                state.effort = min(MAX_EFFORT, 2 * state.effort)
                continue
            exact = True
        smooth = alpha
        state.effort = 1.0
    if shares is not None and floor is not None and (best is None or best < floor):
        # The rounds' bounds are not above the aggregate one (at 4,096 GPUs x 200 jobs greedy
        # pricing adds 8 or more groups nearly every round for the whole minute: their duals
        # give 2,524-2,593 against 2,797, #17); the aggregate shares scaled by Farley's θ over
        # R' give at least it (2,888; formulation, "Farley at the aggregate shares").
        tried = True
        scaled = scaled_aggregate(data, bound_deadline, combos, state, cases)
    rounds_best = best
    # Any duals give a valid Farley bound; those of the final master give the strongest.
    solved = master.solve(bound_deadline.remaining()) or solved
    if solved is None:
        best = max((b for b in (rounds_best, scaled) if b is not None), default=None)
        return Generated(best, None, done, master.columns, trace, scaled, rounds_best)
    lp, pi, y = solved
    for b in (
        farley_bound(data, pi, y, bound_deadline, bound_deadline, None, combos, state, cases),
        best_farley(data, pi, y, bound_deadline),
    ):
        if b is not None and (rounds_best is None or b > rounds_best):
            rounds_best = b
    if not tried and rounds is None and could_raise(data, rounds_best, lp, _groups(master)):
        # the bound stage's time left after the last duals' bounds (rounds stopped early)
        scaled = scaled_aggregate(data, bound_deadline, combos, state, cases)
    best = max((b for b in (rounds_best, scaled) if b is not None), default=None)
    return Generated(best, lp, done, master.columns, trace, scaled, rounds_best)
