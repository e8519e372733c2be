"""Loader for the Philly traces with deadlines of the Chronus artifact (SoCC'21).

Format (``trace_job_Philly_{SLO,MIX1,MIX2}.csv``), one job per row, header on line 1::

    job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,
    expect_time_list,expect_value_list,best_effort,job_type

- ``user`` is the virtual cluster, used as the tenant;
- ``submit_time`` and ``duration`` are in **minutes** (converted to seconds here); ``duration``
  is the run time at ``num_gpu`` GPUs, so ``iterations / duration`` is the job's throughput;
- ``job_type`` ``strict``: one deadline, ``expect_time_list`` minutes after submission, value
  from ``expect_value_list`` (10 in the artifact);
- ``job_type`` ``soft``: deadline tiers ``"a-b-c-d"`` (minutes after submission) with values
  ``"10-8-5-2"``; the lists have the same length;
- ``job_type`` ``best`` with ``best_effort = 1``: no deadline (the deadline columns are ignored;
  in the artifact they repeat the submission time);
- ``interval`` and the rest are not used.

Assumptions and adjustments (counted in the returned :class:`TraceLoad`):

- rows with ``num_gpu == 0`` are skipped (``skipped["num_gpu == 0"]``);
- a GPU count that is not a power of two (12, 20 in the artifact) is rounded **up** to the next
  power of two, because the admission model only allows power-of-two gangs; iterations and
  duration are kept, i.e. the job runs at its measured speed on the larger gang
  (``adjusted["num_gpu rounded up to a power of two"]``);
- ``limit`` counts loaded jobs, in file order (the artifact's files are *not* sorted by
  submission time, so the first rows are spread over the whole trace); jobs are returned in
  file order.

Malformed rows raise :class:`~schedopt.core.errors.InvalidInstanceError` with the path
``"<file>:line <n>.<column>"`` (line 1 is the header).
"""

from __future__ import annotations

from pathlib import Path

from ._csv import Row, gang_rows
from .record import TraceJob, TraceLoad

COLUMNS = (
    "job_id",
    "user",
    "num_gpu",
    "submit_time",
    "iterations",
    "model_name",
    "duration",
    "interval",
    "expect_time_list",
    "expect_value_list",
    "best_effort",
    "job_type",
)
KIND = {"strict": "strict_slo", "soft": "soft_slo", "best": "best_effort"}
MINUTE_S = 60.0


def load_philly_chronus(path: str | Path, limit: int | None = None) -> TraceLoad:
    """Read a Chronus Philly trace; see the module docstring for the format and the rules."""
    path = Path(path)
    jobs: list[TraceJob] = []
    skipped: dict[str, int] = {}
    adjusted: dict[str, int] = {}
    for row, num_gpu in gang_rows(path, COLUMNS, limit, skipped, adjusted):
        jobs.append(_job(row, num_gpu))
    return TraceLoad(jobs, skipped, adjusted)


def _job(row: Row, num_gpu: int) -> TraceJob:
    submit = row.number("submit_time")
    if submit < 0:
        raise row.error("submit_time", f"must be >= 0 (got {submit:g})")
    iterations = row.integer("iterations")
    if iterations < 1:
        raise row.error("iterations", f"must be >= 1 (got {iterations})")
    duration = row.number("duration")
    if duration <= 0:
        raise row.error("duration", f"must be > 0 minutes (got {duration:g})")
    job_type = row.text("job_type")
    if job_type not in KIND:
        raise row.error("job_type", f"must be one of {sorted(KIND)} (got {job_type!r})")
    best_effort = row.integer("best_effort")
    if best_effort not in (0, 1) or (best_effort == 1) != (job_type == "best"):
        raise row.error(
            "best_effort", f"must be 1 exactly when job_type is 'best' (got {best_effort})"
        )
    kind = KIND[job_type]
    return TraceJob(
        id=row.text("job_id"),
        tenant=row.text("user"),
        submit_s=submit * MINUTE_S,
        num_gpus=num_gpu,
        iterations=iterations,
        duration_s=duration * MINUTE_S,
        kind=kind,
        deadlines=() if kind == "best_effort" else _tiers(row, kind),
        model=row.text("model_name"),
    )


def _tiers(row: Row, kind: str) -> tuple[tuple[float, float], ...]:
    times = row.numbers("expect_time_list")
    values = row.numbers("expect_value_list")
    if kind == "strict_slo" and len(times) != 1:
        raise row.error("expect_time_list", f"a strict job has one deadline (got {len(times)})")
    if len(values) != len(times):
        raise row.error(
            "expect_value_list",
            f"{len(values)} values for {len(times)} deadlines (the lists must match)",
        )
    for k, t in enumerate(times):
        if t <= 0 or (k and t <= times[k - 1]):
            raise row.error("expect_time_list", "deadlines must be > 0 and increasing")
    for k, v in enumerate(values):
        if v <= 0 or (k and v > values[k - 1]):
            raise row.error("expect_value_list", "values must be > 0 and non-increasing")
    return tuple((t * MINUTE_S, v) for t, v in zip(times, values, strict=True))
