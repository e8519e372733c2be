"""Hostile Gavel files: each bad line or entry ends as InvalidInstanceError naming the line and
the field, never another exception or a hang; random corruptions of valid fixtures load or
raise InvalidInstanceError, nothing else."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedopt.core.errors import InvalidInstanceError
from schedopt.io.traces import _files, load_gavel_throughput_table, load_gavel_trace
from schedopt.io.traces.gavel_trace import FIELDS_7, FIELDS_10, MAX_LINE_BYTES

from .test_traces_gavel import SAMPLE, TRACE_7, TRACE_10, write
from .threads import in_thread


def with_field(line: str, fields: tuple[str, ...], name: str, value: str) -> str:
    parts = line.split("\t")
    parts[fields.index(name)] = value
    return "\t".join(parts)


BAD_FIELDS = [
    ("total_steps", "nan"),
    ("total_steps", "inf"),
    ("total_steps", "1e999"),
    ("total_steps", "-5"),
    ("total_steps", "0"),
    ("total_steps", "12.5"),
    ("total_steps", "1e13"),
    ("total_steps", "9" * 5000),
    ("total_steps", ""),
    ("scale_factor", "-1"),
    ("scale_factor", "1.5"),
    ("scale_factor", "two"),
    ("scale_factor", str(2**21)),
    ("arrival_time", "NaN"),
    ("arrival_time", "-inf"),
    ("arrival_time", "-1"),
    ("arrival_time", "1e999"),
    ("arrival_time", "2e9"),
    ("needs_data_dir", "2"),
    ("needs_data_dir", "yes"),
    ("job_type", " "),
]
BAD_FIELDS_10 = [
    ("priority_weight", "0"),
    ("priority_weight", "-1"),
    ("priority_weight", "inf"),
    ("priority_weight", "1e7"),
    ("SLO", "0"),
    ("SLO", "nan"),
    ("SLO", "-inf"),
    ("SLO", "1e999"),
]


@pytest.mark.parametrize(("name", "value"), BAD_FIELDS + BAD_FIELDS_10)
def test_a_bad_field_of_the_current_format_is_named(tmp_path: Path, name: str, value: str) -> None:
    lines = [TRACE_10[0], with_field(TRACE_10[1], FIELDS_10, name, value)]
    with pytest.raises(InvalidInstanceError) as err:
        load_gavel_trace(write(tmp_path, "t.trace", "\n".join(lines)))
    assert err.value.path == f"t.trace:line 2.{name}"
    assert len(str(err.value)) < 300  # hostile values are not repeated in full


@pytest.mark.parametrize(("name", "value"), BAD_FIELDS)
def test_a_bad_field_of_the_old_format_is_named(tmp_path: Path, name: str, value: str) -> None:
    lines = [with_field(TRACE_7[0], FIELDS_7, name, value)]
    with pytest.raises(InvalidInstanceError) as err:
        load_gavel_trace(write(tmp_path, "t.trace", "\n".join(lines)))
    assert err.value.path == f"t.trace:line 1.{name}"


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        (b"", "t.trace:line 1", "empty"),
        (b"\n", "t.trace:line 1", "empty line"),
        (f"{TRACE_10[0]}\n\n{TRACE_10[1]}".encode(), "t.trace:line 2", "empty line"),
        (f"{TRACE_10[0]}\n{TRACE_7[0]}".encode(), "t.trace:line 2", "line 1 has 10"),
        (f"{TRACE_7[0]}\n{TRACE_10[0]}".encode(), "t.trace:line 2", "line 1 has 7"),
        (b"a\tb\tc", "t.trace:line 1", "3 tab-separated fields"),
        (TRACE_10[0].replace("\t1\t2931", "\t2931").encode(), "t.trace:line 1", "9-field"),
        (f"{TRACE_10[0]}\tx".encode(), "t.trace:line 1", "11 tab-separated"),
        (TRACE_10[0].encode() + b"\n\xff\xfe\tA3C", "t.trace:line 2", "not UTF-8"),
        (b"\x00" * 100, "t.trace:line 1", "1 tab-separated"),
        (b"A" * (MAX_LINE_BYTES + 1), "t.trace:line 1", "at most"),
        (TRACE_10[0].encode() + b"\n" + b"\t" * MAX_LINE_BYTES * 2, "t.trace:line 2", "at most"),
    ],
)
def test_bad_lines_are_named(tmp_path: Path, text: bytes, where: str, words: str) -> None:
    with pytest.raises(InvalidInstanceError, match=words) as err:
        load_gavel_trace(write(tmp_path, "t.trace", text))
    assert err.value.path == where


def test_a_hostile_key_is_cut_in_the_error_path(tmp_path: Path) -> None:
    doc = {"k80": {"('A', 1)" + "x" * 100_000: {"null": 1.0}}}
    with pytest.raises(InvalidInstanceError) as err:
        load_gavel_throughput_table(write(tmp_path, "t.json", json.dumps(doc)))
    assert len(str(err.value)) < 300


# --------------------------------------------------------------------------- endless files
@pytest.fixture
def small_cap(monkeypatch: pytest.MonkeyPatch) -> int:
    cap = 1 << 20
    monkeypatch.setattr(_files, "MAX_TRACE_BYTES", cap)
    return cap


@pytest.mark.parametrize("load", [load_gavel_trace, load_gavel_throughput_table])
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_dev_zero_is_refused(small_cap: int, load) -> None:
    box = in_thread(lambda: load("/dev/zero"))
    assert isinstance(box.get("error"), InvalidInstanceError), box
    assert box["error"].path == "zero" and "character device" in box["error"].reason


def test_a_missing_file_and_a_directory(tmp_path: Path) -> None:
    for path in (tmp_path / "absent.trace", tmp_path):
        with pytest.raises(InvalidInstanceError):
            load_gavel_trace(path)
        with pytest.raises(InvalidInstanceError):
            load_gavel_throughput_table(path)


# --------------------------------------------------------------------------- corruptions
TOKENS = [b"nan", b"inf", b"-1", b"0", b"1e999", b"\t", b"\n", b"\r", b"\x00", b"\xff", b"9" * 400]
FUZZ = settings(
    derandomize=True,
    deadline=None,
    max_examples=150,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@st.composite
def corrupted(draw: st.DrawFn, valid: bytes) -> bytes:
    """``valid`` with a few random edits: bytes replaced, inserted or deleted, lines
    duplicated, dropped or swapped, or a hostile token spliced in."""
    data = bytearray(valid)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["replace", "insert", "delete", "lines", "token"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "replace" and data:
            data[at] = draw(st.integers(0, 255))
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[at : at + draw(st.integers(1, 16))]
        elif kind == "lines":
            lines = bytes(data).split(b"\n")
            i, j = (draw(st.integers(0, len(lines) - 1)) for _ in range(2))
            op = draw(st.sampled_from(["dup", "drop", "swap"]))
            if op == "dup":
                lines.insert(i, lines[j])
            elif op == "drop":
                del lines[i]
            else:
                lines[i], lines[j] = lines[j], lines[i]
            data = bytearray(b"\n".join(lines))
        else:
            data[at:at] = draw(st.sampled_from(TOKENS))
    return bytes(data)


@FUZZ
@given(
    data=st.one_of(
        corrupted(("\n".join(TRACE_10) + "\n").encode()),
        corrupted(("\n".join(TRACE_7) + "\n").encode()),
    )
)
def test_corrupted_traces_load_or_raise_invalid_instance(tmp_path: Path, data: bytes) -> None:
    with contextlib.suppress(InvalidInstanceError):
        load_gavel_trace(write(tmp_path, "t.trace", data))


@FUZZ
@given(data=corrupted(json.dumps(SAMPLE, indent=1).encode()))
def test_corrupted_throughputs_load_or_raise_invalid_instance(tmp_path: Path, data: bytes) -> None:
    with contextlib.suppress(InvalidInstanceError):
        load_gavel_throughput_table(write(tmp_path, "t.json", data))
