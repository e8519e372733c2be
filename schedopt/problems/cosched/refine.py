"""The lazy refinement of Farley's ``θ`` over the cases (formulations/cosched.md, "Which cases,
lazily" and "The cases on worker processes"), in this process or with the case models on an
executor's workers.

Every case's key is a lower bound on its ratio ``c(h) / (U + y·h)``; keys only rise. The cheap
stages (the surrogate knapsacks, an earlier exact bound moved by the duals) run here; the
CP-SAT case models (:func:`.pricing.case_bound`) are the tasks. With a pool of workers,
several case models run at once: each is a case of least key when it is handed out, stopped
by the least exact ratio known then (``enough``). ``θ`` is the least of the exact ratios
found and of the keys of every case not finished (left on the heap, or whose task ran out of
time or failed): each is a lower bound on that case's ratio, so ``θ`` is valid on every path.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from schedopt.core.gates import first_import_deadline
from schedopt.core.stopping import Deadline
from schedopt.executor import Executor, Task

if TYPE_CHECKING:
    from .data import ModelData


#: Seconds the refinement must have left to run the finer programme on the case that sets θ
#: (about 0.2-0.5 CPU s a case at 4,096 × 200, #17).
FINE_MARGIN_S = 0.5

#: Cases handed out beyond the free workers (``Executor.run``'s ``ahead``): the next case is
#: made (its cheap stages here) while the workers run, and a freed worker starts it before this
#: process reads the result (``take``, maybe the programme, 0.2-0.5 CPU s a case): at 4,096 ×
#: 200 the workers sat idle 31% of the exact rounds' dispatch time without it (#17). A case
#: handed out one result earlier stops at the ``enough`` known then (more work, θ as valid).
AHEAD = 1


@dataclass
class CaseState:
    """What the exact case bounds keep from one call to the next, and how they stop:
    ``hints``, each case's last group found by CP-SAT, keyed by (level, hosts), the next
    call's starting point; ``deterministic``, CP-SAT stops on its deterministic time
    (``farley.CASE_S`` deterministic seconds) instead of the wall clock, so a run is
    reproducible (SolveOptions.deterministic)."""

    deterministic: bool = False
    hints: dict[tuple[int, tuple[int, ...]], list[tuple[int, int]]] = field(default_factory=dict)
    #: each case's last exact bound and the duals it was proven at: ``U`` bounds ``Σ_S π_old``
    #: over every group ``S`` of the case, so ``U + Σ max(0, π − π_old)`` bounds ``Σ_S π``
    proven: dict[tuple[int, tuple[int, ...]], tuple[np.ndarray, float]] = field(
        default_factory=dict
    )
    #: the case models' time is ``case_s`` times this (column generation doubles it when a
    #: round at the master's duals added nothing with cases left open, #17)
    effort: float = 1.0
    #: cases the last refinement left open: CP-SAT stopped by its time, a key left on the
    #: heap at the deadline, a task that did not come back (0: θ is exact over R')
    undecided: int = 0

    def copy(self) -> CaseState:
        """A state of its own for a bound aside from the rounds (its hints and proven bounds
        start as these; what it finds does not change these)."""
        return CaseState(self.deterministic, dict(self.hints), dict(self.proven), self.effort)


@dataclass(frozen=True)
class _Case:
    """A case (level, hosts) and its least ratio ``c(h) / (Σ π + y·h)`` (before any U)."""

    ratio: float
    level: int
    h: tuple[int, ...]
    cost: float
    yh: float
    items: np.ndarray  # job indices
    ok: np.ndarray  # (items, K) admissible combinations


Surrogate = Callable[[np.ndarray, np.ndarray, int, tuple[int, ...], bool], float]


def parallel(executor: Executor | None, state: CaseState | None) -> bool:
    """The case models go to ``executor``'s workers: it has two or more and the run is not
    deterministic (the order results come back in would change the groups found)."""
    det = state is not None and state.deterministic
    return executor is not None and executor.workers > 1 and not det


def refine(
    data: ModelData,
    pi: np.ndarray,
    stack: Any,  # farley.Stack (its load, mem and chain arrays)
    slo: np.ndarray,
    factor: np.ndarray,
    switch: np.ndarray,
    cases: list[_Case],
    surrogate: Surrogate,
    exact: Deadline,
    found: list[tuple[tuple[int, int], ...]] | None,
    state: CaseState | None,
    case_s: float,
    executor: Executor | None = None,
) -> float:
    """θ over the cases, best first with lazy ratios: a case's key is a lower bound on its
    ratio — first ``c(h) / (Σ π + y·h)``, then with the surrogate U by Dantzig's bounds, then by
    the knapsacks themselves, then by the case's exact bound of an earlier call moved by the
    duals' rises (``state``), then with CP-SAT's exact
    bound (:func:`.pricing.case_bound`); keys only rise. The least key popped with its exact
    ratio while no other key is smaller is θ; stopped early, θ = the least key left, a lower
    bound on every case's ratio, so valid whenever the refinement stops. CP-SAT stops once its
    bound shows the case's ratio is at least the least exact one so far (``Σ π ≤ c(h)/θ − y·h``:
    the case cannot lower θ), and starts from the case's group of the last call (``state``),
    for ``case_s`` seconds (deterministic seconds in deterministic mode). With
    :func:`parallel` ``executor``, the CP-SAT case models run on its workers (module
    docstring)."""
    from .case_dp import CELLS, FINE_CELLS
    from .pricing import CaseBound, case_bound, open_bound, with_programme

    det = state is not None and state.deterministic
    if state is not None:
        case_s *= state.effort
    heap = [(c.ratio, i, 0) for i, c in enumerate(cases)]
    heapq.heapify(heap)
    best = [1.0]  # the least ratio of the cases taken, by CP-SAT's bounds (their ``enough``)
    least = [1.0]  # the same with the two-pool programme's bound on open cases (θ's)
    waiting: dict[str, float] = {}  # a case handed out (its index) -> its key
    ratios: dict[int, float] = {}  # each case taken: its ratio's lower bound (θ's)
    gots: dict[int, CaseBound] = {}  # each case taken: its bounds
    open_: set[int] = set()  # the cases CP-SAT left open
    runs: dict[int, int] = {}  # the programmes run on a case: 1 at CELLS, 2 at FINE_CELLS too

    def programme(i: int) -> tuple[Any, Any, Any, Any, Any, Any, Any, Any, int, Any]:
        """The case's arrays in :func:`.pricing.open_bound`'s order."""
        case = cases[i]
        its = case.items
        load = stack.load[its]
        duration = load - np.where(load > 0, switch[its][:, None, None], 0)
        mem, chain = stack.mem[its], stack.chain[its]
        return pi, its, case.ok, duration, load, mem, chain, slo, case.level, switch

    def task(i: int) -> Task:
        case = cases[i]
        pi_, its, ok, duration, load, mem, chain = programme(i)[:7]
        args = (
            pi_,
            its,
            ok,
            duration,
            load,
            mem,
            chain,
            slo,
            factor,
            switch,
            case.level,
            np.array(data.memory_mib) * np.array(case.h),
            exact.remaining() if det else min(case_s, exact.remaining()),
            case.cost / best[0] - case.yh,
            state.hints.get((case.level, case.h), ()) if state is not None else (),
            case_s if det else None,
            # CP-SAT's first import gated by the refinement's end
            first_import_deadline(exact, det),
        )
        return Task(str(i), case_bound, args)

    bar: list[float | None] = [None]  # the cases taken are below it (None: ``best``'s)

    def handed() -> Iterator[Task]:
        """The cheap stages here; each case that needs CP-SAT, as a task."""
        while heap and heap[0][0] < (best[0] if bar[0] is None else bar[0]):
            if exact.expired():
                break
            key, i, stage = heapq.heappop(heap)
            case = cases[i]
            if stage < 2:  # the surrogate knapsacks: Dantzig's bounds (0), then exact (1)
                denom = surrogate(case.items, case.ok, case.level, case.h, stage == 0) + case.yh
                if denom > 1e-12:
                    heapq.heappush(heap, (max(key, case.cost / denom), i, stage + 1))
                continue
            before = None if state is None else state.proven.get((case.level, case.h))
            if stage == 2 and before is not None:  # the last exact bound, moved by the duals
                rise = float(np.maximum(pi[case.items] - before[0][case.items], 0.0).sum())
                denom = before[1] + rise + case.yh
                if denom > 1e-12:
                    heapq.heappush(heap, (max(key, case.cost / denom), i, 3))
                continue
            waiting[str(i)] = key
            yield task(i)

    def take(i: int, got: CaseBound) -> None:
        case = cases[i]
        key = waiting.pop(str(i))
        if state is not None:
            if got.found:
                state.hints[case.level, case.h] = got.found
            state.proven[case.level, case.h] = (pi.copy(), got.upper)
        if found is not None:  # every group CP-SAT found with a negative reduced cost
            found.extend(g for v, g in got.groups if case.cost - case.yh - v < 0)
        denom = got.upper + case.yh
        if denom <= 1e-12:  # no group of the case has Σ π + y·h > 0: it binds no θ
            return
        ratio = max(key, case.cost / denom)
        best[0] = min(best[0], ratio)  # the stop of later cases (``enough``) as before
        if not got.decided and ratio < least[0]:
            # left open, and its bound would lower θ: the two-pool programme's, if less
            got = with_programme(got, open_bound(*programme(i), None, exact))
            ratio = tightened(i, got, ratio)
            runs[i] = 1
        least[0] = min(least[0], ratio)
        ratios[i] = ratio
        gots[i] = got
        if not got.decided:
            open_.add(i)

    def tightened(i: int, got: CaseBound, ratio: float) -> float:
        """The case's ratio with ``got``'s bound, if higher (``got`` a valid bound on it)."""
        tight = got.upper + cases[i].yh
        return max(ratio, cases[i].cost / tight) if tight > 1e-12 else math.inf

    def dispatch() -> None:
        """The cases below the bar, their CP-SAT models here or on the workers."""
        if executor is not None and parallel(executor, state):
            for res in executor.run(handed(), deadline=exact, ahead=AHEAD):
                if res.ok:
                    take(int(res.key), res.value)
                # else (out of time, failed, its worker lost) its key stays in ``waiting``
        else:
            for t in handed():
                take(int(t.key), t.fn(*t.args))

    dispatch()
    while True:
        left = heap[0][0] if heap else math.inf  # ≥ the bar unless stopped by the deadline
        floor = min([left, *waiting.values()])
        # The case that sets θ, while it does and CP-SAT did not prove its maximum (left open,
        # or stopped at an ``enough`` an open case's looser bound set): the programme, then at
        # finer cells (each bound valid; formulation, "The programme on the case that sets θ,
        # and the cases it uncovers").
        while ratios and exact.remaining() > FINE_MARGIN_S:
            i = min(ratios, key=ratios.__getitem__)
            got, n = gots[i], runs.get(i, 0)
            if ratios[i] >= floor or n >= 2 or got.upper <= got.value + 1e-6:
                break
            runs[i] = n + 1
            dp = open_bound(*programme(i), (CELLS, FINE_CELLS)[n], exact)
            got = gots[i] = with_programme(got, dp)
            ratios[i] = tightened(i, got, ratios[i])
        least[0] = min([1.0, *ratios.values()])
        if not heap or heap[0][0] >= least[0] or exact.remaining() <= FINE_MARGIN_S:
            break
        if found is not None:
            break  # a round's pricing: its CPU is the rounds' (4,096 × 200 at 60 s, #17)
        # The least ratio is now above keys left on the heap (cases never taken, as the
        # looser bounds put them above θ then): take them too, up to it (a bound alone, as
        # colgen's last one at the final duals).
        bar[0] = least[0]
        dispatch()
    theta = min(least[0], floor)  # least[0]: the least ratio, as the loop's last pass set it
    if state is not None:  # the cases whose true ratio may be below the θ proven
        state.undecided = len(waiting) + sum(ratios[i] <= theta for i in open_)
        # (a key left between CP-SAT's least ratio and the programme's may set θ itself)
        state.undecided += sum(k < best[0] or k <= theta for k, _, _ in heap)
    return theta
