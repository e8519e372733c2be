"""The plan a fair-share heuristic or repair builds one job at a time on the board
(``placement.Board``): each job's decision and hosts, and the GPUs each fairness unit and
tenant holds, kept in step."""

from __future__ import annotations

from .data import JobData, ModelData
from .placement import Board, Raw
from .solution import Allocation, FairshareSolution

#: A job's decision and hosts, as :meth:`Plan.saved` keeps them.
Saved = tuple[Raw, dict[str, int]]


class Plan:
    """The plan being built: the board's free GPUs, each job's decision and hosts, and the
    GPUs of each fairness unit (g_v) and tenant (g_u, C5) as they follow."""

    def __init__(self, data: ModelData):
        self.data = data
        self.board = Board(data)
        self.raw = [Raw() for _ in data.jobs]
        self.hosts: list[dict[str, int]] = [{} for _ in data.jobs]
        self.unit_gpus = [0] * len(data.units)  # g_v
        self.tenant_gpus = [0] * len(data.tenants)  # g_u (C5)

    def done(self, job: JobData) -> bool:
        return self.raw[job.index].option is not None

    def keep(self, job: JobData) -> bool:
        if job.prev_option is None or not self.board.can_keep(job.prev_hosts):
            return False
        self.board.keep(job.prev_hosts)
        self._set(job, job.prev_option, dict(job.prev_hosts), keep=True)
        return True

    def place(self, job: JobData, o: int) -> bool:
        opt = job.options[o]
        got = self.board.place(opt.gpu_type, opt.n)
        if got is None:
            return False
        self._set(job, o, got, keep=False)
        return True

    def assign(self, job: JobData, o: int, hosts: dict[str, int], keep: bool) -> None:
        """``job`` on option ``o`` on ``hosts`` as decided elsewhere (a part's answer, a
        decision put back): the board's GPUs there taken, without a check that they are free."""
        self.board.keep(hosts)
        self._set(job, o, hosts, keep)

    def _set(self, job: JobData, o: int, hosts: dict[str, int], keep: bool) -> None:
        self.raw[job.index] = Raw(o, keep)
        self.hosts[job.index] = hosts
        self.unit_gpus[job.unit] += job.options[o].n
        self.tenant_gpus[job.tenant] += job.options[o].n

    def unset(self, job: JobData) -> None:
        """Stop ``job``: its GPUs back to the board, it idle."""
        r = self.raw[job.index]
        if r.option is None:
            return
        self.board.release(self.hosts[job.index])
        self.unit_gpus[job.unit] -= job.options[r.option].n
        self.tenant_gpus[job.tenant] -= job.options[r.option].n
        self.raw[job.index] = Raw()
        self.hosts[job.index] = {}

    def l2(self) -> float:
        """The whole plan's L2."""
        jobs = self.data.jobs
        return sum(
            jobs[i].options[r.option].eff for i, r in enumerate(self.raw) if r.option is not None
        )

    def levels(self, chosen: list[int]) -> tuple[float, float]:
        """(L2, L3) of the chosen jobs' part of the plan (L3 less its constant). A running job
        placed as before is not restarted, kept or not (as the validator counts it: a
        neighbourhood that only marks such a job kept saves nothing)."""
        data = self.data
        l2 = l3 = 0.0
        for i in chosen:
            job, r = data.jobs[i], self.raw[i]
            if r.option is None:
                continue
            opt = job.options[r.option]
            l2 += opt.eff
            stays = r.keep or (r.option == job.prev_option and self.hosts[i] == job.prev_hosts)
            l3 += data.frag_cost * opt.extra_hosts - (job.restart_cost if stays else 0.0)
        return l2, l3

    def saved(self, chosen: list[int]) -> list[Saved]:
        """The chosen jobs' decisions and hosts as they are now (for :meth:`put_back`)."""
        return [(self.raw[i], dict(self.hosts[i])) for i in chosen]

    def put_back(self, chosen: list[int], old: list[Saved]) -> None:
        """The chosen jobs as they were (``old``: :meth:`saved` of them then)."""
        jobs = self.data.jobs
        for i in chosen:
            self.unset(jobs[i])
        for i, (r, hosts) in zip(chosen, old, strict=True):
            if r.option is not None:
                self.assign(jobs[i], r.option, hosts, keep=r.keep)

    def solution(self) -> FairshareSolution:
        allocations = []
        for job, r in zip(self.data.jobs, self.raw, strict=True):
            if r.option is None:
                allocations.append(Allocation(job_id=job.id))
            else:
                g = job.options[r.option].gpu_type
                allocations.append(
                    Allocation(job_id=job.id, gpu_type=g, hosts=self.hosts[job.index])
                )
        return FairshareSolution(allocations=tuple(allocations))


__all__ = ["Plan", "Saved"]
