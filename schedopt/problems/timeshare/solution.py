"""The round's decision: the fraction of time each job (or pair) runs on each GPU type.

A solution is held as arrays (:class:`Shares`: one entry per share, the job, its partner or
-1, the GPU type, the fraction, with the job and type names once). The per-share objects
(:class:`Share`) are made only when read: a 2,048-job round with pairs has 10^5 shares, and
making them took longer than HiGHS's solve (issue 19). The JSON form is unchanged, a list
of shares.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal, overload

import numpy as np
from numpy.typing import ArrayLike
from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from schedopt.core.limits import Fraction
from schedopt.core.model import FrozenModel


class Share(FrozenModel):
    """``job`` (with ``with_job`` when two jobs share GPUs) runs ``fraction`` of the round on
    its scale factor's GPUs of ``worker_type``."""

    job: str
    worker_type: str
    fraction: Fraction
    with_job: str | None = None

    @property
    def members(self) -> tuple[str, ...]:
        return (self.job,) if self.with_job is None else (self.job, self.with_job)


class Shares(Sequence[Share]):
    """The shares of a solution as arrays: entry k is ``jobs[job[k]]`` (with
    ``jobs[partner[k]]`` when ``partner[k] >= 0``) on ``types[type[k]]`` for ``fraction[k]``
    of the round. A sequence of :class:`Share`, made on first read."""

    __slots__ = ("_items", "fraction", "job", "jobs", "partner", "type", "types")

    def __init__(
        self,
        jobs: Sequence[str],
        types: Sequence[str],
        job: ArrayLike,
        partner: ArrayLike,
        type: ArrayLike,
        fraction: ArrayLike,
        items: tuple[Share, ...] | None = None,
    ):
        self.jobs, self.types = jobs, types
        self.job = np.asarray(job, dtype=np.int64)
        self.partner = np.asarray(partner, dtype=np.int64)
        self.type = np.asarray(type, dtype=np.int64)
        self.fraction = np.asarray(fraction, dtype=np.float64)
        if not len(self.job) == len(self.partner) == len(self.type) == len(self.fraction):
            raise ValueError("the share arrays differ in length")
        self._items = items

    @classmethod
    def of(cls, shares: Iterable[Share]) -> Shares:
        """The arrays of ``shares`` (names in order of first appearance)."""
        items = tuple(shares)
        jobs: dict[str, int] = {}
        types: dict[str, int] = {}
        job = [jobs.setdefault(s.job, len(jobs)) for s in items]
        partner = [
            -1 if s.with_job is None else jobs.setdefault(s.with_job, len(jobs)) for s in items
        ]
        type_ = [types.setdefault(s.worker_type, len(types)) for s in items]
        fraction = [s.fraction for s in items]
        return cls(tuple(jobs), tuple(types), job, partner, type_, fraction, items)

    @classmethod
    def empty(cls) -> Shares:
        none = np.zeros(0, dtype=np.int64)
        return cls((), (), none, none, none, np.zeros(0), ())

    def items(self) -> tuple[Share, ...]:
        """The shares as objects (made once, on first read)."""
        if self._items is None:
            jobs, types = self.jobs, self.types
            # every field is typed here; the independent validator checks the arrays
            self._items = tuple(
                Share.model_construct(
                    job=jobs[j],
                    worker_type=types[w],
                    fraction=f,
                    with_job=None if p < 0 else jobs[p],
                )
                for j, p, w, f in zip(
                    self.job.tolist(),
                    self.partner.tolist(),
                    self.type.tolist(),
                    self.fraction.tolist(),
                    strict=True,
                )
            )
        return self._items

    def alone(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(job, type, fraction) of the shares of jobs alone."""
        one = self.partner < 0
        return self.job[one], self.type[one], self.fraction[one]

    def together(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(job, partner, type, fraction) of the shares of pairs."""
        two = self.partner >= 0
        return self.job[two], self.partner[two], self.type[two], self.fraction[two]

    def __len__(self) -> int:
        return len(self.fraction)

    @overload
    def __getitem__(self, i: int) -> Share: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[Share, ...]: ...
    def __getitem__(self, i: int | slice) -> Share | tuple[Share, ...]:
        return self.items()[i]

    def __iter__(self) -> Iterator[Share]:
        return iter(self.items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Shares | tuple | list):
            return self.items() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.items())

    def __repr__(self) -> str:
        return f"Shares({len(self)} shares)"

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        items = handler.generate_schema(tuple[Share, ...])
        from_items = core_schema.no_info_after_validator_function(cls.of, items)
        return core_schema.json_or_python_schema(
            json_schema=from_items,
            python_schema=core_schema.union_schema(
                [core_schema.is_instance_schema(cls), from_items]
            ),
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda s: s.items(), return_schema=items
            ),
        )


class TimeshareSolution(FrozenModel):
    problem: Literal["timeshare"] = "timeshare"
    #: Positive fractions only; a job with none is not scheduled this round.
    shares: Shares

    @classmethod
    def of_arrays(cls, shares: Shares) -> TimeshareSolution:
        """A solution of ``shares`` as they are (the validator checks them)."""
        return cls.model_construct(shares=shares)

    def allocation(self) -> dict[str, dict[str, float]]:
        """Job → type → fraction of the round, alone (Gavel's output for a single job)."""
        out: dict[str, dict[str, float]] = {}
        s = self.shares
        jobs, types = s.jobs, s.types
        job, type_, fraction = s.alone()
        for j, w, f in zip(job.tolist(), type_.tolist(), fraction.tolist(), strict=True):
            out.setdefault(jobs[j], {})[types[w]] = f
        return out
