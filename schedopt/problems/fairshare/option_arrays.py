"""Every job's options as arrays, one row per job with options and its options padded to the
widest job's count: the layout of the Lagrangian bounds B2L and B3L (``l2_bound.py``,
``l3_lagrangian.py``), of B3U (``l3_units.py``) and of the repair steps that follow their
multipliers (formulations/fairshare.md, "B3L")."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .data import ModelData


@dataclass(frozen=True)
class Arrays:
    """Every job with options as a row, its options padded to the widest job's count."""

    unit: np.ndarray  # (jobs,) the job's unit
    n: np.ndarray  # (jobs, K) GPUs of each option (0 where padded)
    eff: np.ndarray  # (jobs, K) e_jo
    gtype: np.ndarray  # (jobs, K) type index
    base: np.ndarray  # (jobs, K) φ ν_o − c_j [o = previous option of a keepable job]; +inf pad
    capacity: np.ndarray  # F_g by type index
    restart_constant: float  # Σ_{J^P} c_j

    @cached_property
    def columns(self) -> tuple[np.ndarray, ...]:
        """``base``, ``eff``, ``gtype``, ``n`` by option, then job (``_choice``'s layout)."""
        return tuple(np.ascontiguousarray(x.T) for x in (self.base, self.eff, self.gtype, self.n))

    def costs(self, lam: float, mu: np.ndarray) -> np.ndarray:
        """``base − λ e + μ_g n`` by option, then job (not to be written to: the last one is
        kept, as the cutting planes' supergradient follows each value at the same point)."""
        key = np.float64(lam).tobytes() + np.asarray(mu, dtype=np.float64).tobytes()
        last = self.__dict__.get("_costs")
        if last is None or last[0] != key:
            base, eff, gtype, n = self.columns
            last = self.__dict__["_costs"] = (key, base - lam * eff + mu[gtype] * n)
        return last[1]

    def gpu_terms(self, mu: np.ndarray, rho: np.ndarray) -> np.ndarray:
        """``(μ_g − ρ_v) n_o`` by row: what the relaxed C2 and fix rows add to a job's option,
        in B3L's reduced cost ``a_jo`` (``L3Dual.costs``) and B2L's reduced profit ``π_jo``
        (``repair_choice.losses``), both written once here."""
        return (mu[self.gtype] - rho[self.unit][:, None]) * self.n


def arrays(data: ModelData) -> Arrays:
    types = sorted(data.type_capacity)
    tix = {g: i for i, g in enumerate(types)}
    jobs = [j for j in data.jobs if j.options]
    width = max((len(j.options) for j in jobs), default=1)
    shape = (len(jobs), width)
    n, eff = np.zeros(shape), np.zeros(shape)
    gtype = np.zeros(shape, dtype=np.int64)
    base = np.full(shape, np.inf)
    for r, job in enumerate(jobs):
        for o, opt in enumerate(job.options):
            n[r, o] = opt.n
            eff[r, o] = opt.eff
            gtype[r, o] = tix[opt.gpu_type]
            keep = job.restart_cost if o == job.prev_option else 0.0
            base[r, o] = data.frag_cost * opt.extra_hosts - keep
    return Arrays(
        np.array([j.unit for j in jobs], dtype=np.int64),
        n,
        eff,
        gtype,
        base,
        np.array([data.type_capacity[g] for g in types], dtype=np.float64),
        data.restart_constant,
    )


__all__ = ["Arrays", "arrays"]
