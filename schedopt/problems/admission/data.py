"""The instance as the models see it: integer data computed once, in one place.

The model (``model.py``, emitted to every exact back-end) and the heuristics read this; the
validator does not (it re-derives everything from the raw instance). Every scaling of real data to
integers is here (with the resolutions of ``scales.py``) — see "Integer scaling" in
``formulations/admission.md``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import cast

from schedopt.core.errors import ModelTooLargeError
from schedopt.core.powers_of_two import powers_of_two_up_to
from schedopt.core.stopping import Deadline, Ticker, too_slow_to_build

from .instance import AdmissionInstance, JobKind
from .scales import PROGRESS_SCALE, VALUE_SCALE

#: Conservative model-building cost, measured on the 1,024-GPU benchmark (≈11 µs/variable for
#: CP-SAT, ≈15 µs for PuLP); an exact method that cannot build its model in the time left
#: returns NO_SOLUTION at once instead of breaking the time limit.
BUILD_S_PER_VARIABLE = 2.5e-5
#: Refuse to build exact models with more decision variables than this (≈ 1–2 GB in CP-SAT).
MAX_MODEL_VARIABLES = 3_000_000
#: Seconds per job-slot that ``solve()`` keeps back for validating and evaluating an answer
#: (measured 1.2 µs quiet, 2.0 µs beside two busy processes, on 100,000 jobs × 12 slots;
#: benchmarks/RESULTS.md, "The time limit at every size").
FINISH_S_PER_JOB_SLOT = 2.0e-6


def finish_reserve_s(inst: AdmissionInstance) -> float:
    return 0.05 + FINISH_S_PER_JOB_SLOT * len(inst.jobs) * inst.slots


def estimate_num_variables(inst: AdmissionInstance) -> int:
    """An upper bound on :attr:`ModelData.num_variables` from the raw instance, cheap enough
    to refuse an oversize model before anything is built (≈ 1 µs a job)."""
    types = len(inst.cluster.gpu_types())
    T = inst.slots
    n = 0
    for job in inst.jobs:
        if job.throughput is not None:
            options = len(job.throughput) * types
        else:
            options = sum(len(t) for t in (job.throughput_by_type or {}).values())
        n += max(0, T - inst.arrival_slot(job)) * options + 2 * T + len(job.deadlines) + 1
    return n


def check_model_size(inst: AdmissionInstance) -> None:
    """Raise :class:`ModelTooLargeError` before building, from :func:`estimate_num_variables`."""
    estimate = estimate_num_variables(inst)
    if estimate > MAX_MODEL_VARIABLES:
        raise ModelTooLargeError(
            "jobs",
            f"the exact model would have about {estimate:,} variables "
            f"(limit {MAX_MODEL_VARIABLES:,}); shorten the horizon, coarsen slot_s, or use "
            f"method='heuristic:edf'",
        )


@dataclass(frozen=True)
class Option:
    """One way a job can run in a slot: ``n`` GPUs of ``gpu_type``, ``work`` iterations/slot (ω)."""

    gpu_type: str
    n: int
    work: int


@dataclass(frozen=True)
class Tier:
    slots_before: int  # e_jk
    value: float  # v_jk, instance units
    value_scaled: int


@dataclass(frozen=True)
class JobData:
    index: int
    id: str
    kind: JobKind
    arrival: int  # a_j
    work: int  # W_j
    options: tuple[Option, ...]
    tiers: tuple[Tier, ...]
    admitted_before: bool
    current_gpus: int
    be_coef: tuple[int, ...]  # scaled β_j γ^t / W_j per slot (best-effort jobs), else ()
    #: The same before rounding (the MILP's L2; CP-SAT needs the integers).
    be_coef_real: tuple[float, ...] = ()

    @property
    def is_slo(self) -> bool:
        return self.kind.is_slo

    @property
    def slots(self) -> range:
        """Slots the job may run in (C2)."""
        return range(self.arrival, len(self.be_coef) if self.be_coef else 10**9)


@dataclass(frozen=True)
class ModelData:
    instance: AdmissionInstance
    T: int
    jobs: tuple[JobData, ...]
    levels: dict[str, tuple[int, ...]]  # L_g
    chunk_capacity: dict[tuple[str, int], int]  # κ_gs
    host_size: dict[str, int]  # σ_g
    progress_unit: float  # L2 in instance units = scaled L2 * progress_unit
    #: A part's own capacity per (slot, type, level), replacing ``chunk_capacity`` in C3 where
    #: given (a repair part: what the other jobs leave, ``repair.py``); None: κ_gs every slot.
    #: ``chunk_capacity`` then holds the most of any slot (what "fits alone" is checked on).
    slot_capacity: dict[tuple[int, str, int], int] | None = None

    def capacity(self, t: int, g: str, s: int) -> int:
        """C3's right side in slot ``t`` at type ``g``, level ``s``."""
        if self.slot_capacity is None:
            return self.chunk_capacity[g, s]
        return self.slot_capacity.get((t, g, s), 0)

    def subset(
        self,
        indices: Sequence[int],
        chunk_capacity: dict[tuple[str, int], int] | None = None,
        slot_capacity: dict[tuple[int, str, int], int] | None = None,
    ) -> ModelData:
        """A self-contained ModelData of ``indices``' jobs, re-indexed from 0, on its own
        capacity (κ_gs, or per slot). The instance is left out: a part is sent to a worker,
        and only the join assembles a solution."""
        jobs = tuple(dataclasses.replace(self.jobs[i], index=n) for n, i in enumerate(indices))
        return ModelData(
            cast(AdmissionInstance, None),
            self.T,
            jobs,
            self.levels,
            self.chunk_capacity if chunk_capacity is None else chunk_capacity,
            self.host_size,
            self.progress_unit,
            slot_capacity=slot_capacity,
        )

    def run_slots(self, job: JobData) -> range:
        return range(min(job.arrival, self.T), self.T)

    @staticmethod
    def usage(option: Option, level: int) -> int:
        """GPUs that ``option`` takes from level ``level`` of C3."""
        return option.n if option.n >= level else 0

    def too_big_for(self, seconds: float) -> str | None:
        """Why building the exact model would not fit in ``seconds`` (None: it fits)."""
        return too_slow_to_build(self.num_variables, BUILD_S_PER_VARIABLE, seconds)

    @cached_property
    def num_variables(self) -> int:
        n = 0
        for j in self.jobs:
            slots = len(self.run_slots(j))
            n += slots * len(j.options) + 2 * self.T + len(j.tiers) + 1
        return n

    def best_alone_tier(self, job: JobData) -> int | None:
        """Earliest tier job can meet alone on the empty cluster (None: none)."""
        fitting = [o.work for o in job.options if self.fits_alone(o)]
        if not fitting:
            return None
        per_slot = max(fitting)
        for k, tier in enumerate(job.tiers):
            slots = max(0, min(tier.slots_before, self.T) - job.arrival)
            if slots * per_slot >= job.work:
                return k
        return None

    def fits_alone(self, option: Option) -> bool:
        key = (option.gpu_type, option.n)
        fits = self._fits_alone.get(key)
        if fits is None:  # options repeat across jobs: computed once per (type, count)
            fits = self._fits_alone[key] = all(
                self.usage(option, s) <= self.chunk_capacity[(option.gpu_type, s)]
                for s in self.levels[option.gpu_type]
            )
        return fits

    @cached_property
    def _fits_alone(self) -> dict[tuple[str, int], bool]:
        return {}


def build_data(
    inst: AdmissionInstance, *, check_size: bool = True, deadline: Deadline | None = None
) -> ModelData:
    """The model data; ``check_size`` refuses an oversize model first (before any work), and
    ``deadline`` stops the build (:class:`DeadlineReached`) when it passes."""
    if check_size:
        check_model_size(inst)
    T = inst.slots
    host_size = dict(inst.host_size)
    levels = {g: powers_of_two_up_to(s) for g, s in host_size.items()}
    chunk: dict[tuple[str, int], int] = {}
    for g, ls in levels.items():
        # per (host, type) group: a host's GPUs of another type are not capacity for g
        free = [len(gpus) for (_, hg), gpus in inst.free_gpus_by_group.items() if hg == g]
        for s in ls:
            chunk[(g, s)] = sum(s * (f // s) for f in free)
    raw_coef: list[list[float]] = []
    for job in inst.jobs:
        if job.kind is JobKind.BEST_EFFORT:
            raw_coef.append(
                [job.weight * inst.be_discount**t / job.remaining_iterations for t in range(T)]
            )
        else:
            raw_coef.append([])
    top = max((c for row in raw_coef for c in row), default=1.0)
    unit = top / PROGRESS_SCALE
    jobs = []
    tick = Ticker(deadline, "building the model data")
    for i, job in enumerate(inst.jobs):
        tick()
        options = tuple(
            Option(g, n, math.floor(rate * inst.slot_s + 1e-9))
            for (g, n), rate in sorted(inst.usable_options(job).items())
        )
        tiers = tuple(
            Tier(inst.slots_before(t.deadline_s), t.value, round(t.value * VALUE_SCALE))
            for t in job.deadlines
        )
        jobs.append(
            JobData(
                index=i,
                id=job.id,
                kind=job.kind,
                arrival=inst.arrival_slot(job),
                work=job.remaining_iterations,
                options=options,
                tiers=tiers,
                admitted_before=job.admitted,
                current_gpus=job.current_gpus,
                be_coef=tuple(round(c / unit) for c in raw_coef[i]),
                be_coef_real=tuple(c / unit for c in raw_coef[i]),
            )
        )
    return ModelData(inst, T, tuple(jobs), levels, chunk, host_size, unit)
