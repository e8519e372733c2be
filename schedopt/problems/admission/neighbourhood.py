"""Repair's LP-guided neighbourhoods (formulations/admission.md, "LP rounding and repair",
step 4): groups of SLO jobs chosen where the LP says value is left, each re-solved as an LP on
the capacity the other jobs leave, rounded, and then improved by CP-SAT.

- **Value left** of an SLO job: its value in the LP point of the bound (``Σ_k v_jk y_jk``) less
  its value in the current plan. The jobs with the most value left (rejected jobs the LP admits,
  jobs at a later tier than the LP's) seed the groups, largest first.
- **Competitors**: the other SLO jobs whose current plans take the capacity a seed's LP plan
  runs on, ranked by the LP's price of that capacity (its C3 duals) times the GPUs they hold
  there; these are the jobs that would have to move or go for the seed to fit.
- **The LP re-solved**: B1 with B1c over the group alone, with per slot, type and level the
  capacity every other SLO job leaves (``left_for``), rounded by ``lp_round``; a rounding of
  more value than the group's current plans replaces them, and CP-SAT starts from the better.

Any plan of the group joins the fixed plans within C3 (``repair.py``), and the rounding and
CP-SAT both keep C5 inside the group (``lp_round`` returns None when an earlier guarantee is
lost; the model has C5), so every step keeps the plan feasible and every earlier guarantee.
"""

from __future__ import annotations

from collections.abc import Sequence

from schedopt.core.stopping import Deadline, DeadlineReached

from .assemble import RawPlan, guaranteed_value
from .bound import L1Bound, l1_bound
from .data import ModelData
from .lp_round import lp_round

#: Seconds at most for a group's LP (a 60-job group's LP takes 10-30 ms).
GROUP_LP_S = 0.3
#: A job counts as having value left from this much (instance units).
MIN_LEFT = 1e-3
#: Share of a group's places that go to seeds; the rest are competitors.
SEED_SHARE = 0.25


def value_left(data: ModelData, raw: Sequence[RawPlan], lp: L1Bound) -> dict[int, float]:
    """Per SLO job with value left (module docstring): the LP's value less the plan's."""
    out = {}
    for job in data.jobs:
        if not job.is_slo:
            continue
        r = raw[job.index]
        have = job.tiers[r.tier].value if r.admitted and r.tier is not None else 0.0
        want = sum(lp.tier.get((job.index, k), 0.0) * t.value for k, t in enumerate(job.tiers))
        if want - have > MIN_LEFT:
            out[job.index] = want - have
    return out


def _lp_slots(data: ModelData, lp: L1Bound, jobs: set[int]) -> dict[int, set[int]]:
    """Per job of ``jobs``: the slots where the LP runs it, or every slot before its last
    deadline (one pass over the LP's point)."""
    out: dict[int, set[int]] = {i: set() for i in jobs}
    for (j, t, _), v in lp.run.items():
        if v > 1e-6 and j in out:
            out[j].add(t)
    for i, slots in out.items():
        if not slots:
            job = data.jobs[i]
            slots.update(range(job.arrival, max(t.slots_before for t in job.tiers)))
    return out


def lp_groups(
    data: ModelData, raw: Sequence[RawPlan], lp: L1Bound, size: int, rng
) -> list[list[int]]:
    """Groups of at most ``size`` SLO jobs, most value left first (module docstring); every
    seed is in one group, a competitor in several at most."""
    left = value_left(data, raw, lp)
    if not left:
        return []
    seeds = sorted(left, key=lambda i: (-left[i], rng.random()))
    lp_slots = _lp_slots(data, lp, set(left))
    run_slots = {
        j.index: [(t, j.options[o]) for t, o in enumerate(raw[j.index].run) if o is not None]
        for j in data.jobs
        if j.is_slo
    }
    price = {(t, g): v for (t, g, s), v in lp.prices.items() if s == 1}
    per_group = max(1, int(size * SEED_SHARE))
    used: set[int] = set()
    out = []
    for first in seeds:
        if first in used:
            continue
        # seeds that share the first one's LP slots, most value left first
        slots = lp_slots[first]
        group = [first]
        for i in seeds:
            if len(group) >= per_group:
                break
            if i not in used and i != first and lp_slots[i] & slots:
                group.append(i)
        used.update(group)
        wanted = set().union(*(lp_slots[i] for i in group))
        score = {}
        for i, plan in run_slots.items():
            if i in group:
                continue
            s = sum(price.get((t, o.gpu_type), 0.0) * o.n for t, o in plan if t in wanted)
            if s > 0:
                score[i] = s
        rivals = sorted(score, key=lambda i: (-score[i], rng.random()))[: size - len(group)]
        out.append(sorted(group + rivals))
    return out


def lp_start(
    sub: ModelData, start: list[RawPlan], deadline: Deadline, deterministic: bool = False
) -> list[RawPlan]:
    """The group's LP re-solved on its own capacity and rounded, when that is worth more
    than ``start`` (and keeps the group's earlier guarantees), else ``start``.
    ``deterministic``: the LP solved to its end (``deadline`` only the runaway cap)."""
    left = deadline.remaining() - 0.1
    seconds = left if deterministic else min(GROUP_LP_S, left)
    if seconds < 0.02:
        return start
    try:
        lp = l1_bound(sub, seconds, deadline)
        if not lp.admit:
            return start
        rounded = lp_round(sub, lp, deadline)
    except DeadlineReached:
        return start
    if rounded is None or guaranteed_value(sub, rounded) <= guaranteed_value(sub, start):
        return start
    return rounded


__all__ = ["lp_groups", "lp_start", "value_left"]
