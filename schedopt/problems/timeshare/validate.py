"""Independent validator and evaluator of time-share solutions.

Everything is re-derived from the raw instance fields: nothing is shared with ``data.py``,
``model.py``, ``columns.py`` or the solvers, so a modelling bug shows up as a violation or a
disagreement instead of being checked against itself. The solution is read as arrays (its
:class:`~.solution.Shares`), never as 10^5 share objects; the instance's fields are read
into arrays here, once per call. V-numbers and symbols are those of
formulations/timeshare.md.
"""

from __future__ import annotations

import numpy as np

from schedopt.core.result import Violation

from .instance import Policy, TimeshareInstance
from .solution import TimeshareSolution

#: Slack of the feasibility checks (solver tolerances on rows of a few thousand terms).
TOL = 1e-6
#: At most this many messages per check: one bad solver point can break 10^5 shares.
MAX_MESSAGES = 20


def _raw(inst: TimeshareInstance) -> _Raw:
    """The instance's fields as arrays, read once per instance."""
    # validate, evaluate and metrics of one answer read them (three calls per solve)
    return inst.derived("timeshare.validate", lambda: _Raw(inst))


class _Raw:
    """The instance's fields as arrays, in the order of ``jobs`` and ``workers``, and who may
    share GPUs at what rates (read when first asked)."""

    def __init__(self, inst: TimeshareInstance):
        # the fields read later; not the instance itself (kept in its derived views, a reference
        # back would make a cycle that only the cyclic collector frees)
        self.policy, self.pairs, self.entries = inst.policy, inst.pairs, inst.colocation
        self.job_types = [j.job_type for j in inst.jobs]
        self.index = inst.job_index
        self.types = list(inst.workers)
        col = {w: k for k, w in enumerate(self.types)}
        self.type_index = col
        self.gpus = np.array([float(inst.workers[w]) for w in self.types])
        jobs = inst.jobs
        self.rate = np.zeros((len(jobs), len(self.types)))
        for i, job in enumerate(jobs):
            for w, r in job.throughput.items():
                self.rate[i, col[w]] = r
        self.scale = np.array([float(j.scale_factor) for j in jobs])
        self.priority = np.array([j.priority_weight for j in jobs])
        #: R_j (0 where not given), τ_j, θ_j
        self.remaining = np.array([j.remaining_steps or 0.0 for j in jobs])
        self.since = np.array([j.time_since_start_s for j in jobs])
        self.done = np.array([j.isolated_time_s for j in jobs])
        self._pairs: tuple[np.ndarray, np.ndarray] | None = None
        self._table: tuple[np.ndarray, int, dict[int, int], np.ndarray] | None = None

    def given_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """The declared pairs: their codes (lower job index · n + higher), sorted, and their
        rates (P × W × 2, the lower index's first)."""
        if self._pairs is None:
            pairs, n = self.pairs, len(self.job_types)
            table = np.zeros((len(pairs), len(self.types), 2))
            codes = np.empty(len(pairs), dtype=np.int64)
            for k, pair in enumerate(pairs):
                x, y = self.index[pair.jobs[0]], self.index[pair.jobs[1]]
                codes[k] = min(x, y) * n + max(x, y)
                for name, (rx, ry) in pair.throughput.items():
                    table[k, self.type_index[name]] = (rx, ry) if x < y else (ry, rx)
            order = np.argsort(codes)
            self._pairs = codes[order], table[order]
        return self._pairs

    def colocation(self) -> tuple[np.ndarray, int, dict[int, int], np.ndarray]:
        """Each job's type number (-1: none, and a last -1), the number of types, each type
        pair's entry (code lower · K + higher → row) and the entries' rates (E × W × 2, the
        lower type's first)."""
        if self._table is None:
            names = sorted({t for t in self.job_types if t is not None})
            kind = {t: k for k, t in enumerate(names)}
            of_job = [-1 if t is None else kind[t] for t in self.job_types]
            rows: dict[int, int] = {}
            stack: list[np.ndarray] = []
            for entry in self.entries:
                ta, tb = entry.job_types
                if ta not in kind or tb not in kind:
                    continue
                ka, kb = kind[ta], kind[tb]
                rates = np.zeros((len(self.types), 2))
                for name, (ra, rb) in entry.throughput.items():
                    rates[self.type_index[name]] = (ra, rb) if ka <= kb else (rb, ra)
                rows[min(ka, kb) * len(names) + max(ka, kb)] = len(stack)
                stack.append(rates)
            table = np.array(stack) if stack else np.zeros((0, len(self.types), 2))
            self._table = np.array([*of_job, -1], dtype=np.int64), len(names), rows, table
        return self._table


class _Shares:
    """A solution's entries on the instance's indices (-1: a name the instance lacks)."""

    def __init__(self, raw: _Raw, sol: TimeshareSolution):
        s = sol.shares
        jobs = np.array([raw.index.get(j, -1) for j in s.jobs] + [-1], dtype=np.int64)
        types = np.array([raw.type_index.get(w, -1) for w in s.types] + [-1], dtype=np.int64)
        self.job = jobs[s.job]
        self.partner = np.where(s.partner >= 0, jobs[s.partner], -1)
        self.paired = s.partner >= 0
        self.type = types[s.type]
        self.fraction = s.fraction
        self.known = (self.job >= 0) & (~self.paired | (self.partner >= 0)) & (self.type >= 0)


def _pair_rates(
    raw: _Raw, a: np.ndarray, b: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(is a pair, a's rate, b's rate) of jobs ``a`` and ``b`` sharing GPU type ``w``: the
    declared pairs, or the co-location table by job type (the earlier of two jobs of one type
    takes the type pair's first rate)."""
    n = len(raw.job_types)
    found = np.zeros(len(a), dtype=bool)
    mine, theirs = np.zeros(len(a)), np.zeros(len(a))
    if raw.pairs:
        codes, table = raw.given_pairs()
        code = np.minimum(a, b) * n + np.maximum(a, b)
        pos = np.minimum(np.searchsorted(codes, code), len(codes) - 1)
        found = (codes[pos] == code) & (a != b)
        rates = table[pos, w]  # (the lower index's, the higher's)
        first = a < b
        mine = np.where(first, rates[:, 0], rates[:, 1])
        theirs = np.where(first, rates[:, 1], rates[:, 0])
    elif raw.entries:
        job_kind, kinds, rows, table = raw.colocation()
        ka, kb = job_kind[a], job_kind[b]
        code = np.minimum(ka, kb) * kinds + np.maximum(ka, kb)
        unique, inverse = np.unique(code, return_inverse=True)
        row = np.array([rows.get(c, -1) for c in unique.tolist()], dtype=np.int64)[inverse]
        found = (ka >= 0) & (kb >= 0) & (a != b) & (row >= 0)
        rates = table[np.where(found, row, 0), w] if len(table) else np.zeros((len(a), 2))
        rates[~found] = 0.0
        first = (ka < kb) | ((ka == kb) & (a < b))  # a takes the entry's first rate
        mine = np.where(first, rates[:, 0], rates[:, 1])
        theirs = np.where(first, rates[:, 1], rates[:, 0])
    return found, mine, theirs


def _sum(idx: np.ndarray, weights: np.ndarray, minlength: int) -> np.ndarray:
    """Σ of ``weights`` by ``idx`` (floats even when both are empty)."""
    out = np.bincount(idx, weights=weights, minlength=minlength)
    return out.astype(np.float64, copy=False)


def _messages(out: list[Violation], rule: str, where: np.ndarray, say) -> None:
    for k in where[:MAX_MESSAGES].tolist():
        out.append(Violation(rule, say(k)))
    if len(where) > MAX_MESSAGES:
        out.append(Violation(rule, f"... and {len(where) - MAX_MESSAGES} more"))


def validate(inst: TimeshareInstance, sol: TimeshareSolution) -> list[Violation]:
    out: list[Violation] = []
    raw = _raw(inst)
    e = _Shares(raw, sol)
    shares = sol.shares  # an entry is made a Share object only for a message
    f = e.fraction
    # V1: fractions in [0, 1], known names, declared pairs, each combination once
    bad = np.flatnonzero(~np.isfinite(f) | (f < 0) | (f > 1))
    _messages(out, "V1", bad, lambda k: f"shares[{k}]: fraction {f[k]!r} is not in [0, 1]")
    _messages(
        out,
        "V1",
        np.flatnonzero(~e.known),
        lambda k: f"shares[{k}] names an unknown job or GPU type",
    )
    job, partner, w = e.job[e.known], e.partner[e.known], e.type[e.known]
    at = np.flatnonzero(e.known)  # the entries checked from here on
    two = partner >= 0
    is_pair, mine, theirs = np.ones(len(at), dtype=bool), raw.rate[job, w], np.zeros(len(at))
    if np.any(two):
        found, m2, t2 = _pair_rates(raw, job[two], partner[two], w[two])
        is_pair[two], mine[two], theirs[two] = found, m2, t2

    def no_pair(k: int) -> str:
        a, b = shares[k].job, shares[k].with_job
        return f"shares[{k}]: {a!r} and {b!r} are no pair"

    _messages(out, "V1", at[~is_pair], no_pair)
    job, partner, w, at = job[is_pair], partner[is_pair], w[is_pair], at[is_pair]
    mine, theirs, two = mine[is_pair], theirs[is_pair], two[is_pair]
    n = max(1, len(inst.jobs))
    lo = np.where(two, np.minimum(job, partner), job)
    hi = np.where(two, np.maximum(job, partner), -1)
    code = (lo * (n + 1) + hi + 1) * max(1, len(raw.types)) + w
    _, first = np.unique(code, return_index=True)
    again = np.ones(len(code), dtype=bool)
    again[first] = False
    _messages(
        out,
        "V1",
        at[again],
        lambda k: f"shares[{k}] repeats {shares[k].job, shares[k].with_job, shares[k].worker_type}",
    )
    # V4: every member's throughput there positive, and the gang fits in the type
    runs = (mine > 0) & (~two | (theirs > 0)) & (raw.scale[job] <= raw.gpus[w])
    _messages(
        out,
        "V4",
        at[~runs],
        lambda k: (
            f"shares[{k}]: cannot run on {shares[k].worker_type} (a throughput "
            "of 0, or more GPUs than the type has)"
        ),
    )
    # V2: a job runs at most the round; V3: GPUs in use per type within the type's
    f = f[at]
    time = _sum(job, weights=f, minlength=len(inst.jobs))
    time += _sum(partner[two], weights=f[two], minlength=len(inst.jobs))
    ids = list(raw.index)
    _messages(
        out,
        "V2",
        np.flatnonzero(time > 1 + TOL),
        lambda j: f"job {ids[j]!r} runs {time[j]:.9g} of the round (> 1)",
    )
    used = _sum(w, weights=raw.scale[job] * f, minlength=len(raw.types))
    _messages(
        out,
        "V3",
        np.flatnonzero(used > raw.gpus + TOL * np.maximum(1.0, raw.gpus)),
        lambda k: (
            f"{used[k]:.9g} GPUs of {raw.types[k]} in use on average, {int(raw.gpus[k])} exist"
        ),
    )
    return out


def _throughputs(
    inst: TimeshareInstance, sol: TimeshareSolution, raw: _Raw, real: bool = False
) -> np.ndarray:
    """ρ_j of every job (in the order of ``jobs``) under the fractions of a valid solution
    (``real``: steps/s also for the throughput-blind policy)."""
    e = _Shares(raw, sol)
    one = ~e.paired & e.known
    rate = raw.rate[e.job[one], e.type[one]]
    if inst.policy is Policy.MAX_MIN_FAIRNESS and not real:  # blind: time counts (T := 1)
        rate = (rate > 0).astype(np.float64)
    rho = _sum(e.job[one], weights=e.fraction[one] * rate, minlength=len(inst.jobs))
    two = e.paired & e.known
    if np.any(two):
        a, b, w, f = e.job[two], e.partner[two], e.type[two], e.fraction[two]
        found, mine, theirs = _pair_rates(raw, a, b, w)
        rho += _sum(a, weights=f * mine * found, minlength=len(inst.jobs))
        rho += _sum(b, weights=f * theirs * found, minlength=len(inst.jobs))
    return rho


def job_throughputs(inst: TimeshareInstance, sol: TimeshareSolution) -> dict[str, float]:
    """ρ_j: steps/s of every job under the fractions (the blind policy counts time, T := 1)."""
    rho = _throughputs(inst, sol, _raw(inst))
    return dict(zip(inst.job_index, rho.tolist(), strict=True))


def _equal_split(raw: _Raw) -> np.ndarray:
    """p_j, Gavel's ``ProportionalPolicy`` throughput: every type in proportion to its size."""
    return raw.rate @ (raw.gpus / raw.gpus.sum())


def _isolated(raw: _Raw) -> np.ndarray:
    """i_j, Gavel's ``IsolatedPolicy`` throughput."""
    x = raw.gpus[None, :] / max(1, len(raw.job_types)) / raw.scale[:, None]
    norm = np.maximum(1.0, x.sum(axis=1))
    return (raw.rate * x).sum(axis=1) / norm


def _ratios(raw: _Raw, rho: np.ndarray) -> np.ndarray:
    """ρ^FTF_j = (τ_j + R_j/ρ_j) / (θ_j + R_j/i_j); inf for a job that does not run."""
    remaining, since, done = raw.remaining, raw.since, raw.done
    with np.errstate(divide="ignore", invalid="ignore"):
        own = since + np.where(rho > 0, remaining / np.where(rho > 0, rho, 1.0), np.inf)
        return own / (done + remaining / _isolated(raw))


def _weighted(raw: _Raw, rho: np.ndarray) -> np.ndarray:
    """a_j ρ_j of every job, with the policy's a_j (finish-time fairness: 1/q_j(r(x)))."""
    policy = raw.policy
    priority = raw.priority
    if policy is Policy.MAX_MIN_FAIRNESS:
        return raw.scale * rho / priority
    if policy is Policy.MAX_MIN_FAIRNESS_PERF:
        return raw.scale * rho / (priority * _equal_split(raw))
    remaining, since, done = raw.remaining, raw.since, raw.done
    iso = _isolated(raw)
    if policy is Policy.MIN_MAKESPAN:
        reference = float(np.max(remaining / iso))
        return reference * rho / np.where(remaining > 0, remaining, 1.0)
    ratios = _ratios(raw, rho)
    worst = float(np.max(ratios))
    if worst == float("inf"):
        return np.zeros(len(rho))
    expected = done + remaining / iso
    # q_j(worst) = R_j / (worst·E_j − τ_j); the ratio ρ_j / q_j is 1 for the worst job.
    return rho * (worst * expected - since) / remaining / worst


def weighted_throughputs(inst: TimeshareInstance, rho: dict[str, float]) -> dict[str, float]:
    """a_j ρ_j of every job, with the policy's a_j (finish-time fairness: 1/q_j(r(x)))."""
    values = _weighted(_raw(inst), np.array([rho[j.id] for j in inst.jobs]))
    return dict(zip(inst.job_index, values.tolist(), strict=True))


def evaluate(inst: TimeshareInstance, sol: TimeshareSolution) -> tuple[float, float]:
    """(L1, L2): L1 the policy's value as a maximum (the minimum weighted throughput; the
    isolated split's makespan / the makespan; 1 / the largest finish-time ratio), L2 the mean
    of the weighted throughputs (throughput-blind: of the perf-normalised real throughputs)."""
    if not inst.jobs:
        return (0.0, 0.0)
    raw = _raw(inst)
    weighted = _weighted(raw, _throughputs(inst, sol, raw))
    if not inst.efficiency:
        return (float(np.min(weighted)), 0.0)
    if inst.policy is Policy.MAX_MIN_FAIRNESS:  # L2 on real rates, as max-min perf's (#19)
        p = raw.priority * _equal_split(raw)
        perf = np.divide(raw.scale, p, out=np.zeros_like(p), where=p > 0)
        return (float(np.min(weighted)), float(np.mean(perf * _throughputs(inst, sol, raw, True))))
    return (float(np.min(weighted)), float(np.mean(weighted)))


def metrics(inst: TimeshareInstance, sol: TimeshareSolution) -> dict[str, float]:
    """What a person asks of an allocation: the policy's own number, GPUs in use."""
    raw = _raw(inst)
    rho = _throughputs(inst, sol, raw)
    e = _Shares(raw, sol)
    on = e.known & (e.fraction > 1e-9)
    running = np.zeros(len(inst.jobs) + 1, dtype=bool)
    running[e.job[on]] = True
    running[e.partner[on]] = True  # -1 (no partner) marks the extra last slot
    out: dict[str, float] = {
        "jobs_running": float(running[:-1].sum()),
        "gpus_in_use": float(np.sum(raw.scale[e.job[e.known]] * e.fraction[e.known])),
        "gpus": float(raw.gpus.sum()),
    }
    if inst.jobs:
        out["mean_weighted_throughput"] = float(np.mean(_weighted(raw, rho)))
    if inst.policy is Policy.MIN_MAKESPAN and inst.jobs:
        remaining = raw.remaining
        with np.errstate(divide="ignore"):
            out["makespan_s"] = float(np.max(np.where(rho > 0, remaining / rho, np.inf)))
    if inst.policy is Policy.FINISH_TIME_FAIRNESS and inst.jobs:
        out["max_finish_time_ratio"] = float(np.max(_ratios(raw, rho)))
    return out
