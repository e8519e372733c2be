"""Host placement: turn per-job decisions (option, keep) into hosts, and back.

Kept jobs stay on their previous hosts; the others are placed largest first, best fit on one
host when one has room, else (multi-host mode) over the hosts of their type with the most free
GPUs first. By C2–C4 of ``formulations/fairshare.md`` this never fails; a failure is a bug.
The :class:`Board` is also what the heuristics place jobs on, one at a time.
"""

from __future__ import annotations

from dataclasses import dataclass

from .data import ModelData
from .solution import Allocation, FairshareSolution


@dataclass
class Raw:
    """A method's decision for one job: an option index (None = idle) and whether it keeps
    its previous allocation exactly."""

    option: int | None = None
    keep: bool = False


class Board:
    """Free GPUs per host, bucketed by free count per type, so best fit is O(host size)."""

    def __init__(self, data: ModelData):
        self.data = data
        self.free = dict(data.free)
        self.type_free: dict[str, int] = dict(data.type_capacity)
        self.buckets: dict[str, list[dict[str, None]]] = {
            g: [{} for _ in range(s + 1)] for g, s in data.sigma.items()
        }
        for h, g in data.host_type.items():
            if g is not None:
                self.buckets[g][self.free[h]][h] = None

    def _set(self, h: str, value: int) -> None:
        g = self.data.host_type[h]
        assert g is not None
        del self.buckets[g][self.free[h]][h]
        self.type_free[g] += value - self.free[h]
        self.free[h] = value
        self.buckets[g][value][h] = None

    def can_keep(self, hosts: dict[str, int]) -> bool:
        return all(self.free[h] >= n for h, n in hosts.items())

    def keep(self, hosts: dict[str, int]) -> None:
        for h, n in hosts.items():
            if self.free[h] < n:
                raise RuntimeError(f"placement failed: host {h!r} cannot keep {n} GPUs (C4)")
            self._set(h, self.free[h] - n)

    def release(self, hosts: dict[str, int]) -> None:
        """Give back GPUs a job held (it is moved or stopped)."""
        for h, n in hosts.items():
            self._set(h, self.free[h] + n)

    def _best_fit(self, g: str, n: int) -> str | None:
        b = self.buckets.get(g)
        if b is None:
            return None
        for k in range(n, len(b)):
            if b[k]:
                return next(iter(b[k]))
        return None

    def fits(self, g: str, n: int) -> bool:
        if self.data.multi_host:
            return self.type_free.get(g, 0) >= n
        return self._best_fit(g, n) is not None

    def place(self, g: str, n: int) -> dict[str, int] | None:
        """Take ``n`` GPUs of type ``g``: one host (best fit) if possible, else (multi-host)
        the hosts with most free first. None if it does not fit."""
        h = self._best_fit(g, n)
        if h is not None:
            self._set(h, self.free[h] - n)
            return {h: n}
        if not self.data.multi_host or self.type_free.get(g, 0) < n:
            return None
        taken: dict[str, int] = {}
        left = n
        b = self.buckets[g]
        while left:
            k = max(i for i in range(1, len(b)) if b[i])
            h = next(iter(b[k]))
            use = min(k, left)
            self._set(h, k - use)
            taken[h] = use
            left -= use
        return taken


def assemble(data: ModelData, raw: list[Raw]) -> FairshareSolution:
    board = Board(data)
    hosts: dict[int, dict[str, int]] = {}
    for job, r in zip(data.jobs, raw, strict=True):
        if r.option is not None and r.keep:
            assert r.option == job.prev_option, (job.id, r)
            board.keep(job.prev_hosts)
            hosts[job.index] = dict(job.prev_hosts)
    pending = [
        (job, job.options[r.option])
        for job, r in zip(data.jobs, raw, strict=True)
        if r.option is not None and not r.keep
    ]
    for job, opt in sorted(pending, key=lambda p: (-p[1].n, p[0].index)):
        got = board.place(opt.gpu_type, opt.n)
        if got is None:
            raise RuntimeError(
                f"placement failed for {job.id!r} ({opt.n}×{opt.gpu_type}): C2/C3 was violated"
            )
        hosts[job.index] = got
    allocations = []
    for job, r in zip(data.jobs, raw, strict=True):
        if r.option is None:
            allocations.append(Allocation(job_id=job.id))
        else:
            g = job.options[r.option].gpu_type
            allocations.append(Allocation(job_id=job.id, gpu_type=g, hosts=hosts[job.index]))
    return FairshareSolution(allocations=tuple(allocations))


def raw_from_solution(data: ModelData, sol: FairshareSolution) -> list[Raw]:
    """Map a solution (a hint) back to option indices; unknown options become idle."""
    by_job = {a.job_id: a for a in sol.allocations}
    raw = []
    for job in data.jobs:
        a = by_job.get(job.id)
        if a is None or not a.hosts:
            raw.append(Raw())
            continue
        index = {(o.gpu_type, o.n): k for k, o in enumerate(job.options)}
        o = index.get((a.gpu_type or "", a.count))
        keep = o is not None and o == job.prev_option and dict(a.hosts) == job.prev_hosts
        raw.append(Raw(o, keep))
    return raw
