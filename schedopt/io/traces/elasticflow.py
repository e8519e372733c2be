"""Loader for the ElasticFlow traces of Microsoft ITP clusters (ASPLOS'23 artifact).

Format (``cluster01.csv`` … ``cluster10.csv``), one job per row, header on line 1::

    job_id,submission_time,duration,num_gpu

with ``submission_time`` and ``duration`` in **seconds** and ``duration`` the job's run time at
``num_gpu`` GPUs. The files carry neither work nor deadlines nor tenants, so they are attached
by documented rules:

- **work**: the job runs at 1 iteration/s at its own GPU count, i.e.
  ``iterations = max(1, round(duration))``; only ratios of throughputs matter to the models;
- **deadline**: every job is ``strict_slo`` with one deadline ``λ × duration`` after
  submission, worth 10 (the value of a strict job in the Chronus traces). ElasticFlow's own
  evaluation sets deadlines as ``λ × duration`` with ``λ`` drawn around 1.5. By default ``λ`` is
  the fixed ``slack``; with ``seed`` given, ``λ ~ Uniform(0.5·slack, 1.5·slack)`` per job, drawn
  in file order from ``numpy.random.default_rng(seed)`` (so a ``limit`` does not change the
  draws of the jobs it keeps). ``λ < 1`` asks the job to run on more GPUs than it did;
- **tenant**: ``"default"`` (the trace has no users); **model**: ``""``.

Rows with ``num_gpu == 0`` are skipped and GPU counts that are not powers of two are rounded up
(counted in :class:`TraceLoad`), exactly as for the Philly loader; ``limit`` counts loaded jobs
in file order (these files are sorted by submission time). Malformed rows raise
:class:`~schedopt.core.errors.InvalidInstanceError` naming ``"<file>:line <n>.<column>"``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._csv import gang_rows
from .record import TraceJob, TraceLoad

COLUMNS = ("job_id", "submission_time", "duration", "num_gpu")
#: Value of meeting the one deadline of an ElasticFlow job.
DEADLINE_VALUE = 10.0
#: Throughput attached to every job at its own GPU count.
ITERATIONS_PER_S = 1.0


def load_elasticflow(
    path: str | Path,
    limit: int | None = None,
    *,
    slack: float = 1.5,
    seed: int | None = None,
) -> TraceLoad:
    """Read an ElasticFlow ITP trace; see the module docstring for the format and the rules."""
    if not slack > 0:
        raise ValueError(f"slack must be > 0 (got {slack})")
    path = Path(path)
    rng = np.random.default_rng(seed) if seed is not None else None
    jobs: list[TraceJob] = []
    skipped: dict[str, int] = {}
    adjusted: dict[str, int] = {}
    for row, num_gpu in gang_rows(path, COLUMNS, limit, skipped, adjusted):
        submit = row.number("submission_time")
        if submit < 0:
            raise row.error("submission_time", f"must be >= 0 (got {submit:g})")
        duration = row.number("duration")
        if duration <= 0:
            raise row.error("duration", f"must be > 0 seconds (got {duration:g})")
        lam = slack if rng is None else float(rng.uniform(0.5 * slack, 1.5 * slack))
        jobs.append(
            TraceJob(
                id=row.text("job_id"),
                tenant="default",
                submit_s=submit,
                num_gpus=num_gpu,
                iterations=max(1, round(duration * ITERATIONS_PER_S)),
                duration_s=duration,
                kind="strict_slo",
                deadlines=((lam * duration, DEADLINE_VALUE),),
            )
        )
    return TraceLoad(jobs, skipped, adjusted)
