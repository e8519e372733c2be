"""Independent validator and evaluator of time-share solutions.

Everything is re-derived from the raw instance fields, in plain Python over dicts: nothing is
shared with ``data.py``, ``model.py`` or the solvers, so a modelling bug shows up as a
violation or a disagreement instead of being checked against itself. V-numbers and symbols are
those of formulations/timeshare.md.
"""

from __future__ import annotations

from collections import defaultdict

from schedopt.core.result import Violation

from .instance import Policy, TimeshareInstance
from .solution import TimeshareSolution

#: Slack of the feasibility checks (solver tolerances on rows of a few thousand terms).
TOL = 1e-6


class _Pairs:
    """Who may share GPUs, and at what rates: the declared pairs, or the co-location table by
    job type, read here from the raw fields (apart from data.py and columns.py)."""

    def __init__(self, inst: TimeshareInstance):
        self.inst = inst
        self.given = {frozenset(p.jobs): p for p in inst.pairs}
        self.by_type: dict[tuple[str, str], dict[str, tuple[float, float]]] = {}
        for entry in inst.colocation:
            a, b = entry.job_types
            self.by_type[(a, b)] = dict(entry.throughput)
            if a != b:
                self.by_type[(b, a)] = {w: (y, x) for w, (x, y) in entry.throughput.items()}

    def rates(self, a: str, b: str) -> dict[str, tuple[float, float]] | None:
        """GPU type → (a's, b's) throughput while a and b share it; None: they are no pair."""
        pair = self.given.get(frozenset((a, b)))
        if pair is not None and a != b:
            if pair.jobs[0] == a:
                return dict(pair.throughput)
            return {w: (y, x) for w, (x, y) in pair.throughput.items()}
        index = self.inst.job_index
        if not self.by_type or a == b or a not in index or b not in index:
            return None
        ia, ib = index[a], index[b]
        ta, tb = self.inst.jobs[ia].job_type, self.inst.jobs[ib].job_type
        table = None if ta is None or tb is None else self.by_type.get((ta, tb))
        if table is None:
            return None
        if ta == tb and ia > ib:  # two jobs of one type: the earlier takes the first rate
            return {w: (y, x) for w, (x, y) in table.items()}
        return table


def validate(inst: TimeshareInstance, sol: TimeshareSolution) -> list[Violation]:
    out: list[Violation] = []
    jobs = {j.id: j for j in inst.jobs}
    pairs = _Pairs(inst)
    time: dict[str, float] = defaultdict(float)
    gpus: dict[str, float] = defaultdict(float)
    seen: set[tuple[str, str | None, str]] = set()
    for k, s in enumerate(sol.shares):
        where = f"shares[{k}]"
        if any(m not in jobs for m in s.members) or s.worker_type not in inst.workers:
            out.append(Violation("V1", f"{where} names an unknown job or GPU type"))
            continue
        if s.with_job is not None and pairs.rates(s.job, s.with_job) is None:
            out.append(Violation("V1", f"{where}: {s.job!r} and {s.with_job!r} are no pair"))
            continue
        key = (s.job, s.with_job, s.worker_type)
        if key in seen or (s.with_job, s.job, s.worker_type) in seen:
            out.append(Violation("V1", f"{where} repeats {key}"))
        seen.add(key)
        if not _runs(inst, pairs, s.job, s.with_job, s.worker_type):
            out.append(
                Violation(
                    "V4",
                    f"{where}: cannot run on {s.worker_type} (a throughput of 0, or more GPUs "
                    "than the type has)",
                )
            )
        for m in s.members:
            time[m] += s.fraction
        gpus[s.worker_type] += jobs[s.job].scale_factor * s.fraction
    for jid, used in time.items():
        if used > 1 + TOL:
            out.append(Violation("V2", f"job {jid!r} runs {used:.9g} of the round (> 1)"))
    for w, used in gpus.items():
        if used > inst.workers[w] + TOL * max(1.0, inst.workers[w]):
            out.append(
                Violation(
                    "V3", f"{used:.9g} GPUs of {w} in use on average, {inst.workers[w]} exist"
                )
            )
    return out


def _runs(inst: TimeshareInstance, pairs: _Pairs, job: str, other: str | None, w: str) -> bool:
    """Can the combination run on ``w``: every member's throughput there is positive, and its
    GPUs fit in the type (V4)."""
    if inst.workers[w] < inst.jobs[inst.job_index[job]].scale_factor:
        return False
    if other is None:
        return inst.jobs[inst.job_index[job]].throughput.get(w, 0.0) > 0
    rates = pairs.rates(job, other) or {}
    return all(r > 0 for r in rates.get(w, (0.0, 0.0)))


def job_throughputs(inst: TimeshareInstance, sol: TimeshareSolution) -> dict[str, float]:
    """ρ_j: steps/s of every job under the fractions (the blind policy counts time, T := 1)."""
    blind = inst.policy is Policy.MAX_MIN_FAIRNESS
    rho = {j.id: 0.0 for j in inst.jobs}
    pairs = _Pairs(inst)
    for s in sol.shares:
        if s.with_job is None:
            rate = inst.jobs[inst.job_index[s.job]].throughput.get(s.worker_type, 0.0)
            rho[s.job] += s.fraction * (1.0 if blind and rate > 0 else rate)
            continue
        table = pairs.rates(s.job, s.with_job) or {}
        mine, theirs = table.get(s.worker_type, (0.0, 0.0))
        rho[s.job] += s.fraction * mine
        rho[s.with_job] += s.fraction * theirs
    return rho


def equal_split(inst: TimeshareInstance) -> dict[str, float]:
    """p_j, Gavel's ``ProportionalPolicy`` throughput: every type in proportion to its size."""
    total = sum(inst.workers.values())
    return {
        j.id: sum(r * inst.workers[w] / total for w, r in j.throughput.items()) for j in inst.jobs
    }


def isolated(inst: TimeshareInstance) -> dict[str, float]:
    """i_j, Gavel's ``IsolatedPolicy`` throughput."""
    n = len(inst.jobs)
    out = {}
    for j in inst.jobs:
        x = {w: inst.workers[w] / n / j.scale_factor for w in inst.workers}
        norm = max(1.0, sum(x.values()))
        out[j.id] = sum(r * x[w] / norm for w, r in j.throughput.items())
    return out


def finish_time_ratios(inst: TimeshareInstance, rho: dict[str, float]) -> dict[str, float]:
    """ρ^FTF_j = (τ_j + R_j/ρ_j) / (θ_j + R_j/i_j); inf for a job that does not run."""
    iso = isolated(inst)
    out = {}
    for j in inst.jobs:
        r = j.remaining_steps or 0.0
        own = j.time_since_start_s + (r / rho[j.id] if rho[j.id] > 0 else float("inf"))
        out[j.id] = own / (j.isolated_time_s + r / iso[j.id])
    return out


def evaluate(inst: TimeshareInstance, sol: TimeshareSolution) -> tuple[float, float]:
    """(L1, L2): L1 the policy's value as a maximum (the minimum weighted throughput; the
    isolated split's makespan / the makespan; 1 / the largest finish-time ratio), L2 the mean
    of the weighted throughputs."""
    if not inst.jobs:
        return (0.0, 0.0)
    rho = job_throughputs(inst, sol)
    weighted = weighted_throughputs(inst, rho)
    mean = sum(weighted.values()) / len(weighted) if inst.efficiency else 0.0
    return (min(weighted.values()), mean)


def weighted_throughputs(inst: TimeshareInstance, rho: dict[str, float]) -> dict[str, float]:
    """a_j ρ_j of every job, with the policy's a_j (finish-time fairness: 1/q_j(r(x)))."""
    policy = inst.policy
    if policy is Policy.MAX_MIN_FAIRNESS:
        return {j.id: j.scale_factor * rho[j.id] / j.priority_weight for j in inst.jobs}
    if policy is Policy.MAX_MIN_FAIRNESS_PERF:
        p = equal_split(inst)
        return {j.id: j.scale_factor * rho[j.id] / (j.priority_weight * p[j.id]) for j in inst.jobs}
    if policy is Policy.MIN_MAKESPAN:
        iso = isolated(inst)
        reference = max((j.remaining_steps or 0.0) / iso[j.id] for j in inst.jobs)
        return {j.id: reference * rho[j.id] / (j.remaining_steps or 1.0) for j in inst.jobs}
    ratios = finish_time_ratios(inst, rho)
    worst = max(ratios.values())
    if worst == float("inf"):
        return {j.id: 0.0 for j in inst.jobs}
    iso = isolated(inst)
    out = {}
    for j in inst.jobs:
        r = j.remaining_steps or 0.0
        expected = j.isolated_time_s + r / iso[j.id]
        # q_j(worst) = R_j / (worst·E_j − τ_j); the ratio ρ_j / q_j is 1 for the worst job.
        out[j.id] = rho[j.id] * (worst * expected - j.time_since_start_s) / r / worst
    return out


def metrics(inst: TimeshareInstance, sol: TimeshareSolution) -> dict[str, float]:
    """What a person asks of an allocation: the policy's own number, GPUs in use."""
    rho = job_throughputs(inst, sol)
    running = {m for s in sol.shares if s.fraction > 1e-9 for m in s.members}
    out: dict[str, float] = {
        "jobs_running": float(len(running)),
        "gpus_in_use": sum(
            inst.jobs[inst.job_index[s.job]].scale_factor * s.fraction for s in sol.shares
        ),
        "gpus": float(sum(inst.workers.values())),
    }
    if inst.jobs:
        weighted = weighted_throughputs(inst, rho)
        out["mean_weighted_throughput"] = sum(weighted.values()) / len(weighted)
    if inst.policy is Policy.MIN_MAKESPAN and inst.jobs:
        out["makespan_s"] = max(
            (j.remaining_steps or 0.0) / rho[j.id] if rho[j.id] > 0 else float("inf")
            for j in inst.jobs
        )
    if inst.policy is Policy.FINISH_TIME_FAIRNESS and inst.jobs:
        out["max_finish_time_ratio"] = max(finish_time_ratios(inst, rho).values())
    return out
