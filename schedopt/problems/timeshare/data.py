"""The instance as arrays, and the columns of the model (formulations/timeshare.md, "Data").

A *column* is a combination (a job alone, or a pair) on one GPU type, kept only where every
member can run there. Columns are numbered singletons first, then pairs; the model and the
column generation index the same arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from schedopt.core.stopping import Deadline, Ticker

from .columns import ColocationTable, Columns, class_pair_columns
from .instance import Policy, TimeshareInstance


@dataclass(frozen=True)
class TimeshareData:
    instance: TimeshareInstance
    policy: Policy
    types: tuple[str, ...]
    #: N_w, GPUs per type.
    capacity: np.ndarray
    #: T_jw (J × W) as given; for the throughput-blind policy the model uses 1 where T_jw > 0.
    throughput: np.ndarray
    scale: np.ndarray
    priority: np.ndarray
    remaining: np.ndarray
    since_start: np.ndarray
    isolated_time: np.ndarray
    #: Pairs: job indices and the (P × W × 2) co-located throughputs.
    pair_first: np.ndarray
    pair_second: np.ndarray
    pair_rate: np.ndarray
    singles: Columns = field(repr=False)
    #: Space sharing by job type (``colocation``): each row's type index (-1: none) and the
    #: rates of every type pair (types ordered, the first type's job's rate first).
    row_type: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    colocation: ColocationTable = field(default_factory=dict, repr=False)
    #: Jobs that are identical in every field but the id share one row (``aggregate``): the
    #: row's job count, every original job's row, and each row's first job. None: one row
    #: per job.
    multiplicity: np.ndarray | None = field(default=None, repr=False)
    row_of_job: np.ndarray | None = field(default=None, repr=False)
    representative: np.ndarray | None = field(default=None, repr=False)

    @property
    def num_jobs(self) -> int:
        """Rows of the model: jobs, or classes of identical jobs after ``aggregate``."""
        return len(self.scale)

    @property
    def total_jobs(self) -> int:
        """|J|, the jobs of the round (Gavel's isolated split divides by it)."""
        return len(self.instance.jobs)

    @property
    def ids(self) -> list[str]:
        """The job id of every row (a class's first job after ``aggregate``)."""
        ids = [j.id for j in self.instance.jobs]
        if self.representative is None:
            return ids
        return [ids[i] for i in self.representative.tolist()]

    def members(self) -> list[np.ndarray]:
        """The original jobs of every row."""
        if self.row_of_job is None:
            return [np.array([j]) for j in range(self.num_jobs)]
        order = np.argsort(self.row_of_job, kind="stable")
        bounds = np.cumsum(np.bincount(self.row_of_job, minlength=self.num_jobs))[:-1]
        return np.split(order, bounds)

    @property
    def counts(self) -> np.ndarray:
        return np.ones(self.num_jobs) if self.multiplicity is None else self.multiplicity

    @property
    def num_types(self) -> int:
        return len(self.types)

    @property
    def num_pairs(self) -> int:
        return len(self.pair_first)

    @property
    def has_pairs(self) -> bool:
        """Space sharing: pairs given, or co-location by job type."""
        return bool(self.num_pairs or self.colocation)

    @property
    def order(self) -> np.ndarray:
        """Each row's first job (orients a pair of two jobs of one type)."""
        return np.arange(self.num_jobs) if self.representative is None else self.representative

    def equal_split_throughput(self) -> np.ndarray:
        """p_j: the throughput under Gavel's equal split (``ProportionalPolicy``)."""
        return self.throughput @ (self.capacity / self.capacity.sum())

    def isolated_throughput(self) -> np.ndarray:
        """i_j: the throughput under Gavel's isolated split (``IsolatedPolicy``)."""
        x = (self.capacity[None, :] / self.total_jobs) / self.scale[:, None]
        x = x / np.maximum(1.0, x.sum(axis=1))[:, None]
        return (self.throughput * x).sum(axis=1)

    def isolated_makespan(self) -> float:
        """T_iso = max_j R_j / i_j: the makespan of the isolated split."""
        return float(np.max(self.remaining / self.isolated_throughput()))

    def isolated_split(self) -> np.ndarray:
        """x^iso (J × W), feasible for C1 and C2 (formulations/timeshare.md)."""
        x = (self.capacity[None, :] / self.total_jobs) / self.scale[:, None]
        return x / np.maximum(1.0, x.sum(axis=1))[:, None]

    def weights(self) -> np.ndarray:
        """a_j of the linear policies (finish-time fairness sets its own per iteration)."""
        if self.policy is Policy.MAX_MIN_FAIRNESS:
            return self.scale / self.priority
        if self.policy is Policy.MAX_MIN_FAIRNESS_PERF:
            return self.scale / (self.priority * self.equal_split_throughput())
        if self.policy is Policy.MIN_MAKESPAN:
            # t = T_iso / makespan: the speed-up over the isolated split's makespan (a number
            # near 1, where 1/makespan in 1/s would sit below every solver tolerance).
            return self.isolated_makespan() / self.remaining
        raise ValueError(f"{self.policy.value} has no fixed weights")

    def level2_terms(
        self, weights: np.ndarray, jobs: np.ndarray, types: np.ndarray, rates: np.ndarray
    ) -> np.ndarray:
        """Level 2's weight per unit of each member entry's time (formulations/timeshare.md,
        "Level 2"): a_j T_{j,cw} with the model's a_j; for the throughput-blind policy, whose
        rates are 1, max-min perf's normalised throughput s_j T_jw / (π_j p_j) on the real
        rates (#19): among the time-fair optima, the one that gets the most work done."""
        if self.policy is not Policy.MAX_MIN_FAIRNESS:
            return weights[jobs] * rates
        p = self.priority * self.equal_split_throughput()
        perf = np.divide(self.scale, p, out=np.zeros_like(p), where=p > 0)
        return perf[jobs] * self.throughput[jobs, types]

    def pair_columns(self, deadline: Deadline | None = None) -> Columns:
        """Every pair on every type where both members run and the gang fits (C4)."""
        if self.colocation:
            return class_pair_columns(
                self.row_type,
                self.counts,
                self.order,
                self.scale,
                self.capacity,
                self.colocation,
                Ticker(deadline, "building the pair columns"),
            )
        rates = self.pair_rate  # P × W × 2
        fits = self.scale[self.pair_first][:, None] <= self.capacity[None, :]
        pair, w = np.nonzero((rates[:, :, 0] > 0) & (rates[:, :, 1] > 0) & fits)
        first = self.pair_first[pair]
        ones = np.ones(len(pair))
        return Columns(
            first,
            self.pair_second[pair],
            w,
            self.scale[first],
            rates[pair, w, 0],
            rates[pair, w, 1],
            ones,
            ones,
        )


def build_data(
    inst: TimeshareInstance, deadline: Deadline | None = None, pairs: bool = True
) -> TimeshareData:
    """The arrays of ``inst``; ``pairs=False`` leaves the pairs out (what works on jobs alone,
    as the isolated split, need not read 10^5 pairs)."""
    tick = Ticker(deadline, "building the timeshare data")
    types = inst.worker_types
    col = {w: k for k, w in enumerate(types)}
    jobs = inst.jobs
    n = len(jobs)
    thr = np.zeros((n, len(types)))
    for i, job in enumerate(jobs):
        for w, r in job.throughput.items():
            thr[i, col[w]] = r
        if i % 256 == 0:
            tick()
    capacity = np.array([float(inst.workers[w]) for w in types])
    thr[:, capacity == 0] = 0.0  # a type with no GPUs runs nothing
    index = inst.job_index
    given = inst.pairs if pairs else ()
    pf = np.array([index[p.jobs[0]] for p in given], dtype=np.int64)
    ps = np.array([index[p.jobs[1]] for p in given], dtype=np.int64)
    prate = np.zeros((len(given), len(types), 2))
    for k, p in enumerate(given):
        for w, (a, b) in p.throughput.items():
            if capacity[col[w]]:
                prate[k, col[w]] = (a, b)
        if k % 256 == 0:
            tick()
    scale = np.array([float(j.scale_factor) for j in jobs])
    # C4: a combination runs on a type only where its gang fits (s_c ≤ N_w).
    on, ty = np.nonzero((thr > 0) & (scale[:, None] <= capacity[None, :]))
    rate = np.ones(len(on)) if inst.policy is Policy.MAX_MIN_FAIRNESS else thr[on, ty]
    singles = Columns.alone(on, ty, scale[on], rate)
    row_type, table = _colocation(inst, col, capacity, tick) if pairs else (np.full(n, -1), {})
    return TimeshareData(
        instance=inst,
        policy=inst.policy,
        types=types,
        capacity=capacity,
        throughput=thr,
        scale=scale,
        priority=np.array([j.priority_weight for j in jobs]),
        remaining=np.array([j.remaining_steps or 0.0 for j in jobs]),
        since_start=np.array([j.time_since_start_s for j in jobs]),
        isolated_time=np.array([j.isolated_time_s for j in jobs]),
        pair_first=pf,
        pair_second=ps,
        pair_rate=prate,
        singles=singles,
        row_type=row_type,
        colocation=table,
    )


def _colocation(
    inst: TimeshareInstance, col: dict[str, int], capacity: np.ndarray, tick: Ticker
) -> tuple[np.ndarray, ColocationTable]:
    """Each job's type index and the co-location table, types ordered, rates 0 on a GPU type
    with no GPUs."""
    names = sorted({j.job_type for j in inst.jobs if j.job_type is not None})
    index = {t: k for k, t in enumerate(names)}
    row_type = np.array(
        [-1 if j.job_type is None else index[j.job_type] for j in inst.jobs], dtype=np.int64
    )
    table: ColocationTable = {}
    for entry in inst.colocation:
        if not all(t in index for t in entry.job_types):
            continue  # a type no job of the round has: no pair
        ta, tb = (index[t] for t in entry.job_types)
        rates = np.zeros((len(col), 2))
        for w, pair in entry.throughput.items():
            if capacity[col[w]]:
                rates[col[w]] = pair
        table[(ta, tb) if ta <= tb else (tb, ta)] = rates if ta <= tb else rates[:, ::-1]
        if len(table) % 256 == 0:
            tick()
    return row_type, table


def aggregate(data: TimeshareData) -> TimeshareData:
    """One row per class of jobs identical in every field but the id (Gavel's rounds draw
    from 26 job types: 2,048 jobs are a few dozen classes). Exact: averaging an optimal
    allocation over the jobs of a class keeps every row (C1–C3 are linear and the same for
    each of them), does not lower the minimum, and keeps level 2 (linear), so some optimum
    gives a class's jobs the same fractions. The class's GPUs count m·s in C2 and m times in
    level 2. With co-location by job type a class is also one type, and its pairs become class
    pairs (formulations/timeshare.md, "Identical jobs"); a type whose two rates with itself
    differ keeps its jobs apart (who takes which rate depends on the job). Rounds with pairs
    given one by one are kept as they are (a pair names two jobs)."""
    if data.num_pairs or data.num_jobs < 2:
        return data
    fields = [
        data.throughput,
        data.scale,
        data.priority,
        data.remaining,
        data.since_start,
        data.isolated_time,
    ]
    if data.colocation:
        lopsided = [
            ta for (ta, tb), r in data.colocation.items() if ta == tb and np.any(r[:, 0] != r[:, 1])
        ]
        apart = np.isin(data.row_type, lopsided)
        fields += [data.row_type, np.where(apart, np.arange(data.num_jobs), -1)]
    keys = np.column_stack(fields)
    _, first, inverse, counts = np.unique(
        keys, axis=0, return_index=True, return_inverse=True, return_counts=True
    )
    if len(first) == data.num_jobs:
        return data
    inverse = inverse.reshape(-1)
    single = np.isin(data.singles.first, first)
    row = np.full(data.num_jobs, -1)
    row[first] = np.arange(len(first))
    cols = data.singles.take(np.flatnonzero(single))
    classes = row[cols.first]
    singles = replace(cols, first=classes, gpus=cols.gpus * counts[classes])
    return replace(
        data,
        throughput=data.throughput[first],
        scale=data.scale[first],
        priority=data.priority[first],
        remaining=data.remaining[first],
        since_start=data.since_start[first],
        isolated_time=data.isolated_time[first],
        row_type=data.row_type[first],
        singles=singles,
        multiplicity=counts.astype(np.float64),
        row_of_job=inverse,
        representative=first,
    )
