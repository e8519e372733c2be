"""The independent validator of co-scheduling solutions (formulations/cosched.md, V1–V8).

It re-derives everything from the raw instance and *simulates* the explicit periodic schedule
(``simulate.unroll``); it never imports the model, its data or its codec.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from schedopt.core.result import ObjectiveTerm, Sense, Violation

from .instance import CoschedInstance, Job
from .simulate import (
    Lookup,
    Occurrence,
    chosen,
    crosses,
    lookup,
    replay,
    sync_gb,
    sync_ms,
    unroll,
    window,
)
from .solution import CoschedSolution, Group, JobPlan

#: The objectives, in their order (ProblemSpec.terms).
TERMS = (
    ObjectiveTerm("hourly cost of the hosts held", Sense.MINIMIZE, "$/h"),
    ObjectiveTerm("weighted step times", Sense.MINIMIZE, "s"),
    ObjectiveTerm("data moved (syncs across pools, state off current pools)", Sense.MINIMIZE, "GB"),
)
#: Steps unrolled per check: enough for every phase of step 0 (which may start up to
#: (2+σ) cycles after the origin) to meet the occurrences of every other phase.
UNROLL_STEPS = 6
#: Steps replayed per held-out sample (the steady cycle is measured over the last half).
REPLAY_STEPS = 12
#: (job, held-out sample) pairs replayed at most per solution (the metric's cost).
REPLAY_PAIRS = 800


def host_pool(host: str) -> tuple[str, int] | None:
    """``pool/i`` with ``i`` written as ``str(i)`` does (ASCII digits, no leading zero), else
    None: ``h20/00`` must not be a second name of ``h20/0`` (a group would count one host
    twice), and ``int`` raises on ``²`` or on more than 4,300 digits."""
    pool, _, index = host.rpartition("/")
    canonical = index.isascii() and index.isdigit() and len(index) <= 12
    if not pool or not canonical or (index.startswith("0") and index != "0"):
        return None
    return pool, int(index)


def validate(inst: CoschedInstance, sol: CoschedSolution) -> list[Violation]:
    out: list[Violation] = []
    jobs = {j.id: j for j in inst.jobs}
    groups: dict[str, Group] = {}
    for g in sol.groups:
        if g.id in groups:
            out.append(Violation("V1", f"group {g.id!r} listed twice"))
        groups[g.id] = g
    plans: dict[str, JobPlan] = {}
    for p in sol.plans:
        if p.job_id not in jobs:
            out.append(Violation("V1", f"a plan for unknown job {p.job_id!r}"))
        elif p.job_id in plans:
            out.append(Violation("V1", f"job {p.job_id!r} planned twice"))
        else:
            plans[p.job_id] = p
    for jid, job in jobs.items():
        plan = plans.get(jid)
        if plan is None:
            out.append(Violation("V1", f"job {jid!r} has no plan"))
        elif plan.group not in groups or jid not in groups[plan.group].members:
            out.append(Violation("V1", f"job {jid!r} names group {plan.group!r}, not its member"))
        elif len(plan.phases) != len(job.phases):
            out.append(Violation("V1", f"job {jid!r}: {len(plan.phases)} phases planned"))
    for g in groups.values():
        for m, n in Counter(g.members).items():
            if m not in plans or plans[m].group != g.id or n > 1:
                out.append(Violation("V1", f"group {g.id!r} lists {m!r}, not planned in it"))
    if out:
        return out  # the rest reads plans through groups
    out += _hosts(inst, sol)
    held = _held(inst, sol)
    for plan in sol.plans:
        out += _options(inst, jobs[plan.job_id], plan, held[plan.group])
    lk = lookup(inst, sol)
    for g in sol.groups:
        out += _residency(lk, g, held[g.id])
        out += _timeline(lk, g)
    return out


def _hosts(inst: CoschedInstance, sol: CoschedSolution) -> list[Violation]:
    """V2: hosts exist and are in at most one group (C4)."""
    out = []
    sizes = {p.name: p.hosts for p in inst.pools}
    seen: dict[str, str] = {}
    for g in sol.groups:
        for h in g.hosts:
            parsed = host_pool(h)
            if parsed is None or parsed[0] not in sizes or parsed[1] >= sizes[parsed[0]]:
                out.append(Violation("V2", f"group {g.id!r}: no host {h!r}"))
            elif h in seen:
                out.append(Violation("V2", f"host {h!r} in groups {seen[h]!r} and {g.id!r}"))
            seen[h] = g.id
    return out


def _held(inst: CoschedInstance, sol: CoschedSolution) -> dict[str, Counter[str]]:
    """Hosts per pool of every group (known hosts only)."""
    names = {p.name for p in inst.pools}
    out: dict[str, Counter[str]] = {}
    for g in sol.groups:
        c: Counter[str] = Counter()
        for h in set(g.hosts):
            parsed = host_pool(h)
            if parsed is not None and parsed[0] in names:
                c[parsed[0]] += 1
        out[g.id] = c
    return out


def _options(inst: CoschedInstance, job: Job, plan: JobPlan, held: Counter[str]) -> list[Violation]:
    """V3 options exist and fit the group's devices (C2, C5); V4 TP within a host (C5b)."""
    out = []
    for k, (phase, pp) in enumerate(zip(job.phases, plan.phases, strict=True)):
        if pp.option >= len(phase.options):
            out.append(Violation("V3", f"job {job.id!r} phase {k}: no option {pp.option}"))
            continue
        opt = phase.options[pp.option]
        pool = inst.pool(opt.pool)
        if opt.gpus > pool.gpus_per_host * held[opt.pool]:
            out.append(
                Violation(
                    "V3",
                    f"job {job.id!r} phase {phase.name!r}: {opt.gpus} devices of {opt.pool}, "
                    f"the group holds {pool.gpus_per_host * held[opt.pool]}",
                )
            )
        if opt.tp > pool.gpus_per_host:
            out.append(
                Violation("V4", f"job {job.id!r} phase {phase.name!r}: TP {opt.tp} crosses hosts")
            )
    return out


def _residency(lk: Lookup, g: Group, held: Counter[str]) -> list[Violation]:
    """V5: the members' resident state fits the group's host memory, per pool (C6)."""
    if any(_bad_option(lk, m) for m in g.members):
        return []
    inst, jobs, plans = lk.inst, lk.jobs, lk.plans
    need: dict[str, int] = defaultdict(int)
    for m in g.members:
        for opt in chosen(jobs[m], plans[m]):
            need[opt.pool] += math.ceil(opt.resident_gib * 1024 - 1e-9)  # whole MiB, up
    out = []
    for pool, mib in need.items():
        have = math.floor(inst.pool(pool).host_memory_gib * 1024 + 1e-9) * held[pool]  # down
        if mib > have:
            out.append(Violation("V5", f"group {g.id!r}: {mib} MiB resident on {pool}, {have} MiB"))
    return out


def _bad_option(lk: Lookup, jid: str) -> bool:
    job, plan = lk.jobs[jid], lk.plans[jid]
    return any(pp.option >= len(ph.options) for ph, pp in zip(job.phases, plan.phases, strict=True))


def _timeline(lk: Lookup, g: Group) -> list[Violation]:
    """V8 the cycle meets every SLO; V6 no overlap per pool; V7 precedence and staleness."""
    inst, jobs = lk.inst, lk.jobs
    out = [
        Violation("V8", f"group {g.id!r}: cycle {g.cycle_ms} ms > {m!r}'s SLO")
        for m in g.members
        if g.cycle_ms > jobs[m].slo_ms
    ]
    if g.cycle_ms <= 0:
        if g.members:
            out.append(Violation("V8", f"group {g.id!r}: cycle {g.cycle_ms} ms"))
        return out
    if not g.members or any(_bad_option(lk, m) for m in g.members):
        return out
    out += [Violation(cid, msg) for cid, msg, _ in _breaks(lk, g, None)]
    if inst.chance is not None:  # V9: the timetable holds in enough scenarios (C13)
        need = math.ceil((1.0 - inst.chance.epsilon) * inst.chance.scenarios - 1e-9)
        held = dict.fromkeys(g.members, 0)
        for s in range(inst.chance.scenarios):
            broken = {j for _, _, ids in _breaks(lk, g, s) for j in ids}
            for m in g.members:
                held[m] += m not in broken
        for m, n in held.items():
            if n < need:
                out.append(
                    Violation("V9", f"{m!r}: timetable holds in {n} scenarios, {need} needed")
                )
    return out


def _breaks(lk: Lookup, g: Group, scenario: int | None) -> list[tuple[str, str, set[str]]]:
    """V6 and V7 on the unrolled timeline, with planned durations or a scenario's: each
    broken rule with the jobs it involves."""
    jobs = lk.jobs
    out: list[tuple[str, str, set[str]]] = []
    last: dict[str, Occurrence] = {}
    for occ in window(lk, g, scenario):  # V6: consecutive occurrences on each pool
        prev = last.get(occ.pool)
        if prev is not None:
            gap = occ.switch_in if prev.job != occ.job else 0
            if occ.start < prev.end + gap:
                msg = (
                    f"group {g.id!r} pool {occ.pool}: {occ.job!r} phase {occ.phase} step "
                    f"{occ.step} starts at {occ.start} ms, before {prev.job!r} phase "
                    f"{prev.phase} step {prev.step} ends at {prev.end} ms (+{gap} ms switch)"
                )
                out.append(("V6", msg, {occ.job, prev.job}))
        if prev is None or occ.end > prev.end:
            last[occ.pool] = occ
    ends = {(o.job, o.phase, o.step): o for o in unroll(lk, g, UNROLL_STEPS, scenario)}
    for m in g.members:  # V7: every step of the unrolled timeline
        job, plan = jobs[m], lk.plans[m]
        cross = sync_ms(lk.inst, job) if crosses(job, plan) else 0
        K = len(job.phases)
        for i in range(UNROLL_STEPS):
            bad = [k for k in range(1, K) if ends[m, k, i].start < ends[m, k - 1, i].end]
            if bad:
                out.append(("V7", f"{m!r} step {i}: phase {bad[0]} starts too early", {m}))
                break
            nxt = i + 1 + job.staleness
            if nxt < UNROLL_STEPS and ends[m, 0, nxt].start < ends[m, K - 1, i].end + cross:
                msg = (
                    f"{m!r}: step {nxt} starts before step {i}'s weights arrive "
                    f"(σ = {job.staleness}, sync {cross} ms)"
                )
                out.append(("V7", msg, {m}))
                break
    return out


def evaluate(inst: CoschedInstance, sol: CoschedSolution) -> tuple[float, float, float]:
    """(L1 $/h held, L2 weighted step times in s, L3 GB moved), from the raw instance."""
    prices = {p.name: p.price_per_gpu_hour * p.gpus_per_host for p in inst.pools}
    cost = 0.0
    for g in sol.groups:
        for h in set(g.hosts):
            parsed = host_pool(h)
            if parsed is not None and parsed[0] in prices:
                cost += prices[parsed[0]]
    cycles = {g.id: g.cycle_ms for g in sol.groups}
    jobs = {j.id: j for j in inst.jobs}
    step = sum(jobs[p.job_id].weight * cycles.get(p.group, 0) for p in sol.plans) / 1000.0
    moved = 0
    lk = lookup(inst, sol)
    for p in sol.plans:
        job = jobs[p.job_id]
        if _bad_option(lk, p.job_id):
            continue
        moved += sync_gb(job) if crosses(job, p) else 0
        for phase, opt in zip(job.phases, chosen(job, p), strict=True):
            if phase.current_pool is not None and opt.pool != phase.current_pool:
                moved += math.ceil(opt.resident_gib - 1e-9)
    return round(cost, 6), step, float(moved)


def basic_metrics(inst: CoschedInstance, sol: CoschedSolution) -> dict[str, float]:
    """Cost, devices, groups and throughput: no replay (cheap at any size)."""
    cost, _, _ = evaluate(inst, sol)
    cycles = {g.id: g.cycle_ms for g in sol.groups}
    steps_per_hour = sum(3_600_000 / cycles[p.group] for p in sol.plans if cycles[p.group] > 0)
    devices = 0
    sizes = {p.name: p.gpus_per_host for p in inst.pools}
    for g in sol.groups:
        for h in set(g.hosts):
            parsed = host_pool(h)
            if parsed is not None and parsed[0] in sizes:
                devices += sizes[parsed[0]]
    return {
        "cost_per_hour": cost,
        "devices_held": float(devices),
        "groups": float(sum(1 for g in sol.groups if g.members)),
        "steps_per_hour": steps_per_hour,
        "steps_per_dollar": steps_per_hour / cost if cost > 0 else 0.0,
    }


def holdout_samples(inst: CoschedInstance) -> int:
    """Held-out samples the replay uses: all of them up to ``REPLAY_PAIRS`` (job, sample)
    pairs in all (at least one), so that the metric's cost is bounded at any size."""
    samples = max(
        (len(o.holdout_ms) for j in inst.jobs for ph in j.phases for o in ph.options), default=0
    )
    return min(samples, max(1, REPLAY_PAIRS // len(inst.jobs))) if samples else 0


def metrics(inst: CoschedInstance, sol: CoschedSolution) -> dict[str, float]:
    out = basic_metrics(inst, sol)
    samples = holdout_samples(inst)
    if samples and not validate(inst, sol):
        met = total = 0
        slo = {j.id: j.slo_ms for j in inst.jobs}
        lk = lookup(inst, sol)
        for s in range(samples):
            for g in sol.groups:
                if g.members and g.cycle_ms > 0:
                    for jid, cycle in replay(lk, g, s, REPLAY_STEPS).items():
                        total += 1
                        met += cycle <= slo[jid] + 1e-9
        out["slo_attainment_holdout"] = met / total if total else 1.0
        out["holdout_samples"] = float(samples)
    return out


def finish_reserve_s(inst: CoschedInstance) -> float:
    """Seconds to keep back for validating and measuring an answer (the replay dominates:
    about 0.3 ms per (job, sample) pair measured at 200 jobs)."""
    pairs = len(inst.jobs) * max(1, holdout_samples(inst))
    return 0.05 + 3e-4 * pairs + 5e-4 * len(inst.jobs)
