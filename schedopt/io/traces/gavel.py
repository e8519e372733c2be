"""Loader for Gavel's measured throughputs (``simulation_throughputs.json``, OSDI'20 artifact).

Format: ``{gpu_type: {job_key: {other_key_or_"null": throughput}}}`` where ``gpu_type`` is
``k80``, ``p100``, ``v100`` (and ``<type>_unconsolidated`` variants), ``job_key`` is the string
``"('<model>', <scale_factor>)"`` and the inner ``"null"`` entry is the job's throughput alone
(steps/s); other inner keys are throughputs when co-located with that job (not loaded).

:func:`load_gavel_throughputs` returns plain :class:`GavelJobType` records (no dependency on a
problem package): one per (model, scale factor) with its alone-throughput on every GPU type that
measured it. ``unconsolidated=True`` reads the ``_unconsolidated`` variants instead (named by
their base type). Malformed entries raise :class:`~schedopt.core.errors.InvalidInstanceError`
naming ``"<file>:<gpu_type>.<job_key>"``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from schedopt.core.errors import InvalidInstanceError

_KEY = re.compile(r"^\('(?P<model>.+)', (?P<scale>\d+)\)$")
SUFFIX = "_unconsolidated"


@dataclass(frozen=True)
class GavelJobType:
    """A Gavel job type: ``model`` (e.g. ``"ResNet-18 (batch size 16)"``) at ``scale_factor``
    GPUs, with ``throughput[gpu_type]`` steps/s when running alone."""

    model: str
    scale_factor: int
    throughput: dict[str, float] = field(default_factory=dict)


def parse_job_key(key: str) -> tuple[str, int]:
    """``"('ResNet-18 (batch size 16)', 1)"`` → ``("ResNet-18 (batch size 16)", 1)``."""
    m = _KEY.match(key)
    if m is None:
        raise ValueError(f"not a Gavel job key: {key!r}")
    return m["model"], int(m["scale"])


def load_gavel_throughputs(path: str | Path, *, unconsolidated: bool = False) -> list[GavelJobType]:
    """Read ``simulation_throughputs.json``; records sorted by (model, scale factor)."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InvalidInstanceError(path.name, f"not a readable JSON file: {err}") from None
    if not isinstance(doc, dict):
        raise InvalidInstanceError(path.name, "the top level must be an object of GPU types")
    found: dict[tuple[str, int], dict[str, float]] = {}
    for gpu_type, jobs in doc.items():
        if gpu_type.endswith(SUFFIX) != unconsolidated:
            continue
        name = gpu_type.removesuffix(SUFFIX)
        if not isinstance(jobs, dict):
            raise InvalidInstanceError(f"{path.name}:{gpu_type}", "must be an object of job keys")
        for key, entry in jobs.items():
            where = f"{path.name}:{gpu_type}.{key}"
            try:
                model, scale = parse_job_key(key)
            except ValueError as err:
                raise InvalidInstanceError(where, str(err)) from None
            alone = entry.get("null") if isinstance(entry, dict) else None
            if isinstance(alone, list):  # some artifacts store [throughput] for single jobs
                alone = alone[0] if alone else None
            if not isinstance(alone, int | float) or isinstance(alone, bool):
                raise InvalidInstanceError(where, "missing the 'null' (alone) throughput")
            if not (math.isfinite(alone) and alone >= 0):
                raise InvalidInstanceError(where, f"throughput must be >= 0 (got {alone})")
            if scale < 1:
                raise InvalidInstanceError(where, f"scale factor must be >= 1 (got {scale})")
            found.setdefault((model, scale), {})[name] = float(alone)
    return [GavelJobType(m, s, t) for (m, s), t in sorted(found.items())]
