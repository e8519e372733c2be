"""Repair: CP-SAT over groups of jobs of a joined plan, each on the capacity the others leave
(formulations/admission.md, "Repair by groups of slots").

A group is a set of SLO jobs whose first deadlines fall in a window of slots (they compete
for the same slots), with the rejected jobs of that window. Every other SLO job is fixed to
its plan; the group's own model is C1–C7 over its jobs with, per slot, type and level, the
capacity ``κ_gs`` less what the fixed jobs take (``ModelData.slot_capacity``). So any plan of
the group joins the fixed plans within C3 at every level, and C5 keeps the earlier guarantees
inside the group. The group's current plans are CP-SAT's hint; a better L1 replaces them.
Best-effort jobs are left out and re-planned greedily at the end (they do not enter L1).
Given the LP point of the bound, every third pass takes its groups where the LP says value is
left instead (``neighbourhood.py``). A group's model is C1–C7 and L1 alone
(``build_model(..., l1_only=True)``): the count changes C9 only matter to L3.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from schedopt.backends.first_import import CPSAT, solver_in_time
from schedopt.core.gates import first_import_deadline
from schedopt.core.options import SolveOptions
from schedopt.core.stopping import Deadline, DeadlineReached, wall_per_cpu

from .assemble import RawPlan, guaranteed_value
from .bound import L1Bound
from .data import JobData, ModelData
from .heuristics import Ledger
from .neighbourhood import lp_groups, lp_start

#: SLO jobs per group: CP-SAT proves or nearly proves a group this size in a fraction of a
#: second (benchmarks/RESULTS.md, "LP rounding and repair").
GROUP_JOBS = 60
#: Seconds of CP-SAT per group at most: CPU seconds, on the wall clock times the wall per CPU
#: second the repair has had (``step_seconds``).
STEP_S = 0.6
#: Passes over every group in a row without a gain before the repair stops (the groups start
#: at a new random offset each pass, by deadline and by slot in turn, and double in size after
#: a pass without a gain).
IDLE_PASSES = 3


def used_by(data: ModelData, raw: Sequence[RawPlan], jobs: Sequence[JobData]):
    """GPUs per (slot, type, level) that ``jobs``' plans take (C3's ledger, filled)."""
    ledger = Ledger(data)
    for job in jobs:
        for t, o in enumerate(raw[job.index].run):
            if o is not None:
                ledger.take(t, job.options[o])
    return ledger.used


def left_for(data: ModelData, raw: Sequence[RawPlan], group: set[int], used=None, own=None):
    """Per (slot, type, level): κ_gs less what the SLO jobs outside ``group`` take. ``used``:
    what every SLO job of ``raw`` takes (``used_by``), kept by a caller that asks for many
    groups of one plan (the repair): then only the group's own plans are read, not all, and
    not even those when the caller has read them already (``own``: what the group's SLO jobs
    take, ``used_by``; the repair takes it out of its ledger after a step that gains)."""
    if used is None:
        fixed = [j for j in data.jobs if j.is_slo and j.index not in group]
        used = used_by(data, raw, fixed)
    else:
        if own is None:
            own = used_by(data, raw, [data.jobs[i] for i in group if data.jobs[i].is_slo])
        used = {key: n - own.get(key, 0) for key, n in used.items()}
    return {
        (t, g, s): data.chunk_capacity[g, s] - used.get((t, g, s), 0)
        for t in range(data.T)
        for (g, s) in data.chunk_capacity
    }


def improve_group(
    sub: ModelData, start: list[RawPlan], seconds: float, seed: int, deterministic: bool = False
) -> list[RawPlan] | None:
    """CP-SAT on L1 of ``sub`` from ``start`` (a feasible plan of it) for ``seconds`` (of
    CP-SAT's deterministic time with ``deterministic``): a plan of strictly more value, or
    None."""
    from schedopt.model.emit_cpsat import CpsatSession  # the solver, on first use

    from .codec import decode, encode
    from .exact import AdmissionHooks
    from .model import build_model

    # deterministic: the build's wall time must not change CP-SAT's limit (the wall clock only
    # caps a runaway step, as SolveOptions.deterministic does)
    deadline = Deadline.after(10 * seconds + 10 if deterministic else seconds)
    # C1–C7 and L1 alone: the count changes (C9) are read by L3 only, and half the rows; with
    # B1c's whole-slot rows, valid for every plan, which tighten CP-SAT's LP (RESULTS.md,
    # "Admission's repair step: CP-SAT settings per CPU second")
    am = build_model(sub, deadline=deadline, l1_only=True, whole_slots=True)
    session = CpsatSession(am.model, AdmissionHooks.cpsat_linearization_level)
    session.set_level(am.model.levels[0])
    session.set_hint(encode(am, start))
    run = session.run(
        seconds if deterministic else max(0.01, deadline.remaining()),
        SolveOptions(
            time_limit_s=max(0.01, seconds), seed=seed, threads=1, deterministic=deterministic
        ),
    )
    if run.values is None:
        return None
    found = decode(am, run.values)
    if guaranteed_value(sub, found) <= guaranteed_value(sub, start):
        return None
    return found


def groups(
    data: ModelData, raw: Sequence[RawPlan], size: int, rng, by_slot: bool = False
) -> list[list[int]]:
    """SLO jobs in windows of ``size`` consecutive ones (from a random offset) in the order of
    their first deadline or, ``by_slot``, of the mean slot they run in (a rejected job: the
    slot before its first deadline), ties at random."""

    def where(job: JobData) -> float:
        if by_slot:
            slots = [t for t, o in enumerate(raw[job.index].run) if o is not None]
            if slots:
                return sum(slots) / len(slots)
        return job.tiers[0].slots_before - (1 if by_slot else 0)

    slo = sorted((j for j in data.jobs if j.is_slo), key=lambda j: (where(j), rng.random()))
    if not slo:
        return []
    offset = int(rng.integers(0, max(1, min(size, len(slo)))))
    out = [slo[max(0, a) : a + size] for a in range(-offset, len(slo), size)]
    return [[j.index for j in g] for g in out if g]


def step_seconds(size: int, since: tuple[float, float], deterministic: bool) -> float:
    """A step's CP-SAT limit for a group of ``size`` jobs: STEP_S a GROUP_JOBS in CPU seconds,
    on the wall clock that times the wall per CPU second the repair has had ``since`` its
    start (``wall_per_cpu``; deterministic: CP-SAT's deterministic time, not stretched).
    Beside other work a step of STEP_S wall seconds got a third of its CPU and found nothing
    in the windows quiet steps improve (256 GPUs × 800 jobs, a third of a core emulated: a
    gain of 0, 0, 10 over 12-13 steps on s0 and 0 in 3 of 3 runs on s1; in CPU seconds 22 in
    7-8 steps and 20 in 6-7, every run; benchmarks/RESULTS.md, "Admission at a third of a
    core")."""
    stretch = 1.0 if deterministic else wall_per_cpu(*since)
    return STEP_S * size / GROUP_JOBS * stretch


def _pass_kind(passes: int, guided: bool) -> str:
    """Groups of pass ``passes`` (from 1): by deadline, then by slot, in turn; with an LP
    guide every third pass is its neighbourhoods (deadline, slot, lp, slot, deadline, lp): the
    windows gain the most first (10 s at load 4 is about two passes), the LP's groups keep
    gaining once the windows are a local optimum (benchmarks/RESULTS.md)."""
    if guided and passes % 3 == 0:
        return "lp"
    return "slot" if passes % 2 == 0 else "deadline"


def repair(
    data: ModelData,
    raw: list[RawPlan],
    deadline: Deadline,
    seed: int = 0,
    lp: L1Bound | None = None,
    *,
    max_steps: int | None = None,
    deterministic: bool = False,
) -> tuple[list[RawPlan], dict[str, float]]:
    """``raw`` (its SLO plans: best-effort plans are dropped) improved group by group until
    ``deadline`` (or ``max_steps`` CP-SAT steps); every step keeps the plan feasible. With
    ``lp`` (the LP point of the bound), every third pass works on the LP's neighbourhoods
    (``neighbourhood.py``). ``deterministic``: each step on CP-SAT's deterministic time, so
    that a run with ``max_steps`` is reproducible (benchmarks/admission_repair.py)."""
    rng = np.random.default_rng(seed)
    current = [
        RawPlan(list(r.run), r.admitted, r.tier) if j.is_slo else RawPlan([None] * data.T)
        for j, r in zip(data.jobs, raw, strict=True)
    ]
    slo = [j for j in data.jobs if j.is_slo]
    # C3's ledger of every SLO plan, kept as the steps replace plans: a group's capacity is
    # this less its own plans (was a pass over all 3,200 jobs per step: 0.26 of 10 s)
    used = used_by(data, current, slo)
    steps = improved = lp_steps = lp_improved = rounded = 0
    gained = 0
    guided = lp is not None and bool(lp.tier)
    idle_passes = passes = 0
    began = (time.perf_counter(), time.process_time())
    while deadline.remaining() > 0.15 and idle_passes < IDLE_PASSES:
        if max_steps is not None and steps >= max_steps:
            break
        gained_before = improved
        # after a pass without a gain, larger groups (a local optimum of the smaller ones)
        size = GROUP_JOBS * 2 ** min(idle_passes, 2)
        passes += 1
        kind = _pass_kind(passes, guided)
        if kind == "lp":
            assert lp is not None
            batch = lp_groups(data, current, lp, size, rng)
        else:
            batch = groups(data, current, size, rng, by_slot=kind == "slot")
        for indices in batch:
            seconds = min(step_seconds(size, began, deterministic), deadline.remaining() - 0.1)
            if seconds < 0.05 or (max_steps is not None and steps >= max_steps):
                break
            group = [data.jobs[i] for i in indices if data.jobs[i].is_slo]
            own = used_by(data, current, group)  # read once: the ledger's update reuses it
            left = left_for(data, current, set(indices), used, own)
            sub = data.subset(indices, slot_capacity=left)
            start = [current[i] for i in indices]
            hint = start
            if kind == "lp":
                hint = lp_start(sub, start, deadline.earlier(0.1), deterministic)
                rounded += hint is not start
                seconds = min(seconds, deadline.remaining() - 0.1)  # the LP took its share
            try:
                # CP-SAT's first import gated by the repair's deadline, not the group's share
                # (deterministic: not gated); refused, the group keeps its plan (or LP start)
                found = (
                    improve_group(sub, hint, seconds, seed + steps, deterministic)
                    if seconds > 0.02
                    and solver_in_time(CPSAT, first_import_deadline(deadline, deterministic))
                    else None
                )
            except DeadlineReached:
                found = None
            steps += 1
            lp_steps += kind == "lp"
            found = found or (hint if hint is not start else None)
            if found is None:
                continue
            gained += guaranteed_value(sub, found) - guaranteed_value(sub, start)
            improved += 1
            lp_improved += kind == "lp"
            for key, n in own.items():
                used[key] -= n
            for i, r in zip(indices, found, strict=True):
                current[i] = r
            for key, n in used_by(data, current, group).items():
                used[key] = used.get(key, 0) + n
        idle_passes = 0 if improved > gained_before else idle_passes + 1
    stats = {
        "repair_steps": float(steps),
        "repair_improved": float(improved),
        "repair_gain": gained / 1000,
        "repair_passes": float(passes),
    }
    if guided:
        stats.update(
            repair_lp_steps=float(lp_steps),
            repair_lp_improved=float(lp_improved),
            repair_lp_rounded=float(rounded),
        )
    return current, stats


__all__ = ["GROUP_JOBS", "improve_group", "left_for", "repair", "used_by"]
