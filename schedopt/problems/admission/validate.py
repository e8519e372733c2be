"""Independent validator and evaluator for admission solutions.

This module re-derives everything from the raw instance fields and the solution; it shares no
code with the model builders (``data.py``, ``model.py``, ``codec.py``) or the heuristics, so a
modelling bug shows up as a violation instead of being checked against itself. Constraint ids
are the ``V`` numbers of ``formulations/admission.md``.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from schedopt.core.result import ObjectiveTerm, Sense, Violation

from .instance import AdmissionInstance, Job, JobKind
from .solution import AdmissionSolution, JobPlan

EPS = 1e-9


def _rate(job: Job, gpu_type: str, n: int) -> float | None:
    if job.throughput_by_type is not None:
        return job.throughput_by_type.get(gpu_type, {}).get(n)
    return (job.throughput or {}).get(n)


def _iterations(inst: AdmissionInstance, job: Job, plan: JobPlan, upto: int) -> int:
    """Whole iterations done in slots [0, upto)."""
    total = 0
    for t in range(min(upto, inst.slots)):
        if plan.gpus[t]:
            rate = _rate(job, plan.gpu_types[t] or "", plan.gpus[t]) or 0.0
            total += math.floor(rate * inst.slot_s + EPS)
    return total


def _structure(inst: AdmissionInstance, sol: AdmissionSolution) -> list[Violation]:
    """Shape checks run before any constraint: a corrupted file (lists of the wrong length,
    placements of unknown jobs or GPUs) is answered with V1 violations, never an exception."""
    out: list[Violation] = []
    for i, plan in enumerate(sol.plans):
        if len(plan.gpus) != inst.slots or len(plan.gpu_types) != inst.slots:
            out.append(
                Violation(
                    "V1",
                    f"plans[{i}] (job {plan.job_id!r}): gpus and gpu_types must each list "
                    f"{inst.slots} slots (got {len(plan.gpus)} and {len(plan.gpu_types)})",
                )
            )
    planned = {p.job_id for p in sol.plans}
    known = set(inst.cluster.gpus())
    for job_id, gpu_ids in sol.placement.items():
        if job_id not in planned:
            out.append(Violation("V1", f"placement of job {job_id!r}, which has no plan"))
        for gpu in gpu_ids:
            if gpu not in known:
                out.append(Violation("V1", f"placement of job {job_id!r}: unknown GPU {gpu!r}"))
    return out


def validate(inst: AdmissionInstance, sol: AdmissionSolution) -> list[Violation]:
    out: list[Violation] = _structure(inst, sol)
    if out:
        return out
    jobs = {j.id: j for j in inst.jobs}
    counts = Counter(p.job_id for p in sol.plans)
    for job_id, c in counts.items():
        if job_id not in jobs:
            out.append(Violation("V1", f"plan for unknown job {job_id!r}"))
        elif c > 1:
            out.append(Violation("V1", f"job {job_id!r} has {c} plans"))
    for job_id in jobs:
        if job_id not in counts:
            out.append(Violation("V1", f"job {job_id!r} has no plan"))
    if out:
        return out

    gpu_type_of = {g: inst.cluster.gpu(g).gpu_type for g in inst.cluster.gpus()}
    unavailable = set(inst.unavailable_gpus)
    free_by_type: Counter[str] = Counter(t for g, t in gpu_type_of.items() if g not in unavailable)
    used = [Counter[str]() for _ in range(inst.slots)]
    gangs: list[dict[str, list[int]]] = [defaultdict(list) for _ in range(inst.slots)]

    for plan in sol.plans:
        job = jobs[plan.job_id]
        name = f"job {job.id!r}"
        if len(plan.gpus) != inst.slots or len(plan.gpu_types) != inst.slots:
            out.append(Violation("V1", f"{name}: plan must cover exactly {inst.slots} slots"))
            continue
        first_slot = math.ceil(job.arrival_s / inst.slot_s - EPS)
        for t, (n, g) in enumerate(zip(plan.gpus, plan.gpu_types, strict=True)):
            if n < 0:
                out.append(Violation("V1", f"{name}: negative GPU count in slot {t}"))
                continue
            if (n == 0) != (g is None):
                out.append(Violation("V1", f"{name}: slot {t} count {n} with type {g!r}"))
                continue
            if n == 0:
                continue
            if _rate(job, g or "", n) is None:
                out.append(Violation("V2", f"{name}: {n}×{g} in slot {t} is not an allowed option"))
            if t < first_slot:
                out.append(
                    Violation("V3", f"{name}: runs in slot {t} before arriving (slot {first_slot})")
                )
            used[t][g or ""] += n
            gangs[t][g or ""].append(n)

        # V6: admission bookkeeping
        if job.kind.is_slo:
            if plan.admitted is None:
                out.append(Violation("V6", f"{name}: SLO job without an admission decision"))
            if job.admitted and not plan.admitted:
                out.append(Violation("V6", f"{name}: was admitted earlier but is not kept"))
            if plan.admitted and (plan.tier is None or not 0 <= plan.tier < len(job.deadlines)):
                out.append(Violation("V6", f"{name}: admitted without a valid tier"))
            if plan.admitted is False:
                if any(plan.gpus):
                    out.append(Violation("V6", f"{name}: rejected but given GPUs"))
                if plan.rejection is None:
                    out.append(Violation("V6", f"{name}: rejected without a reason"))
        elif plan.admitted is not None or plan.tier is not None:
            out.append(Violation("V6", f"{name}: best-effort jobs carry no admission or tier"))

        # V5: the guaranteed deadline is met
        if (
            job.kind.is_slo
            and plan.admitted
            and plan.tier is not None
            and 0 <= plan.tier < len(job.deadlines)
        ):
            deadline = job.deadlines[plan.tier].deadline_s
            ends_by = math.floor(deadline / inst.slot_s + EPS)
            done = _iterations(inst, job, plan, ends_by)
            if done < job.remaining_iterations:
                out.append(
                    Violation(
                        "V5",
                        f"{name}: {done} of {job.remaining_iterations} iterations done by the "
                        f"tier-{plan.tier} deadline {deadline:g} s",
                    )
                )

    # V4: capacity per slot and GPU type, and the gangs fit on hosts (C3)
    hosts_of = _hosts_by_type(inst, gpu_type_of, unavailable)
    for t, per_type in enumerate(used):
        for g, n in per_type.items():
            if n > free_by_type.get(g, 0):
                out.append(
                    Violation("V4", f"slot {t}: {n} {g} GPUs used, {free_by_type.get(g, 0)} free")
                )
            elif (gang := _unpackable(gangs[t][g], hosts_of[g])) is not None:
                out.append(Violation("V4", f"slot {t}: {gang} {g} GPUs fit no host (C3)"))

    out.extend(_validate_placement(inst, sol, gpu_type_of, unavailable))
    return out


def _hosts_by_type(inst: AdmissionInstance, gpu_type_of, unavailable) -> dict[str, list]:
    """GPU type → [(free, total) GPUs of that type] per host that has any."""
    out: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for h in inst.cluster.hosts():
        per = Counter(gpu_type_of[x] for x in inst.cluster.gpus_on(h))
        free = Counter(gpu_type_of[x] for x in inst.cluster.gpus_on(h) if x not in unavailable)
        for g, n in per.items():
            out[g].append((free[g], n))
    return out


def _unpackable(sizes: list[int], hosts: list[tuple[int, int]]) -> int | None:
    """The first gang of ``sizes`` (GPUs of one type in one slot) that cannot be placed on
    ``hosts`` ((free, total) per host), or None. Best fit, largest first, is exact for
    power-of-two gangs; a gang wider than a host needs whole free hosts of the largest size.
    Every slot is checked, not only slot 0 (C3)."""
    # Only how many hosts have each number of free GPUs matters to best fit, so hosts are
    # counted by free GPUs: O(σ) a gang instead of a scan of every host (the scan made this
    # check 3.5 s of CPU on 100,000 jobs × 12 slots).
    sigma = max((n for _, n in hosts), default=0)
    count = [0] * (sigma + 1)
    for f, _ in hosts:
        count[f] += 1
    for n in sorted(sizes, reverse=True):
        if sigma == 0:
            return n
        if n > sigma:
            # Wider gangs come first, before anything is placed: a host with σ free GPUs is a
            # whole free host of the largest size.
            need = n // sigma
            if n % sigma or count[sigma] < need:
                return n
            count[sigma] -= need
            count[0] += need
            continue
        best = next((f for f in range(n, sigma + 1) if count[f]), None)  # best fit
        if best is None:
            return n
        count[best] -= 1
        count[best - n] += 1
    return None


def _validate_placement(inst, sol, gpu_type_of, unavailable) -> list[Violation]:
    out: list[Violation] = []
    cluster = inst.cluster
    running = {p.job_id: p for p in sol.plans if p.gpus and p.gpus[0] > 0}
    for job_id in running:
        if job_id not in sol.placement:
            out.append(Violation("V7", f"job {job_id!r} runs in slot 0 but has no placement"))
    owner: dict[str, str] = {}
    per_host_jobs: dict[str, set[str]] = defaultdict(set)
    # A host's GPUs of one type (a host may mix types; a gang never does).
    of_type: dict[tuple[str, str], set[str]] = defaultdict(set)
    for h in cluster.hosts():
        for g in cluster.gpus_on(h):
            of_type[h, gpu_type_of[g]].add(g)
    max_host: dict[str, int] = defaultdict(int)
    for (_, t), gpus in of_type.items():
        max_host[t] = max(max_host[t], len(gpus))
    for job_id, gpu_ids in sol.placement.items():
        plan = running.get(job_id)
        if plan is None:
            out.append(Violation("V7", f"job {job_id!r} is placed but does not run in slot 0"))
            continue
        if len(gpu_ids) != plan.gpus[0]:
            out.append(
                Violation(
                    "V7", f"job {job_id!r}: {len(gpu_ids)} GPUs placed, {plan.gpus[0]} planned"
                )
            )
        hosts = set()
        for gpu in gpu_ids:
            if gpu not in gpu_type_of:
                out.append(Violation("V7", f"job {job_id!r}: unknown GPU {gpu!r}"))
                continue
            if gpu in unavailable:
                out.append(Violation("V7", f"job {job_id!r}: GPU {gpu!r} is unavailable"))
            if gpu_type_of[gpu] != plan.gpu_types[0]:
                out.append(
                    Violation("V7", f"job {job_id!r}: GPU {gpu!r} is not {plan.gpu_types[0]}")
                )
            if gpu in owner:
                out.append(Violation("V7", f"GPU {gpu!r} given to {owner[gpu]!r} and {job_id!r}"))
            owner[gpu] = job_id
            hosts.add(cluster.host_of(gpu))
        for h in hosts:
            per_host_jobs[h].add(job_id)
        n = plan.gpus[0]
        if n <= max_host.get(plan.gpu_types[0] or "", 0):
            if len(hosts) > 1:
                out.append(
                    Violation(
                        "V7", f"job {job_id!r}: {n} GPUs fit one host but span {sorted(hosts)}"
                    )
                )
        else:
            for h in sorted(hosts):
                whole = of_type[h, plan.gpu_types[0] or ""]
                if not whole <= set(gpu_ids):
                    out.append(
                        Violation("V7", f"job {job_id!r}: wider than a host but uses part of {h!r}")
                    )
    return out


def _progress(inst: AdmissionInstance, job: Job, plan: JobPlan) -> list[int]:
    """Best-effort iterations credited per slot: early slots first, capped at the work left."""
    left = job.remaining_iterations
    credited = []
    for t in range(inst.slots):
        got = 0
        if plan.gpus[t]:
            rate = _rate(job, plan.gpu_types[t] or "", plan.gpus[t]) or 0.0
            got = min(left, math.floor(rate * inst.slot_s + EPS))
        left -= got
        credited.append(got)
    return credited


#: The lexicographic objective that :func:`evaluate` computes, level by level.
TERMS = (
    ObjectiveTerm("guaranteed deadline value", Sense.MAXIMIZE),
    ObjectiveTerm("best-effort progress", Sense.MAXIMIZE, "jobs"),
    ObjectiveTerm("GPU-count changes", Sense.MINIMIZE, "GPUs"),
)


def evaluate(inst: AdmissionInstance, sol: AdmissionSolution) -> tuple[float, float, float]:
    """(L1 guaranteed value, L2 discounted best-effort progress, L3 GPU-count changes)."""
    jobs = {j.id: j for j in inst.jobs}
    value = progress = changes = 0.0
    for plan in sol.plans:
        job = jobs[plan.job_id]
        if job.kind.is_slo and plan.admitted and plan.tier is not None:
            value += job.deadlines[plan.tier].value
        if job.kind is JobKind.BEST_EFFORT:
            for t, it in enumerate(_progress(inst, job, plan)):
                progress += job.weight * inst.be_discount**t * it / job.remaining_iterations
        prev = job.current_gpus
        for n in plan.gpus:
            changes += abs(n - prev)
            prev = n
    return (value, progress, changes)


def metrics(inst: AdmissionInstance, sol: AdmissionSolution) -> dict[str, float]:
    jobs = {j.id: j for j in inst.jobs}
    unavailable = set(inst.unavailable_gpus)
    free = sum(1 for g in inst.cluster.gpus() if g not in unavailable)
    slot0 = sum(p.gpus[0] for p in sol.plans) if inst.slots else 0
    touched: Counter[str] = Counter()
    for gpu_ids in sol.placement.values():
        for g in gpu_ids:
            touched[inst.cluster.host_of(g)] += 1
    fragmented = 0
    for h, n in touched.items():
        free_h = sum(1 for g in inst.cluster.gpus_on(h) if g not in unavailable)
        fragmented += 0 < n < free_h
    new_slo = [p for p in sol.plans if jobs[p.job_id].kind.is_slo and not jobs[p.job_id].admitted]
    return {
        "slo_admitted": float(sum(1 for p in sol.plans if p.admitted)),
        "slo_new_admitted": float(sum(1 for p in new_slo if p.admitted)),
        "slo_rejected": float(sum(1 for p in sol.plans if p.admitted is False)),
        "gpu_utilisation_slot0": slot0 / free if free else 0.0,
        "hosts_touched_slot0": float(len(touched)),
        "fragmented_hosts_slot0": float(fragmented),
    }
