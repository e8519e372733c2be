"""CSV reading shared by the trace loaders: rows with their line numbers, typed fields that
name ``file:line N.column`` when they are malformed, and the power-of-two rounding rule."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator, Sequence
from pathlib import Path

from schedopt.core.errors import InvalidInstanceError
from schedopt.core.files import read_text
from schedopt.core.powers_of_two import smallest_power_of_two_at_least
from schedopt.core.pydantic_errors import describe

from ._files import trace_cap


class Row:
    """One CSV row; the typed getters raise ``InvalidInstanceError`` naming line and column."""

    def __init__(self, name: str, line: int, values: dict[str, str | None]):
        self.name, self.line, self.values = name, line, values

    def where(self, column: str) -> str:
        return f"{self.name}:line {self.line}.{column}"

    def error(self, column: str, reason: str) -> InvalidInstanceError:
        return InvalidInstanceError(self.where(column), reason)

    def text(self, column: str) -> str:
        value = self.values.get(column)
        if value is None:
            raise self.error(column, "missing value (the row has too few fields)")
        return value.strip()

    def integer(self, column: str) -> int:
        raw = self.text(column)
        try:
            number = float(raw)
        except ValueError:
            raise self.error(column, f"not a number{got(raw)}") from None
        if not math.isfinite(number) or number != int(number):
            raise self.error(column, f"not a whole number{got(raw)}")
        return int(number)

    def number(self, column: str) -> float:
        raw = self.text(column)
        try:
            number = float(raw)
        except ValueError:
            raise self.error(column, f"not a number{got(raw)}") from None
        if not math.isfinite(number):
            raise self.error(column, f"not a finite number{got(raw)}")
        return number

    def numbers(self, column: str, sep: str = "-") -> list[float]:
        raw = self.text(column)
        try:
            out = [float(part) for part in raw.split(sep)]
        except ValueError:
            raise self.error(column, f"not a {sep!r}-separated list of numbers{got(raw)}") from None
        if not all(math.isfinite(x) for x in out):
            raise self.error(column, f"not finite numbers{got(raw)}")
        return out


def got(raw: str) -> str:
    """``" (got '12x')"``: the offending text quoted, unless it is too long to quote."""
    shown = describe(raw)
    return f" (got {shown})" if shown else f" (got {len(raw):,} characters)"


def read_rows(path: Path, columns: Sequence[str]) -> Iterator[Row]:
    """The data rows of ``path`` (header on line 1), after checking the header has ``columns``.
    The file is read with a cap on its bytes (``/dev/zero`` or an endless FIFO cannot hang the
    loader), and what the csv module refuses (a NUL byte, a field over its size limit) is an
    ``InvalidInstanceError`` naming the line."""
    text = read_text(path, trace_cap(), path.name)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = reader.fieldnames or []
        missing = [c for c in columns if c not in header]
        if missing:
            raise InvalidInstanceError(
                f"{path.name}:line 1", f"missing columns {missing} (header is {list(header)})"
            )
        for values in reader:
            yield Row(path.name, reader.line_num, values)
    except csv.Error as err:
        # (line_num counts the lines read before the one csv refused)
        raise InvalidInstanceError(f"{path.name}:line {reader.line_num + 1}", str(err)) from None


SKIP_NO_GPU = "num_gpu == 0"
ADJUST_POW2 = "num_gpu rounded up to a power of two"


def gang_size(row: Row, skipped: dict[str, int], adjusted: dict[str, int]) -> int | None:
    """The row's ``num_gpu`` as a power of two; None (and counted) for a job without GPUs."""
    num_gpu = row.integer("num_gpu")
    if num_gpu < 0:
        raise row.error("num_gpu", f"must be >= 0 (got {num_gpu})")
    if num_gpu == 0:
        count(skipped, SKIP_NO_GPU)
        return None
    if smallest_power_of_two_at_least(num_gpu) != num_gpu:
        count(adjusted, ADJUST_POW2)
        return smallest_power_of_two_at_least(num_gpu)
    return num_gpu


def gang_rows(
    path: Path,
    columns: Sequence[str],
    limit: int | None,
    skipped: dict[str, int],
    adjusted: dict[str, int],
) -> Iterator[tuple[Row, int]]:
    """The rows of ``path`` (``read_rows``) of jobs with GPUs, each with its gang size
    (``gang_size``, which counts the others in ``skipped``), until ``limit`` have been taken:
    a trace loader makes one job of each row, or raises."""
    taken = 0
    for row in read_rows(path, columns):
        if limit is not None and taken >= limit:
            return
        num_gpu = gang_size(row, skipped, adjusted)
        if num_gpu is None:
            continue
        taken += 1
        yield row, num_gpu


def count(tally: dict[str, int], reason: str) -> None:
    tally[reason] = tally.get(reason, 0) + 1
