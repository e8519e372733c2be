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

When a solve yields no plan the driver retries, in order: the same method with every admitted job
held to its guaranteed tier alone, ``heuristic:edf`` and ``cpsat`` (both held), and as a last
resort drops the guarantee with the latest deadline (a miss) until a plan exists; the round's
``status`` names each step. With exact methods this should never happen: the previous plan's
remainder is feasible. An admitted job still running past its guarantee is a miss and runs on as
best-effort. :attr:`ReplayReport.slo_missed` counts misses honestly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from schedopt.core.solve import solve
from schedopt.io.traces.record import TraceJob
from schedopt.topology import Cluster

from .instance import AdmissionInstance
from .solution import AdmissionSolution

EPS = 1e-9
Tiers = list[tuple[int, float, float]]  # (index into TraceJob.deadlines, seconds from now, value)


@dataclass(frozen=True)
class DriverConfig:
    """``skip_idle``: with nothing running or waiting, jump to the next submission's round."""

    slot_s: float = 300.0
    horizon_slots: int = 12
    method: str = "auto"
    time_limit_s: float = 5.0
    seed: int = 0
    scaling_exponent: float = 0.9  # throughput at other GPU counts: r·(n/n0)**exponent
    skip_idle: bool = True

    def __post_init__(self) -> None:
        if not (self.slot_s > 0 and self.horizon_slots >= 1 and self.time_limit_s > 0):
            raise ValueError("slot_s and time_limit_s must be > 0, horizon_slots >= 1")


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
    """Counts over the jobs that arrived. ``slo_missed``: admitted, then finished after (or still
    running past) its guarantee. ``unfinished``: neither finished, rejected nor known missed when
    the replay stopped; ``not_arrived``: not yet submitted then. ``rejected`` includes the
    unschedulable SLO jobs. ``outcomes``: job id → ``met``, ``missed``, ``rejected``,
    ``finished`` (best-effort), ``unfinished`` or ``unschedulable``."""

    rounds: tuple[RoundRecord, ...]
    slo_jobs: int
    slo_admitted: int
    slo_met: int
    slo_missed: int
    rejected: int
    be_jobs: int
    be_finished: int
    be_mean_jct_s: float | None
    unfinished: int = 0
    not_arrived: int = 0
    unschedulable: int = 0
    outcomes: dict[str, str] = field(default_factory=dict)

    @property
    def deadline_miss_rate(self) -> float:
        return (self.slo_missed + self.rejected) / self.slo_jobs if self.slo_jobs else 0.0

    def summary(self) -> str:
        jct = "-" if self.be_mean_jct_s is None else f"{self.be_mean_jct_s:.0f} s"
        rows = [
            ("rounds", f"{len(self.rounds)} (solve {sum(r.solve_s for r in self.rounds):.2f} s)"),
            ("SLO jobs", str(self.slo_jobs)),
            ("  admitted/met/missed", f"{self.slo_admitted}/{self.slo_met}/{self.slo_missed}"),
            ("  rejected", str(self.rejected)),
            ("  deadline miss rate", f"{100 * self.deadline_miss_rate:.1f} %"),
            ("best-effort jobs/finished", f"{self.be_jobs}/{self.be_finished}"),
            ("  mean JCT", jct),
            ("unfinished/not arrived", f"{self.unfinished}/{self.not_arrived}"),
            ("unschedulable", str(self.unschedulable)),
        ]
        return "\n".join(f"{k:<26} {v}" for k, v in rows)


@dataclass
class _State:
    job: TraceJob
    table: dict[int, float]  # GPUs → iterations/s
    left: int
    tier: int | None = None  # guaranteed tier (index into job.deadlines)
    gpus: int = 0  # GPUs in the previous slot
    missed: bool = False
    rejected: bool = False
    finish_s: float | None = None

    @property
    def held(self) -> bool:
        return self.tier is not None and not self.missed

    def deadline(self) -> float:
        assert self.tier is not None
        return self.job.submit_s + self.job.deadlines[self.tier][0]


def _hostable(cluster: Cluster) -> set[int]:
    """Counts ``AdmissionInstance.usable_options`` accepts on some GPU type that has that many."""
    sigma = cluster.max_gpus_per_host()
    total = {g: len(cluster.gpus(g)) for g in sigma}
    sizes = [1 << b for b in range(cluster.num_gpus.bit_length())]
    return {
        n
        for n in sizes
        for g, s in sigma.items()
        if n <= total[g] and (n <= s or (s & (s - 1) == 0 and n % s == 0))
    }


def _table(job: TraceJob, sizes: set[int], cfg: DriverConfig) -> dict[int, float]:
    n0, rate = job.num_gpus, job.iterations / job.duration_s
    counts = {n for n in (n0 // 2, n0, 2 * n0) if n in sizes}
    table = {n: rate * (n / n0) ** cfg.scaling_exponent for n in sorted(counts)}
    return {n: r for n, r in table.items() if math.floor(r * cfg.slot_s + EPS) >= 1}


def _tiers(s: _State, now: float, cfg: DriverConfig) -> Tiers:
    if not s.job.is_slo or s.missed:
        return []
    horizon = cfg.horizon_slots * cfg.slot_s
    last = len(s.job.deadlines) if s.tier is None else s.tier + 1
    out: Tiers = []
    for k, (rel, value) in enumerate(s.job.deadlines[:last]):
        d = s.job.submit_s + rel - now
        if math.floor(d / cfg.slot_s + EPS) >= 1 and (not out or min(d, horizon) > out[-1][1]):
            out.append((k, min(d, horizon), value))
    return out


def _document(entries: list[tuple[_State, Tiers]], cfg: DriverConfig, cluster: Cluster) -> dict:
    jobs = [
        {
            "id": s.job.id,
            "kind": s.job.kind if tiers else "best_effort",
            "tenant": s.job.tenant,
            "remaining_iterations": s.left,
            "throughput": s.table,
            "deadlines": [{"deadline_s": d, "value": v} for _, d, v in tiers],
            "admitted": bool(tiers) and s.held,
            "current_gpus": s.gpus,
        }
        for s, tiers in entries
    ]
    # the Cluster object itself: validated like ``cluster.to_dict()``, without re-parsing it
    return {"cluster": cluster, "slots": cfg.horizon_slots, "slot_s": cfg.slot_s, "jobs": jobs}


def _solve(
    entries: list[tuple[_State, Tiers]], cfg: DriverConfig, cluster: Cluster
) -> tuple[AdmissionSolution, list[tuple[_State, Tiers]], str, float]:
    """A plan, the tiers it was solved with, a status text and the time, with the fallbacks."""
    notes: list[str] = []
    spent = 0.0
    while True:
        attempts = [(cfg.method, False)] + [(cfg.method, True)] * any(s.held for s, _ in entries)
        attempts += [(m, True) for m in ("heuristic:edf", "cpsat") if m != cfg.method]
        for method, hold in attempts:
            used = [(s, t[-1:] if hold and s.held else t) for s, t in entries]
            inst = AdmissionInstance.model_validate(_document(used, cfg, cluster))
            result = solve(inst, method, time_limit_s=cfg.time_limit_s, seed=cfg.seed)
            spent += result.wall_s
            label = f"{method}{' held' if hold else ''} {result.status.value}"
            if result.solution is not None:
                status = " -> ".join([*notes, label]) if notes else result.status.value
                return result.solution, used, status, spent
            notes.append(label)
        held = [s for s, _ in entries if s.held]
        if not held:
            raise RuntimeError(f"no method found a plan: {'; '.join(notes)}")
        victim = max(held, key=_State.deadline)
        victim.missed = True
        notes.append(f"guarantee of {victim.job.id!r} dropped")
        entries = [(s, [] if s is victim else t) for s, t in entries]


def replay(
    cluster: Cluster,
    jobs: Sequence[TraceJob],
    config: DriverConfig,
    *,
    max_rounds: int | None = None,
    progress: Callable[[RoundRecord], None] | None = None,
) -> ReplayReport:
    """Replay ``jobs`` on ``cluster`` round by round (see the module docstring)."""
    if len({j.id for j in jobs}) != len(jobs):
        raise ValueError("job ids must be unique")
    cfg, slot = config, config.slot_s
    pending = sorted(jobs, key=lambda j: j.submit_s)
    sizes = _hostable(cluster)
    seen: list[_State] = []
    active: list[_State] = []
    rounds: list[RoundRecord] = []
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
            if s.job.is_slo and not s.missed and not tiers:
                if s.tier is None:
                    s.rejected, rejected = True, rejected + 1
                    continue
                s.missed = True  # running past its guarantee
            entries.append((s, tiers))
        status, spent, running, busy = "idle", 0.0, 0, 0
        if entries:
            sol, entries, status, spent = _solve(entries, cfg, cluster)
            for s, tiers in entries:
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
                    s.left -= min(s.left, math.floor(s.table[n] * slot + EPS))
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


def _outcome(s: _State) -> str:
    if not s.table:
        return "unschedulable"
    if s.rejected:
        return "rejected"
    if s.missed:  # only admitted jobs miss
        return "missed"
    if s.finish_s is None:
        return "unfinished"
    if s.tier is None:
        return "finished"
    return "met" if s.finish_s <= s.deadline() + 1e-6 else "missed"


def _report(rounds: tuple[RoundRecord, ...], seen: list[_State], not_arrived: int) -> ReplayReport:
    outcomes = {s.job.id: _outcome(s) for s in seen}
    slo = [outcomes[s.job.id] for s in seen if s.job.is_slo]
    jct = [s.finish_s - s.job.submit_s for s in seen if s.finish_s is not None and not s.job.is_slo]
    return ReplayReport(
        rounds=rounds,
        slo_jobs=len(slo),
        slo_admitted=sum(1 for s in seen if s.tier is not None),
        slo_met=slo.count("met"),
        slo_missed=slo.count("missed"),
        rejected=slo.count("rejected") + slo.count("unschedulable"),
        be_jobs=len(seen) - len(slo),
        be_finished=len(jct),
        be_mean_jct_s=sum(jct) / len(jct) if jct else None,
        unfinished=sum(1 for o in outcomes.values() if o == "unfinished"),
        not_arrived=not_arrived,
        unschedulable=sum(1 for o in outcomes.values() if o == "unschedulable"),
        outcomes=outcomes,
    )
