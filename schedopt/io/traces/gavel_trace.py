"""Loader for Gavel's job traces (``*.trace``, OSDI'20 artifact), in both of its formats.

One job per line, fields separated by tabs, no header. The format is detected per file from
the first line's field count; every line must have that count.

**10 fields**, Gavel's current format: read by ``parse_trace`` (``scheduler/utils.py`` lines
500-521 at commit c4fa400; since commit 19a0dd2, "Separate working directory from job
command", Aug 2020), written by ``Job.__str__`` (``scheduler/job.py`` lines 20-25) followed by
the arrival time (``scripts/utils/generate_trace.py`` line 71)::

    job_type  command  working_directory  num_steps_arg  needs_data_dir
    total_steps  scale_factor  priority_weight  SLO  arrival_time

**7 fields**, the older format of Gavel's checked-in ``traces/msr/seed=*/*.trace`` (the parser
before commit ebfc393, Apr 2020: ``scheduler/utils.py`` lines 47-67 at commit ace90a3)::

    job_type  command  num_steps_arg  needs_data_dir  total_steps  arrival_time  scale_factor

It has no working directory, priority or SLO: they load as ``""``, 1.0 and None. A line with
``scale_factor`` 0 is skipped, as that parser did, and counted in ``skipped``. Gavel read a
9-field format in between (the 10 fields without ``working_directory``); it is not read here.

The fields, as :class:`GavelTraceJob` holds them:

- ``job_type``: the model, e.g. ``"ResNet-18 (batch size 32)"``; ``(job_type, scale_factor)``
  is the job's key in the throughput file (:mod:`.gavel`); not empty. Not every key of
  Gavel's old traces is in its throughput file: 373 jobs of its 2,000-job MSR trace of seed 0
  are not (scale factors 7, 16, 20, 32, and models Gavel does not distribute at 2 to 8 GPUs);
- ``command``: the shell command, with ``%s`` placeholders for the run directory (two when
  ``needs_data_dir``); ``working_directory`` (10 fields only); ``num_steps_arg``: the
  command's flag for the number of steps (``-n``, ``--num_steps``, ...);
- ``needs_data_dir``: ``0`` or ``1``;
- ``total_steps``: a whole number in ``[1, MAX_ITERATIONS]``;
- ``scale_factor``: GPUs the job runs on, a whole number in ``[1, MAX_GPUS]``;
- ``priority_weight``: in ``[MIN_WEIGHT, MAX_WEIGHT]`` (Gavel writes it as an integer);
- ``SLO``: a negative value (Gavel writes ``-1.000000``) means none (``Job.__init__``,
  ``job.py`` lines 15-18); otherwise a factor in ``[MIN_WEIGHT, MAX_WEIGHT]``: Gavel's
  deadline is ``SLO`` times the job's duration after it arrives (``scheduler.py`` lines
  492-494);
- ``arrival_time``: seconds from the start of the trace, in ``[0, MAX_SECONDS]``; kept in file
  order (Gavel's generator writes them non-decreasing; not checked).

The limits are those of ``schedopt.core.limits``. Every bad line raises
:class:`~schedopt.core.errors.InvalidInstanceError` naming ``"<file>:line <n>.<field>"``
(``"<file>:line <n>"`` for a line that is not UTF-8, too long or of the wrong field count).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from schedopt.core.errors import InvalidInstanceError
from schedopt.core.limits import (
    MAX_GPUS,
    MAX_ITERATIONS,
    MAX_SECONDS,
    MAX_WEIGHT,
    MIN_WEIGHT,
)
from schedopt.core.pydantic_errors import describe

from ._csv import Row
from ._files import read_bytes

FIELDS_10 = (
    "job_type",
    "command",
    "working_directory",
    "num_steps_arg",
    "needs_data_dir",
    "total_steps",
    "scale_factor",
    "priority_weight",
    "SLO",
    "arrival_time",
)
FIELDS_7 = (
    "job_type",
    "command",
    "num_steps_arg",
    "needs_data_dir",
    "total_steps",
    "arrival_time",
    "scale_factor",
)
FORMATS = {len(FIELDS_10): FIELDS_10, len(FIELDS_7): FIELDS_7}
#: Longest line read (Gavel's are about 200 bytes); longer is hostile input, refused early.
MAX_LINE_BYTES = 64 * 1024
SKIP_NO_GPU = "scale_factor == 0"


@dataclass(frozen=True)
class GavelTraceJob:
    """One job of a Gavel trace (fields as in the module docstring); ``line``: its line in the
    file, from 1."""

    job_type: str
    scale_factor: int
    total_steps: int
    arrival_time_s: float
    priority_weight: float
    slo: float | None
    command: str
    working_directory: str
    num_steps_arg: str
    needs_data_dir: bool
    line: int

    @property
    def key(self) -> tuple[str, int]:
        """``(job_type, scale_factor)``: the job's key in Gavel's throughput file."""
        return self.job_type, self.scale_factor


@dataclass(frozen=True)
class GavelTrace:
    """What :func:`load_gavel_trace` returns: the jobs in file order, the file's format
    (``fields``: 7 or 10) and the lines skipped, by reason."""

    jobs: tuple[GavelTraceJob, ...]
    fields: int
    skipped: Mapping[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.jobs)

    def __iter__(self) -> Iterator[GavelTraceJob]:
        return iter(self.jobs)


def load_gavel_trace(path: str | Path) -> GavelTrace:
    """Read a Gavel trace of either format; see the module docstring."""
    path = Path(path)
    jobs: list[GavelTraceJob] = []
    skipped: dict[str, int] = {}
    names: tuple[str, ...] = ()
    for number, text in _lines(path):
        parts = text.split("\t")
        if not names:
            names = _format(path.name, number, len(parts))
        elif len(parts) != len(names):
            raise InvalidInstanceError(
                f"{path.name}:line {number}",
                f"{len(parts)} tab-separated fields; line 1 has {len(names)} (a file holds "
                "one format)",
            )
        row = Row(path.name, number, dict(zip(names, parts, strict=True)))
        if names is FIELDS_7 and row.integer("scale_factor") == 0:
            skipped[SKIP_NO_GPU] = skipped.get(SKIP_NO_GPU, 0) + 1
            continue
        jobs.append(_job(row, with_priority=names is FIELDS_10))
    if not names:
        raise InvalidInstanceError(f"{path.name}:line 1", "no jobs: the file is empty")
    return GavelTrace(tuple(jobs), len(names), skipped)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, text without its line ending)`` for every line of the file."""
    data = read_bytes(path)
    raw_lines = data.split(b"\n")
    if raw_lines[-1] == b"":  # the file ends with a newline (or is empty)
        raw_lines.pop()
    for number, raw in enumerate(raw_lines, start=1):
        where = f"{path.name}:line {number}"
        if len(raw) > MAX_LINE_BYTES:
            raise InvalidInstanceError(
                where, f"{len(raw):,} bytes; a line holds at most {MAX_LINE_BYTES:,}"
            )
        try:
            text = raw.decode("utf-8").removesuffix("\r")
        except UnicodeDecodeError as err:
            raise InvalidInstanceError(
                where, f"not UTF-8 text (byte {raw[err.start]:#04x} at column {err.start + 1})"
            ) from None
        if not text:
            raise InvalidInstanceError(where, "an empty line (every line is one job)")
        yield number, text


def _format(name: str, number: int, count: int) -> tuple[str, ...]:
    names = FORMATS.get(count)
    if names is None:
        older = " (Gavel's 9-field format of Apr-Aug 2020 is not read)" if count == 9 else ""
        raise InvalidInstanceError(
            f"{name}:line {number}",
            f"{count} tab-separated fields; a Gavel trace has 10 (current format) or 7 (old "
            f"format){older}",
        )
    return names


def _job(row: Row, *, with_priority: bool) -> GavelTraceJob:
    job_type = row.text("job_type")
    if not job_type:
        raise row.error("job_type", "empty")
    needs_data_dir = row.text("needs_data_dir")
    if needs_data_dir not in ("0", "1"):
        raise row.error("needs_data_dir", f"must be 0 or 1 (got {_shown(needs_data_dir)})")
    return GavelTraceJob(
        job_type=job_type,
        scale_factor=_whole(row, "scale_factor", MAX_GPUS),
        total_steps=_whole(row, "total_steps", MAX_ITERATIONS),
        arrival_time_s=_in_range(row, "arrival_time", 0.0, MAX_SECONDS),
        priority_weight=(
            _in_range(row, "priority_weight", MIN_WEIGHT, MAX_WEIGHT) if with_priority else 1.0
        ),
        slo=_slo(row) if with_priority else None,
        command=row.text("command"),
        working_directory=row.text("working_directory") if with_priority else "",
        num_steps_arg=row.text("num_steps_arg"),
        needs_data_dir=needs_data_dir == "1",
        line=row.line,
    )


def _whole(row: Row, name: str, most: int) -> int:
    value = row.integer(name)
    if not 1 <= value <= most:
        raise row.error(name, f"must be in [1, {most:,}] (got {describe(value)})")
    return value


def _in_range(row: Row, name: str, least: float, most: float) -> float:
    value = row.number(name)
    if not least <= value <= most:
        raise row.error(name, f"must be in [{least:g}, {most:g}] (got {value:g})")
    return value


def _slo(row: Row) -> float | None:
    value = row.number("SLO")
    if value < 0:  # Gavel's "no SLO" (it writes -1)
        return None
    if not MIN_WEIGHT <= value <= MAX_WEIGHT:
        raise row.error(
            "SLO", f"must be negative (none) or in [{MIN_WEIGHT:g}, {MAX_WEIGHT:g}] (got {value:g})"
        )
    return value


def _shown(text: str) -> str:
    return describe(text) or f"{len(text):,} characters"
