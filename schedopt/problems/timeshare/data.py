"""The instance as arrays, and the columns of the model (formulations/timeshare.md, "Data").

A *column* is a combination (a job alone, or a pair) on one GPU type, kept only where every
member can run there. Columns are numbered singletons first, then pairs; the model and the
column generation index the same arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from schedopt.core.stopping import Deadline, Ticker

from .instance import Policy, TimeshareInstance


@dataclass(frozen=True)
class Columns:
    """Combination-type columns: ``first``/``second`` are job indices (``second`` = -1 for a
    job alone), ``type`` the GPU type index, ``gpus`` s_c, ``rate_first``/``rate_second`` the
    members' throughputs T_{j,cw} (0 for the missing second member)."""

    first: np.ndarray
    second: np.ndarray
    type: np.ndarray
    gpus: np.ndarray
    rate_first: np.ndarray
    rate_second: np.ndarray
    #: index into ``TimeshareData.pair_*`` for pair columns, -1 for singletons.
    pair: np.ndarray

    def __len__(self) -> int:
        return len(self.first)

    def take(self, idx: np.ndarray) -> Columns:
        return Columns(*(getattr(self, f)[idx] for f in _FIELDS))

    @staticmethod
    def concat(parts: list[Columns]) -> Columns:
        return Columns(*(np.concatenate([getattr(p, f) for p in parts]) for f in _FIELDS))


_FIELDS = ("first", "second", "type", "gpus", "rate_first", "rate_second", "pair")


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

    def pair_columns(self) -> Columns:
        """Every pair on every type where both members run and the gang fits (C4)."""
        rates = self.pair_rate  # P × W × 2
        fits = self.scale[self.pair_first][:, None] <= self.capacity[None, :]
        pair, w = np.nonzero((rates[:, :, 0] > 0) & (rates[:, :, 1] > 0) & fits)
        first = self.pair_first[pair]
        return Columns(
            first,
            self.pair_second[pair],
            w,
            self.scale[first],
            rates[pair, w, 0],
            rates[pair, w, 1],
            pair,
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
    singles = Columns(
        on,
        np.full(len(on), -1),
        ty,
        scale[on],
        rate,
        np.zeros(len(on)),
        -np.ones(len(on), dtype=np.int64),
    )
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
    )


def aggregate(data: TimeshareData) -> TimeshareData:
    """One row per class of jobs identical in every field but the id (Gavel's rounds draw
    from 26 job types: 2,048 jobs are a few dozen classes). Exact: averaging an optimal
    allocation over the jobs of a class keeps every row (C1–C3 are linear and the same for
    each of them), does not lower the minimum, and keeps level 2 (linear), so some optimum
    gives a class's jobs the same fractions. The class's GPUs count m·s in C2 and m times in
    level 2. Rounds with pairs are kept as they are (a pair names two jobs)."""
    if data.num_pairs or data.num_jobs < 2:
        return data
    keys = np.column_stack(
        [
            data.throughput,
            data.scale,
            data.priority,
            data.remaining,
            data.since_start,
            data.isolated_time,
        ]
    )
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
    singles = Columns(
        classes,
        cols.second,
        cols.type,
        cols.gpus * counts[classes],
        cols.rate_first,
        cols.rate_second,
        cols.pair,
    )
    return replace(
        data,
        throughput=data.throughput[first],
        scale=data.scale[first],
        priority=data.priority[first],
        remaining=data.remaining[first],
        since_start=data.since_start[first],
        isolated_time=data.isolated_time[first],
        singles=singles,
        multiplicity=counts.astype(np.float64),
        row_of_job=inverse,
        representative=first,
    )
