"""Heuristic fallbacks for deadline admission.

- ``edf``: earliest deadline first with the *minimum satisfactory share* (ElasticFlow, ASPLOS'23):
  each SLO job gets the smallest allowed GPU count that still finishes by its deadline, filled
  backwards from the deadline against the free-GPU profile; a job is admitted only if it fits
  beside every job admitted before it, so no admitted guarantee is ever broken.
- ``slack``: slack-ordered greedy (least slack, then least work, then fewest GPUs first), taking
  the latest feasible slots first, optionally a few sizes above the minimum share.

Both keep the jobs admitted in earlier rounds first, respect C3 through one capacity ledger, and
give the leftover GPUs to best-effort jobs by smallest remaining GPU-time. Their parameters are
plain dataclasses so that :mod:`schedopt.tuning` can set them.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from schedopt.core.options import SolveOptions, method_params
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, Ticker

from .assemble import RawPlan, assemble
from .data import JobData, ModelData, Option, build_data
from .instance import AdmissionInstance


@dataclass(frozen=True)
class EdfParams:
    """``laxity_weight`` 0 orders by deadline (EDF), 1 by laxity (deadline minus fastest run
    time); ``value_weight`` moves valuable jobs forward (slots earlier per unit of value)."""

    laxity_weight: float = 0.0
    value_weight: float = 0.0

    #: Ranges for Bayesian tuning (schedopt.tuning): field → (low, high).
    SPACE: ClassVar[dict[str, tuple[float, float]]] = {
        "laxity_weight": (0.0, 1.0),
        "value_weight": (0.0, 2.0),
    }


@dataclass(frozen=True)
class SlackParams:
    """Sort key: slack + ``work_weight``·work + ``gpu_weight``·GPUs (all in slots);
    ``share_boost`` takes that many sizes above the minimum satisfactory share when it fits."""

    work_weight: float = 1.0
    gpu_weight: float = 1.0
    share_boost: int = 0

    SPACE: ClassVar[dict[str, tuple[float, float]]] = {
        "work_weight": (0.0, 3.0),
        "gpu_weight": (0.0, 3.0),
        "share_boost": (0, 2),
    }


class Ledger:
    """GPUs used per (slot, type, size level) against the packable capacity of C3."""

    def __init__(self, data: ModelData):
        self.data = data
        self.used: defaultdict[tuple[int, str, int], int] = defaultdict(int)
        # (type, count) → the levels it uses with (level, usage, capacity): the inner loop of
        # every greedy, so computed once per option shape, not per call.
        self._rows: dict[tuple[str, int], tuple[tuple[int, int, int], ...]] = {}

    def _levels_of(self, opt: Option) -> tuple[tuple[int, int, int], ...]:
        key = (opt.gpu_type, opt.n)
        rows = self._rows.get(key)
        if rows is None:
            cap = self.data.chunk_capacity
            rows = self._rows[key] = tuple(
                (s, ModelData.usage(opt, s), cap[opt.gpu_type, s])
                for s in self.data.levels[opt.gpu_type]
                if ModelData.usage(opt, s)
            )
        return rows

    def fits(self, t: int, opt: Option) -> bool:
        used, g = self.used, opt.gpu_type
        if self.data.slot_capacity is not None:  # a repair part's own capacity per slot
            capacity = self.data.capacity
            return all(
                used[t, g, s] + use <= capacity(t, g, s) for s, use, _ in self._levels_of(opt)
            )
        # A plain loop, not all(genexpr): the greedy's hottest line, about 2x faster so.
        for s, use, cap in self._levels_of(opt):  # noqa: SIM110
            if used[t, g, s] + use > cap:
                return False
        return True

    def take(self, t: int, opt: Option, sign: int = 1) -> None:
        for s, use, _ in self._levels_of(opt):
            self.used[t, opt.gpu_type, s] += sign * use


def _fill_backwards(
    data: ModelData, ledger: Ledger, job: JobData, option: int, end: int
) -> list[int] | None:
    """Slots (latest first) in [arrival, end) where ``option`` fits until the work is done."""
    opt = job.options[option]
    if opt.work <= 0:
        return None
    chosen, done = [], 0
    for t in range(min(end, data.T) - 1, job.arrival - 1, -1):
        if ledger.fits(t, opt):
            chosen.append(t)
            done += opt.work
            if done >= job.work:
                return chosen
    return None


def _place_slo(
    data: ModelData,
    ledger: Ledger,
    job: JobData,
    raw: RawPlan,
    boost: int = 0,
    latest_tier_first: bool = False,
) -> bool:
    """Try tiers from the earliest (most value) or, to keep a guarantee at any value, from the
    latest; for each tier the smallest share that finishes (plus ``boost``)."""
    by_size = sorted(
        range(len(job.options)), key=lambda o: (job.options[o].n, -job.options[o].work)
    )
    tiers = list(enumerate(job.tiers))
    for k, tier in reversed(tiers) if latest_tier_first else tiers:
        feasible = []
        for o in by_size:
            slots = _fill_backwards(data, ledger, job, o, tier.slots_before)
            if slots is not None:
                feasible.append((o, slots))
                if len(feasible) > boost:
                    break
        if feasible:
            o, slots = feasible[-1]
            for t in slots:
                ledger.take(t, job.options[o])
                raw.run[t] = o
            raw.admitted, raw.tier = True, k
            return True
    raw.admitted = False
    return False


def _fill_best_effort(
    data: ModelData, ledger: Ledger, raw: list[RawPlan], stop: Deadline | None = None
) -> None:
    """Leftover GPUs to best-effort jobs, smallest remaining GPU-time first, slot by slot
    (until ``stop``: what is planned by then stands, the rest idles). Slots a job already has
    planned in ``raw`` stay as they are and count against its work (a decomposition's join
    tops up its parts' plans so)."""
    be = [j for j in data.jobs if not j.is_slo]
    left = {
        j.index: max(0, j.work - sum(j.options[o].work for o in raw[j.index].run if o is not None))
        for j in be
    }

    def gpu_time(j: JobData) -> float:
        return min(o.n * left[j.index] / o.work for o in j.options if o.work > 0)

    for t in range(data.T):
        active = [
            j
            for j in be
            if left[j.index] > 0 and t >= j.arrival and any(o.work > 0 for o in j.options)
        ]
        for job in sorted(active, key=lambda j: (gpu_time(j), j.id)):
            if stop is not None and stop.expired():
                return
            if raw[job.index].run[t] is not None:
                continue
            fitting = [i for i, o in enumerate(job.options) if o.work > 0 and ledger.fits(t, o)]
            if not fitting:
                continue
            finishing = [i for i in fitting if job.options[i].work >= left[job.index]]
            if finishing:  # the fewest GPUs that finish the job now
                o = min(finishing, key=lambda i: (job.options[i].n, -job.options[i].work))
            else:  # otherwise the most progress, on the fewest GPUs
                o = max(fitting, key=lambda i: (job.options[i].work, -job.options[i].n))
            ledger.take(t, job.options[o])
            raw[job.index].run[t] = o
            left[job.index] -= min(left[job.index], job.options[o].work)


def refill_best_effort(
    data: ModelData, raw: list[RawPlan], stop: Deadline | None = None
) -> list[RawPlan]:
    """``raw`` with its SLO plans kept and every best-effort job re-planned by the greedy fill.

    The exact models hand this to the L2 stage as its warm start: L1 is untouched (SLO plans
    are kept), and the start's best-effort progress is at least the heuristics' own.
    """
    ledger = Ledger(data)
    out = []
    for job, r in zip(data.jobs, raw, strict=True):
        if job.is_slo:
            for t, o in enumerate(r.run):
                if o is not None:
                    ledger.take(t, job.options[o])
            out.append(RawPlan(list(r.run), r.admitted, r.tier))
        else:
            out.append(RawPlan([None] * data.T))
    _fill_best_effort(data, ledger, out, stop)
    return out


def _greedy(
    data: ModelData,
    order: Callable[[JobData], tuple],
    boost: int = 0,
    stop: Deadline | None = None,
    best_effort: bool = True,
    guarantees_past_stop: bool = False,
) -> tuple[list[RawPlan], list[str]]:
    """Plans for every job and the earlier guarantees it could not keep.

    ``stop``: past it, no new SLO job is considered (each is rejected, unproven) and the
    best-effort fill ends; the earlier guarantees are always planned in full, or
    :class:`DeadlineReached` is raised (keeping half of them would be no answer), or, with
    ``guarantees_past_stop``, planned in full past ``stop`` too (for a caller that must answer
    with a plan that keeps them: cut short, the plan of the earlier guarantees alone, the
    cheapest that keeps them). Without ``best_effort`` the best-effort jobs get no GPUs (for a
    caller that re-plans them later: ``decomp:lp``'s start, whose repair refills them)."""
    slo = [j for j in data.jobs if j.is_slo]
    kept = [j for j in slo if j.admitted_before]
    # Earlier guarantees first: in the heuristic's order at their most valuable tier; if one
    # no longer fits, at their loosest tier; if still not, by the loosest deadline first
    # (EDF on the guarantees). Keeping every guarantee beats any value.
    attempts = (
        (sorted(kept, key=order), False),
        (sorted(kept, key=order), True),
        (sorted(kept, key=lambda j: (j.tiers[-1].slots_before, j.id)), True),
    )
    for ordered, latest_tier_first in attempts:
        ledger = Ledger(data)
        raw = [RawPlan([None] * data.T) for _ in data.jobs]
        broken = []
        tick = Ticker(
            None if guarantees_past_stop else stop,
            "keeping the guarantees of earlier-admitted jobs, before the time kept back for "
            "assembling the answer",
        )
        for job in ordered:
            tick()
            if not _place_slo(
                data, ledger, job, raw[job.index], latest_tier_first=latest_tier_first
            ):
                broken.append(job.id)
        if not broken:
            break
    for job in sorted((j for j in slo if not j.admitted_before), key=order):
        if stop is not None and stop.expired():
            raw[job.index].admitted = False  # not considered in time: rejected, unproven
            continue
        _place_slo(data, ledger, job, raw[job.index], boost)
    if best_effort:
        _fill_best_effort(data, ledger, raw, stop)
    return raw, broken


def _fastest_slots(job: JobData) -> float:
    best = max((o.work for o in job.options), default=0)
    return job.work / best if best > 0 else float("inf")


def edf_order(p: EdfParams) -> Callable[[JobData], tuple]:
    def key(j: JobData) -> tuple:
        first = j.tiers[0]
        value_per_slot = first.value / max(_fastest_slots(j), 1e-9)
        return (
            first.slots_before
            - p.laxity_weight * _fastest_slots(j)
            - p.value_weight * value_per_slot,
            j.id,
        )

    return key


def slack_order(p: SlackParams) -> Callable[[JobData], tuple]:
    def key(j: JobData) -> tuple:
        slack = j.tiers[-1].slots_before - j.arrival - _fastest_slots(j)
        gpus = min(o.n for o in j.options)
        return (slack + p.work_weight * _fastest_slots(j) + p.gpu_weight * gpus, j.id)

    return key


def run_edf(
    data: ModelData,
    params: EdfParams,
    stop: Deadline | None = None,
    best_effort: bool = True,
    guarantees_past_stop: bool = False,
) -> tuple[list[RawPlan], list[str]]:
    """EDF's plans (``_greedy`` for ``stop``, ``best_effort`` and ``guarantees_past_stop``)."""
    return _greedy(
        data,
        edf_order(params),
        stop=stop,
        best_effort=best_effort,
        guarantees_past_stop=guarantees_past_stop,
    )


def run_slack(
    data: ModelData,
    params: SlackParams,
    stop: Deadline | None = None,
    best_effort: bool = True,
    guarantees_past_stop: bool = False,
) -> tuple[list[RawPlan], list[str]]:
    """The slack heuristic's plans (``_greedy``'s arguments as ``run_edf``'s)."""
    return _greedy(
        data,
        slack_order(params),
        boost=params.share_boost,
        stop=stop,
        best_effort=best_effort,
        guarantees_past_stop=guarantees_past_stop,
    )


def tuned_or_shipped(
    tuned: Mapping[str, Mapping[str, Any]] | None,
) -> Mapping[str, Mapping[str, Any]]:
    """The heuristics' parameters ``solve`` handed over (``SolveOptions.tuned``: the shipped
    ones, or the caller's ``tuned=`` file over them), else the shipped ones."""
    if tuned is not None:
        return tuned
    from schedopt.tuning.store import load_tuned

    return load_tuned("admission")


#: Assembling a solution from the plans costs about what building the data did (one pass over
#: the jobs each; measured with the collector paused on 100,000 jobs: 1.6 s against 1.2 s of
#: CPU, 1.33×): the greedy stops this many build times before the deadline, a share that
#: follows the machine's load as the build did (2.0 until #16 kept too much back).
ASSEMBLE_PER_BUILD = 1.5


def assemble_reserve_s(build_s: float) -> float:
    return 0.02 + ASSEMBLE_PER_BUILD * build_s


def _method(run: Callable[..., tuple[list[RawPlan], list[str]]], cls: type):
    """A registered method around a heuristic; ``options.params`` sets its parameters."""

    def solve(inst: AdmissionInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
        t0 = time.perf_counter()
        data = build_data(inst, check_size=False, deadline=deadline)
        build_s = time.perf_counter() - t0
        stop = deadline.earlier(assemble_reserve_s(build_s))
        # deterministic mode: the whole pass, never cut short by the wall clock (fixed work)
        raw, broken = run(
            data, method_params(cls, options.params), None if options.deterministic else stop
        )
        solve_s = time.perf_counter() - t0 - build_s
        if broken:
            return Outcome(
                Status.NO_SOLUTION,
                build_s=build_s,
                solve_s=solve_s,
                explanation="the heuristic could not keep the guarantee of earlier-admitted "
                f"jobs {broken} (not a proof of infeasibility; try an exact method)",
            )
        return Outcome(
            Status.FEASIBLE,
            solution=assemble(data, raw, optimal_admission=False),
            build_s=build_s,
            solve_s=solve_s,
            explanation=CUT_SHORT if stop.expired() and not options.deterministic else None,
        )

    return solve


CUT_SHORT = (
    "the time limit was reached before every job was considered: the SLO jobs not reached are "
    "rejected (unproven) and best-effort jobs not reached stay idle"
)


solve_edf = _method(run_edf, EdfParams)
solve_slack = _method(run_slack, SlackParams)

#: What ``auto`` runs before the exact model (LNS last: it starts from the others' plans and
#: stops early where it finds nothing to improve).
HEURISTICS: Sequence[str] = ("heuristic:edf", "heuristic:slack", "heuristic:lns")
