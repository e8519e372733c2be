"""Loader for Gavel's measured throughputs (``simulation_throughputs.json``, OSDI'20 artifact).

Format (read by Gavel's ``scheduler/utils.py`` ``read_all_throughputs_json_v2``)::

    {worker_type: {job_key: {"null": alone, other_key: [this, other], ...}, ...}, ...}

- ``worker_type``: ``k80``, ``p100``, ``v100``, and ``<type>_unconsolidated`` variants (a
  multi-GPU job's workers not packed onto one server);
- ``job_key``: the string ``"('<model>', <scale_factor>)"``, Python's ``str`` of Gavel's job-type
  key ``(job.job_type, job.scale_factor)``, e.g. ``"('ResNet-18 (batch size 16)', 1)"``;
- ``"null"``: the job type's throughput alone on ``scale_factor`` GPUs of the type, steps/s
  (some artifacts write ``[x]``);
- any other inner key: ``[t_this, t_other]``, the throughputs (steps/s) of ``job_key``'s job
  and of ``other_key``'s job while the two share the same GPUs (Gavel's "packing"); 0 where
  they cannot share them (e.g. out of memory).

How Gavel's simulator reads the co-location entries (``scheduler/scheduler.py`` at commit
c4fa400), mirrored here:

- only job types of **the same scale factor** are paired (``_read_throughputs_for_job_type``,
  line 432, and ``_populate_job_combination_metadata``, line 2208, skip other pairs), so an entry
  pairing different scale factors is an error here;
- a pair's first throughput belongs to the outer key's job: for jobs ``i < j`` of types ``a``
  and ``b`` Gavel takes ``T[w][a][b]``, for ``i > j`` ``T[w][b][a]`` (lines 2246-2251), so the
  two orders must agree, ``T[w][b][a] == reversed(T[w][a][b])``; the Gavel artifact's file
  stores both orders and they agree exactly. Orders that disagree are an error here (Gavel's
  result would depend on the jobs' IDs); an order the file leaves out is filled in from the
  other. A job type paired with itself is one entry (its two throughputs may differ).

Two views: :func:`load_gavel_throughputs` returns plain :class:`GavelJobType` records (the alone
throughputs only); :func:`load_gavel_throughput_table` returns :class:`GavelThroughputs` with
the co-location entries too. ``unconsolidated=True`` reads the ``_unconsolidated`` variants
instead (named by their base type). Throughputs must be finite, in ``[0, MAX_RATE]``
(``schedopt.core.limits``); scale factors in ``[1, MAX_GPUS]``. Malformed entries raise
:class:`~schedopt.core.errors.InvalidInstanceError` naming ``"<file>:<gpu_type>.<job_key>"``
(``…<job_key>.<other_key>`` for a co-location entry).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from schedopt.core.errors import InvalidInstanceError
from schedopt.core.limits import MAX_GPUS, MAX_RATE
from schedopt.core.pydantic_errors import describe

from ._files import read_json

_KEY = re.compile(r"^\('(?P<model>.+)', (?P<scale>[0-9]{1,12})\)$")
_MAX_KEY_SHOWN = 100  # longer keys (hostile input) are cut in error paths
SUFFIX = "_unconsolidated"

#: A Gavel job type as Gavel keys it: ``(model, scale_factor)``.
JobTypeKey = tuple[str, int]


@dataclass(frozen=True)
class GavelJobType:
    """A Gavel job type: ``model`` (e.g. ``"ResNet-18 (batch size 16)"``) at ``scale_factor``
    GPUs, with ``throughput[gpu_type]`` steps/s when running alone."""

    model: str
    scale_factor: int
    throughput: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class GavelThroughputs:
    """Every throughput of one Gavel throughput file, in steps/s.

    - ``alone[(model, scale_factor)][worker_type]``: the job type alone;
    - ``colocated[(a, b)][worker_type] = (t_a, t_b)``: job types ``a`` and ``b`` (same scale
      factor) sharing the GPUs, ``t_a`` for ``a``'s job. Both orders are present and agree:
      ``colocated[(b, a)][w] == colocated[(a, b)][w][::-1]``.
    """

    alone: Mapping[JobTypeKey, Mapping[str, float]]
    colocated: Mapping[tuple[JobTypeKey, JobTypeKey], Mapping[str, tuple[float, float]]]

    @property
    def worker_types(self) -> tuple[str, ...]:
        return tuple(sorted({w for by_type in self.alone.values() for w in by_type}))

    def job_types(self) -> list[GavelJobType]:
        """The alone throughputs as records, sorted by (model, scale factor)."""
        return [GavelJobType(m, s, dict(t)) for (m, s), t in sorted(self.alone.items())]

    def pair(self, a: JobTypeKey, b: JobTypeKey, worker_type: str) -> tuple[float, float] | None:
        """``(t_a, t_b)`` when ``a`` and ``b`` share ``worker_type`` GPUs; ``pair(b, a, w)`` is
        the same pair reversed. None when the file does not measure the pair there (Gavel never
        pairs different scale factors); ``(0, 0)`` where the file says they cannot share."""
        return self.colocated.get((a, b), {}).get(worker_type)


def parse_job_key(key: str) -> tuple[str, int]:
    """``"('ResNet-18 (batch size 16)', 1)"`` → ``("ResNet-18 (batch size 16)", 1)``."""
    m = _KEY.match(key)
    if m is None:
        shown = describe(key)
        raise ValueError(f"not a Gavel job key {shown}" if shown else "not a Gavel job key")
    return m["model"], int(m["scale"])


def load_gavel_throughputs(path: str | Path, *, unconsolidated: bool = False) -> list[GavelJobType]:
    """Read ``simulation_throughputs.json``; records sorted by (model, scale factor)."""
    return load_gavel_throughput_table(path, unconsolidated=unconsolidated).job_types()


def load_gavel_throughput_table(
    path: str | Path, *, unconsolidated: bool = False
) -> GavelThroughputs:
    """Read ``simulation_throughputs.json`` with its co-location entries (module docstring)."""
    path = Path(path)
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise InvalidInstanceError(path.name, "the top level must be an object of GPU types")
    alone: dict[JobTypeKey, dict[str, float]] = {}
    colocated: dict[tuple[JobTypeKey, JobTypeKey], dict[str, tuple[float, float]]] = {}
    for gpu_type, jobs in doc.items():
        if gpu_type.endswith(SUFFIX) != unconsolidated:
            continue
        where = f"{path.name}:{_shown(gpu_type)}"
        if not isinstance(jobs, dict):
            raise InvalidInstanceError(where, "must be an object of job keys")
        _worker_type(where, gpu_type.removesuffix(SUFFIX), jobs, alone, colocated)
    return GavelThroughputs(alone, colocated)


def _worker_type(
    where: str,
    name: str,
    jobs: dict[str, object],
    alone: dict[JobTypeKey, dict[str, float]],
    colocated: dict[tuple[JobTypeKey, JobTypeKey], dict[str, tuple[float, float]]],
) -> None:
    """Add one worker type's entries; ``where`` is ``"<file>:<gpu_type>"``."""
    entries: dict[JobTypeKey, tuple[str, dict[str, object]]] = {}
    for key, entry in jobs.items():
        here = f"{where}.{_shown(key)}"
        a = _job_key(here, key)
        if a in entries:  # e.g. "('A', 1)" and "('A', 01)"
            raise InvalidInstanceError(here, f"the same job type as {_shown(entries[a][0])}")
        if not isinstance(entry, dict) or "null" not in entry:
            raise InvalidInstanceError(here, "missing the 'null' (alone) throughput")
        solo = entry["null"]
        if isinstance(solo, list) and len(solo) == 1:  # some artifacts write [throughput]
            solo = solo[0]
        alone.setdefault(a, {})[name] = _throughput(here, solo)
        entries[a] = key, entry
    for a, (key, entry) in entries.items():
        for other, value in entry.items():
            if other == "null":
                continue
            here = f"{where}.{_shown(key)}.{_shown(other)}"
            b = _job_key(here, other)
            if b[1] != a[1]:
                raise InvalidInstanceError(
                    here,
                    f"pairs scale factors {a[1]} and {b[1]}; Gavel co-locates only job types "
                    "of the same scale factor",
                )
            _add_pair(here, name, a, b, _pair(here, value), colocated)


def _add_pair(
    here: str,
    name: str,
    a: JobTypeKey,
    b: JobTypeKey,
    ts: tuple[float, float],
    colocated: dict[tuple[JobTypeKey, JobTypeKey], dict[str, tuple[float, float]]],
) -> None:
    seen = colocated.get((a, b), {}).get(name)
    if seen is not None and seen != ts:
        raise InvalidInstanceError(
            here,
            f"{list(ts)} disagrees with the entry of the other order ({list(seen[::-1])}): "
            "Gavel would use one or the other depending on the jobs' IDs",
        )
    colocated.setdefault((a, b), {})[name] = ts
    if a != b:
        colocated.setdefault((b, a), {})[name] = (ts[1], ts[0])


def _job_key(here: str, key: str) -> JobTypeKey:
    try:
        model, scale = parse_job_key(key)
    except ValueError as err:
        raise InvalidInstanceError(here, str(err)) from None
    if not 1 <= scale <= MAX_GPUS:
        raise InvalidInstanceError(here, f"scale factor must be in [1, {MAX_GPUS}] (got {scale})")
    return model, scale


def _pair(here: str, value: object) -> tuple[float, float]:
    if not isinstance(value, list) or len(value) != 2:
        raise InvalidInstanceError(
            here, "a co-location entry is [throughput of this job, throughput of the other]"
        )
    return _throughput(here, value[0]), _throughput(here, value[1])


def _throughput(here: str, value: object) -> float:
    """A throughput in steps/s, in ``[0, MAX_RATE]``; int compared before any float conversion
    (a 400-digit integer would overflow it)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise InvalidInstanceError(here, "a throughput must be a number")
    if not 0 <= value <= MAX_RATE:  # also False for NaN
        shown = describe(value) or "a huge number"
        raise InvalidInstanceError(here, f"throughput must be in [0, {MAX_RATE:g}] (got {shown})")
    return float(value)


def _shown(key: str) -> str:
    """A key as error paths show it: hostile keys of any length are cut."""
    return key if len(key) <= _MAX_KEY_SHOWN else key[: _MAX_KEY_SHOWN - 3] + "..."
