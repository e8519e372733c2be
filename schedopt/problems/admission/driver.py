"""Replay a job trace lease round by lease round with the admission model.

Round ``k`` starts at ``k·slot_s``. The jobs submitted by then and not finished or rejected form
one :class:`AdmissionInstance` of ``horizon_slots`` slots; it is solved and only slot 0 is
applied: a job on ``n`` GPUs progresses by ``⌊rate(n)·slot_s⌋`` whole iterations (the
formulation's progress), newly admitted SLO jobs hold their guarantee from then on, and rejected
ones are dropped for good. A job finishes at the end of the slot its work reaches 0.

How a :class:`TraceJob` becomes a :class:`Job` (modelling choices):

- **throughput** ``r·(n/n0)**scaling_exponent`` for ``n ∈ {n0/2, n0, 2·n0}``, ``n0`` the trace's
  GPU count and ``r = iterations / duration_s``; only counts the cluster can host that make at
  least one whole iteration per slot are kept. A job left with none is *unschedulable*
  (counted; an SLO one is also rejected).
- **deadlines** become seconds from now. A tier with less than one whole slot left is past (no
  slot ends by it) and dropped; an unadmitted job with no tier left is rejected before the solve.
  A tier beyond the horizon is clipped to the horizon end: conservative (it asks to finish
  earlier than needed, so jobs longer than the horizon may be rejected); tiers clipped together
  collapse into the first of them, which keeps its value.
- **guarantees**: a job admitted earlier gets only its tiers up to the guaranteed one, so the
  model (C5) can keep or improve its guarantee but never weaken it; an improvement becomes the
  new guarantee. ``current_gpus`` is what the job ran on in the previous slot.

Every round keeps the plan it executed. Its **remainder** (slots 1.. of that plan, shifted by
one slot, an idle slot at the end; newly arrived SLO jobs rejected) is feasible for the next
round whenever slot 0 ran as planned and the world did not change, so it is the always-available
fallback and is passed to the method as ``hint``. A round takes, in order: the method's plan
(the remainder instead when that is lexicographically better), else the plan of
``heuristic:edf``, ``heuristic:slack`` or ``auto`` (hinted with the remainder), else the
remainder. Only when the remainder is no
longer valid — GPUs became unavailable, a throughput was revised, a job's remaining work differs
from the plan — does the driver retry with every admitted job held to its guaranteed tier alone
(the method, then ``heuristic:edf``, ``heuristic:slack`` and ``cpsat``) and, as a last resort,
drop guarantees one by one (latest deadline first), naming the change that forced it. The
round's ``status`` names each step.

An admitted job still running past its guaranteed deadline is *late* (it runs on as best-effort);
with the remainder fallback this never happens. :attr:`ReplayReport.dropped` says why each
dropped guarantee was dropped; :mod:`.replay_check` recounts met / late from the trace's own
numbers and the executed allocations, independently of this bookkeeping.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from schedopt.core.powers_of_two import is_power_of_two, powers_of_two_up_to
from schedopt.core.solve import lex_better, solve
from schedopt.io.traces.record import TraceJob
from schedopt.topology import Cluster

from .instance import AdmissionInstance
from .remainder import DriverConfig, Round, Tiers, remainder
from .solution import AdmissionSolution
from .validate import TERMS, evaluate

EPS = 1e-9
Slot = tuple[str | None, int]  # (GPU type, GPUs) of one planned slot


@dataclass(frozen=True)
class RoundRecord:
    round: int
    time_s: float
    arrived: int
    admitted: int
    rejected: int
    running: int
    gpus_busy: int
    status: str
    solve_s: float


@dataclass(frozen=True)
class ReplayReport:
    """Counts over the jobs that arrived. An admitted SLO job ends ``met``, ``late`` (its
    guarantee was kept but it finished after, or still ran past, the deadline: a driver bug) or
    ``dropped`` (the guarantee was given up; ``dropped`` maps its id to why). ``unfinished``:
    neither finished, rejected nor late/dropped when the replay stopped; ``not_arrived``: not yet
    submitted then. ``rejected`` includes the unschedulable SLO jobs. ``outcomes``: job id →
    ``met``, ``late``, ``dropped``, ``rejected``, ``finished`` (best-effort), ``unfinished`` or
    ``unschedulable``. ``allocations``: job id → (slot start, GPUs) of every slot it ran;
    ``guarantees``: job id → the absolute deadline (s) it was last guaranteed. These two are
    what :func:`.replay_check.check_replay` recounts from."""

    rounds: tuple[RoundRecord, ...]
    slo_jobs: int
    slo_admitted: int
    slo_met: int
    slo_late: int
    slo_dropped: int
    rejected: int
    be_jobs: int
    be_finished: int
    be_mean_jct_s: float | None
    unfinished: int = 0
    not_arrived: int = 0
    unschedulable: int = 0
    outcomes: dict[str, str] = field(default_factory=dict)
    dropped: dict[str, str] = field(default_factory=dict)
    allocations: dict[str, tuple[tuple[float, int], ...]] = field(default_factory=dict)
    guarantees: dict[str, float] = field(default_factory=dict)

    @property
    def slo_missed(self) -> int:
        """Admitted jobs whose deadline was not met: late plus dropped."""
        return self.slo_late + self.slo_dropped

    @property
    def deadline_miss_rate(self) -> float:
        return (self.slo_missed + self.rejected) / self.slo_jobs if self.slo_jobs else 0.0

    def summary(self) -> str:
        jct = "-" if self.be_mean_jct_s is None else f"{self.be_mean_jct_s:.0f} s"
        met = f"{self.slo_admitted}/{self.slo_met}/{self.slo_late}/{self.slo_dropped}"
        rows = [
            ("rounds", f"{len(self.rounds)} (solve {sum(r.solve_s for r in self.rounds):.2f} s)"),
            ("SLO jobs", str(self.slo_jobs)),
            ("  admitted/met/late/dropped", met),
            ("  rejected", str(self.rejected)),
            ("  deadline miss rate", f"{100 * self.deadline_miss_rate:.1f} %"),
            ("best-effort jobs/finished", f"{self.be_jobs}/{self.be_finished}"),
            ("  mean JCT", jct),
            ("unfinished/not arrived", f"{self.unfinished}/{self.not_arrived}"),
            ("unschedulable", str(self.unschedulable)),
        ]
        rows += [(f"  dropped {k}", why) for k, why in sorted(self.dropped.items())]
        return "\n".join(f"{k:<28} {v}" for k, v in rows)


@dataclass
class _State:
    job: TraceJob
    table: dict[int, float]  # GPUs → iterations/s
    left: int
    tier: int | None = None  # guaranteed tier (index into job.deadlines)
    gpus: int = 0  # GPUs in the previous slot
    dropped: str | None = None  # why the guarantee was dropped
    late: bool = False  # still running past its kept guarantee
    rejected: bool = False
    finish_s: float | None = None
    # The remainder of the executed plan (from the next slot on) and what it assumed.
    plan: tuple[Slot, ...] = ()
    planned_left: int | None = None
    planned_table: dict[int, float] | None = None
    ran: list[tuple[float, int]] = field(default_factory=list)

    @property
    def held(self) -> bool:
        return self.tier is not None and self.dropped is None and not self.late

    def deadline(self) -> float:
        assert self.tier is not None
        return self.job.submit_s + self.job.deadlines[self.tier][0]


def _hostable(cluster: Cluster) -> set[int]:
    """Counts ``AdmissionInstance.usable_options`` accepts on some GPU type that has that many."""
    sigma = cluster.max_gpus_per_host()
    total = {g: len(cluster.gpus(g)) for g in sigma}
    sizes = powers_of_two_up_to(cluster.num_gpus)
    return {
        n
        for n in sizes
        for g, s in sigma.items()
        if n <= total[g] and (n <= s or (is_power_of_two(s) and n % s == 0))
    }


def _table(job: TraceJob, sizes: set[int], cfg: DriverConfig) -> dict[int, float]:
    n0, rate = job.num_gpus, job.iterations / job.duration_s
    counts = {n for n in (n0 // 2, n0, 2 * n0) if n in sizes}
    table = {n: rate * (n / n0) ** cfg.scaling_exponent for n in sorted(counts)}
    return {n: r for n, r in table.items() if math.floor(r * cfg.slot_s + EPS) >= 1}


def _tiers(s: _State, now: float, cfg: DriverConfig) -> Tiers:
    if not s.job.is_slo or s.dropped is not None or s.late:
        return []
    horizon = cfg.horizon_slots * cfg.slot_s
    last = len(s.job.deadlines) if s.tier is None else s.tier + 1
    out: Tiers = []
    for k, (rel, value) in enumerate(s.job.deadlines[:last]):
        d = s.job.submit_s + rel - now
        if math.floor(d / cfg.slot_s + EPS) >= 1 and (not out or min(d, horizon) > out[-1][1]):
            out.append((k, min(d, horizon), value))
    return out


def _solve(rnd: Round, cfg: DriverConfig) -> tuple[AdmissionSolution, list[Tiers], str, float]:
    """A plan, the tiers it was solved with, a status text and the time spent."""
    notes: list[str] = []
    spent = 0.0

    def attempt(method: str, inst: AdmissionInstance, hint: AdmissionSolution | None, label: str):
        nonlocal spent
        result = solve(
            inst,
            method,
            time_limit_s=cfg.time_limit_s,
            seed=cfg.seed,
            hint=hint,
            deterministic=cfg.deterministic,
            params=dict(cfg.params) if method == cfg.method else None,
        )
        spent += result.wall_s
        if result.method.endswith("(hint kept)"):  # found nothing: the chain goes on
            notes.append(f"{label} found nothing (hint kept)")
            return None
        notes.append(f"{label} {result.status.value}")
        return result.solution

    def done(sol: AdmissionSolution, hold: bool, step: str | None = None):
        if step is not None:
            notes.append(step)
        status = notes[0].split(" ", 1)[1] if len(notes) == 1 else " -> ".join(notes)
        return sol, rnd.tiers_used(hold), status, spent

    inst = rnd.instance(cfg)
    kept, change = remainder(rnd, inst)
    sol = attempt(cfg.method, inst, kept, cfg.method)
    if sol is not None:
        if kept is not None and lex_better(evaluate(inst, kept), evaluate(inst, sol), TERMS):
            return done(kept, False, "previous plan (better)")
        return done(sol, False)
    for method in cfg.fallbacks:
        if method != cfg.method:
            sol = attempt(method, inst, kept, method)
            if sol is not None:
                return done(sol, False)
    if kept is not None:
        return done(kept, False, "previous plan")
    # The world changed: the remainder is gone. Hold every guarantee to its tier alone, then
    # give up guarantees one at a time, saying which change forced it.
    notes.append(f"previous plan invalid ({change})")
    while True:
        held = rnd.instance(cfg, hold=True)
        tried = [cfg.method, *(m for m in (*cfg.fallbacks[:2], cfg.hold_exact) if m != cfg.method)]
        for method in tried if any(s.held for s, _ in rnd.entries) else []:
            sol = attempt(method, held, None, f"{method} held")
            if sol is not None:
                return done(sol, True)
        victims = [s for s, _ in rnd.entries if s.held]
        if not victims:
            sol = attempt("heuristic:edf", held, None, "heuristic:edf")
            if sol is None:
                raise RuntimeError(f"no method found a plan: {'; '.join(notes)}")
            return done(sol, True)
        victim = max(victims, key=_State.deadline)
        victim.dropped = change
        notes.append(f"guarantee of {victim.job.id!r} dropped")
        rnd = Round(
            rnd.cluster,
            rnd.unavailable,
            rnd.failed,
            [(s, [] if s is victim else t) for s, t in rnd.entries],
        )


def replay(
    cluster: Cluster,
    jobs: Sequence[TraceJob],
    config: DriverConfig,
    *,
    max_rounds: int | None = None,
    progress: Callable[[RoundRecord], None] | None = None,
    unavailable: Callable[[float], Iterable[str]] | None = None,
) -> ReplayReport:
    """Replay ``jobs`` on ``cluster`` round by round (see the module docstring).
    ``unavailable(now)``: the GPUs out of service (failed, reserved) in the round at ``now``."""
    if len({j.id for j in jobs}) != len(jobs):
        raise ValueError("job ids must be unique")
    cfg, slot = config, config.slot_s
    pending = sorted(jobs, key=lambda j: j.submit_s)
    sizes = _hostable(cluster)
    seen: list[_State] = []
    active: list[_State] = []
    rounds: list[RoundRecord] = []
    before: set[str] = set()
    k = i = 0
    while (i < len(pending) or active) and (max_rounds is None or len(rounds) < max_rounds):
        if not active and (cfg.skip_idle or not rounds):
            k = max(k, math.ceil(pending[i].submit_s / slot - EPS))
        now, arrived, admitted, rejected = float(k * slot), 0, 0, 0
        while i < len(pending) and pending[i].submit_s <= now + EPS:
            s = _State(pending[i], _table(pending[i], sizes, cfg), pending[i].iterations)
            seen.append(s)
            i, arrived = i + 1, arrived + 1
            if s.table:
                active.append(s)
            elif s.job.is_slo:
                s.rejected, rejected = True, rejected + 1
        entries: list[tuple[_State, Tiers]] = []
        for s in active:
            tiers = _tiers(s, now, cfg)
            if s.job.is_slo and s.held and not tiers:
                s.late = True  # running past its guarantee
            elif s.job.is_slo and s.tier is None and not tiers:
                s.rejected, rejected = True, rejected + 1
                continue
            entries.append((s, tiers))
        out = tuple(sorted(set(unavailable(now)) if unavailable is not None else ()))
        failed = tuple(g for g in out if g not in before)
        before = set(out)
        status, spent, running, busy = "idle", 0.0, 0, 0
        if entries:
            sol, used, status, spent = _solve(Round(cluster, out, failed, entries), cfg)
            for (s, _), tiers in zip(entries, used, strict=True):
                plan = sol.plan(s.job.id)
                if tiers:
                    if not plan.admitted:
                        s.rejected, rejected = True, rejected + 1
                        continue
                    admitted += s.tier is None
                    s.tier = tiers[plan.tier or 0][0]
                s.gpus = n = plan.gpus[0]
                if n:
                    running, busy = running + 1, busy + n
                    s.ran.append((now, n))
                    s.left -= min(s.left, math.floor(s.table[n] * slot + EPS))
                # keep the rest of the plan: the next round's fallback
                s.plan = tuple(zip(plan.gpu_types[1:], plan.gpus[1:], strict=True))
                s.planned_left, s.planned_table = s.left, dict(s.table)
                if s.left == 0:
                    s.finish_s, s.gpus = now + slot, 0
        active = [s for s in active if not s.rejected and s.finish_s is None]
        record = RoundRecord(
            len(rounds), now, arrived, admitted, rejected, running, busy, status, spent
        )
        rounds.append(record)
        if progress is not None:
            progress(record)
        k += 1
    return _report(tuple(rounds), seen, len(pending) - i)


def batch_instance(
    cluster: Cluster, jobs: Sequence[TraceJob], config: DriverConfig
) -> AdmissionInstance:
    """One round of ``jobs`` as a batch: every job waiting at time 0 with all its work left
    and its deadlines counted from then (a window of a trace, as a benchmark instance), tiers
    and throughputs as the replay's first round makes them; jobs that round would reject
    before the solve (no GPU count the cluster hosts, no deadline tier left) are left out."""
    sizes, entries = _hostable(cluster), []
    for job in jobs:
        s = _State(job, _table(job, sizes, config), job.iterations)
        tiers = _tiers(s, s.job.submit_s, config)
        if s.table and (tiers or not job.is_slo):
            entries.append((s, tiers))
    return Round(cluster, (), (), entries).instance(config)


def _outcome(s: _State) -> str:
    if not s.table:
        return "unschedulable"
    if s.rejected:
        return "rejected"
    if s.dropped is not None:
        return "dropped"
    if s.late:
        return "late"
    if s.finish_s is None:
        return "unfinished"
    if s.tier is None:
        return "finished"
    return "met" if s.finish_s <= s.deadline() + 1e-6 else "late"


def _report(rounds: tuple[RoundRecord, ...], seen: list[_State], not_arrived: int) -> ReplayReport:
    outcomes = {s.job.id: _outcome(s) for s in seen}
    slo = [outcomes[s.job.id] for s in seen if s.job.is_slo]
    jct = [s.finish_s - s.job.submit_s for s in seen if s.finish_s is not None and not s.job.is_slo]
    return ReplayReport(
        rounds=rounds,
        slo_jobs=len(slo),
        slo_admitted=sum(1 for s in seen if s.tier is not None),
        slo_met=slo.count("met"),
        slo_late=slo.count("late"),
        slo_dropped=slo.count("dropped"),
        rejected=slo.count("rejected") + slo.count("unschedulable"),
        be_jobs=len(seen) - len(slo),
        be_finished=len(jct),
        be_mean_jct_s=sum(jct) / len(jct) if jct else None,
        unfinished=sum(1 for o in outcomes.values() if o == "unfinished"),
        not_arrived=not_arrived,
        unschedulable=sum(1 for o in outcomes.values() if o == "unschedulable"),
        outcomes=outcomes,
        dropped={s.job.id: s.dropped for s in seen if s.dropped is not None},
        allocations={s.job.id: tuple(s.ran) for s in seen if s.ran},
        guarantees={s.job.id: s.deadline() for s in seen if s.tier is not None},
    )
