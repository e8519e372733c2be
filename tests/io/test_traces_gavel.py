"""Gavel's files: the throughput file (alone and co-located) and both trace formats.

Hostile input and random corruptions of these fixtures: test_traces_gavel_hostile.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedopt.core.errors import InvalidInstanceError
from schedopt.io.traces import (
    GavelJobType,
    GavelTraceJob,
    load_gavel_throughput_table,
    load_gavel_throughputs,
    load_gavel_trace,
)
from schedopt.io.traces.gavel import parse_job_key

#: The shared data directory: found from the repository or from a worktree beside it.
DATA = next(
    (p / "shared" / "data" for p in Path(__file__).resolve().parents if (p / "shared").is_dir()),
    Path("/work/shared/data"),
)
GAVEL = DATA / "gavel"
needs_gavel = pytest.mark.skipif(not GAVEL.is_dir(), reason="shared Gavel data not present")

R16, R64, TR = "('ResNet-18 (batch size 16)', 1)", "('ResNet-18 (batch size 64)', 1)", "('A3C', 1)"
SAMPLE = {
    "k80": {
        R16: {"null": [4.5], TR: [1.0, 2.0], R16: [2.0, 2.5]},
        "('Transformer (batch size 64)', 2)": {"null": 1.25},
    },
    "v100": {
        R16: {"null": 20.0, R64: [9.0, 6.0]},
        R64: {"null": 12.0, R16: [6.0, 9.0]},
    },
    "v100_unconsolidated": {R16: {"null": 18.0}},
}

#: Gavel's current trace format (a line of its traces/physical_cluster/*.trace, and one with
#: priority 5 and an SLO), then the old one (a line of traces/msr/seed=0/*.trace, one with
#: scale factor 0, which Gavel's old parser skipped).
TRACE_10 = [
    "ResNet-50 (batch size 64)\tpython3 main.py -j 2 -a resnet50 -b 64 %s/imagenet/\t"
    "image_classification/imagenet\t--num_minibatches\t1\t2931\t1\t1\t-1.000000\t0",
    "A3C\tpython3 main.py --env PongDeterministic-v4\trl\t--max-steps\t0\t2000\t2\t5\t1.200000"
    "\t3600.5",
]
TRACE_7 = [
    "Transformer (batch size 128)\tcd %s/translation && python3 train.py -data %s/multi30k\t"
    "-step\t1\t95121\t0.000000\t1",
    "Recommendation (batch size 8192)\tcd %s/recommendation && python3 train.py\t-n\t0\t10000"
    "\t6.000000\t0",
    "LM (batch size 80)\tcd %s/language_modeling && python3 main.py --data %s/wikitext2\t"
    "--steps\t1\t779751\t336541.000000\t8",
]


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    if isinstance(text, str):
        text = text.encode("utf-8")
    p.write_bytes(text)
    return p


# --------------------------------------------------------------------------- throughputs
def test_gavel_records(tmp_path: Path) -> None:
    path = write(tmp_path, "t.json", json.dumps(SAMPLE))
    jobs = load_gavel_throughputs(path)
    assert jobs == [
        GavelJobType("ResNet-18 (batch size 16)", 1, {"k80": 4.5, "v100": 20.0}),
        GavelJobType("ResNet-18 (batch size 64)", 1, {"v100": 12.0}),
        GavelJobType("Transformer (batch size 64)", 2, {"k80": 1.25}),
    ]
    unc = load_gavel_throughputs(path, unconsolidated=True)
    assert unc == [GavelJobType("ResNet-18 (batch size 16)", 1, {"v100": 18.0})]
    assert parse_job_key("('A3C', 4)") == ("A3C", 4)


def test_colocation_entries_are_keyed_by_both_orders(tmp_path: Path) -> None:
    table = load_gavel_throughput_table(write(tmp_path, "t.json", json.dumps(SAMPLE)))
    r16, r64, a3c = parse_job_key(R16), parse_job_key(R64), parse_job_key(TR)
    assert table.worker_types == ("k80", "v100")
    assert table.alone[r16] == {"k80": 4.5, "v100": 20.0}
    assert table.job_types() == load_gavel_throughputs(tmp_path / "t.json")
    # The file has both orders on v100; the first number is the outer key's job.
    assert table.colocated[(r16, r64)] == {"v100": (9.0, 6.0)}
    assert table.pair(r16, r64, "v100") == (9.0, 6.0)
    assert table.pair(r64, r16, "v100") == (6.0, 9.0)
    # Only one order on k80 (A3C is never measured alone there): the other is filled in.
    assert table.pair(r16, a3c, "k80") == (1.0, 2.0)
    assert table.pair(a3c, r16, "k80") == (2.0, 1.0)
    assert table.pair(r16, r16, "k80") == (2.0, 2.5)  # a type with itself: one entry, as is
    assert table.pair(r16, r64, "k80") is None  # not measured there
    assert table.pair(r16, ("ResNet-18 (batch size 16)", 2), "v100") is None
    unc = load_gavel_throughput_table(tmp_path / "t.json", unconsolidated=True)
    assert unc.alone == {r16: {"v100": 18.0}} and unc.colocated == {}


@pytest.mark.parametrize(
    "doc, where",
    [
        ({"k80": {"ResNet": {"null": 1.0}}}, "t.json:k80.ResNet"),
        ({"k80": {"('A', 1)": {"x": 1.0}}}, "t.json:k80.('A', 1)"),
        ({"k80": {"('A', 1)": {"null": -1.0}}}, "t.json:k80.('A', 1)"),
        ({"k80": {"('A', 1)": {"null": 1e10}}}, "t.json:k80.('A', 1)"),
        ({"k80": {"('A', 1)": {"null": True}}}, "t.json:k80.('A', 1)"),
        ({"k80": {"('A', 1)": {"null": "5"}}}, "t.json:k80.('A', 1)"),
        ({"k80": {"('A', 1)": {"null": 10**400}}}, "t.json:k80.('A', 1)"),
        ({"k80": {"('A', 1)": [1.0]}}, "t.json:k80.('A', 1)"),
        ({"k80": {"('A', 1)": {"null": []}}}, "t.json:k80.('A', 1)"),
        ({"k80": {"('A', 1)": {"null": 1.0}, "('A', 01)": {"null": 1.0}}}, "t.json:k80.('A', 01)"),
        ({"k80": {"('A', 0)": {"null": 1.0}}}, "t.json:k80.('A', 0)"),
        ({"k80": {"('A', 9999999)": {"null": 1.0}}}, "t.json:k80.('A', 9999999)"),
        ({"k80": []}, "t.json:k80"),
        ({"k80": {"('A', 1)": {"null": 1.0, "B": [1, 1]}}}, "t.json:k80.('A', 1).B"),
        ({"k80": {"('A', 1)": {"null": 1.0, "('B', 1)": 1.0}}}, "t.json:k80.('A', 1).('B', 1)"),
        ({"k80": {"('A', 1)": {"null": 1.0, "('B', 1)": [1.0]}}}, "t.json:k80.('A', 1).('B', 1)"),
        (
            {"k80": {"('A', 1)": {"null": 1.0, "('B', 1)": [1.0, -2.0]}}},
            "t.json:k80.('A', 1).('B', 1)",
        ),
        (  # Gavel never pairs different scale factors
            {"k80": {"('A', 1)": {"null": 1.0, "('B', 2)": [1.0, 1.0]}}},
            "t.json:k80.('A', 1).('B', 2)",
        ),
        (  # the two orders disagree: Gavel's answer would depend on the jobs' IDs
            {
                "k80": {
                    "('A', 1)": {"null": 1.0, "('B', 1)": [1.0, 2.0]},
                    "('B', 1)": {"null": 1.0, "('A', 1)": [1.0, 2.0]},
                }
            },
            "t.json:k80.('B', 1).('A', 1)",
        ),
    ],
)
def test_gavel_malformed_entries_name_the_key(tmp_path: Path, doc, where: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        load_gavel_throughputs(write(tmp_path, "t.json", json.dumps(doc)))
    assert err.value.path == where


@pytest.mark.parametrize(
    "text, where",
    [
        ("{oops", "t.json:line 1 column 2"),
        ("[1, 2]", "t.json"),
        ('{"k80": {"(\'A\', 1)": {"null": NaN}}}', "t.json"),
        ('{"k80": {"(\'A\', 1)": {"null": 1e999}}}', "t.json:k80.('A', 1)"),
        ("", "t.json:line 1 column 1"),
        (b'{"k80\xff": {}}', "t.json"),
    ],
)
def test_gavel_unreadable_json(tmp_path: Path, text: str | bytes, where: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        load_gavel_throughputs(write(tmp_path, "t.json", text))
    assert err.value.path == where


@needs_gavel
def test_gavel_real_file() -> None:
    jobs = load_gavel_throughputs(GAVEL / "simulation_throughputs.json")
    assert len(jobs) == 83
    assert {g for j in jobs for g in j.throughput} == {"k80", "p100", "v100"}
    assert {j.scale_factor for j in jobs} <= {1, 2, 4, 8}
    faster = [j for j in jobs if {"k80", "v100"} <= set(j.throughput) and j.throughput["k80"] > 0]
    assert sum(j.throughput["v100"] >= j.throughput["k80"] for j in faster) > 0.9 * len(faster)


@needs_gavel
def test_gavel_real_file_colocation() -> None:
    table = load_gavel_throughput_table(GAVEL / "simulation_throughputs.json")
    # 26 single-GPU job types and 19 distributed ones at each of 2, 4, 8 GPUs, every ordered
    # pair of the same scale factor measured on each of the 3 worker types.
    assert len(table.colocated) == 26**2 + 3 * 19**2
    assert all(set(by_type) == {"k80", "p100", "v100"} for by_type in table.colocated.values())
    for (a, b), by_type in table.colocated.items():
        assert a[1] == b[1]
        for w, (ta, tb) in by_type.items():
            assert table.pair(b, a, w) == (tb, ta)
    r16, r256 = ("ResNet-18 (batch size 16)", 1), ("ResNet-18 (batch size 256)", 1)
    ta, tb = table.pair(r16, r256, "v100") or (0.0, 0.0)
    assert 0 < ta < table.alone[r16]["v100"] and 0 < tb <= table.alone[r256]["v100"]
    unc = load_gavel_throughput_table(GAVEL / "simulation_throughputs.json", unconsolidated=True)
    assert unc.worker_types == ("k80", "p100", "v100")


# --------------------------------------------------------------------------- traces
def test_trace_current_format(tmp_path: Path) -> None:
    trace = load_gavel_trace(write(tmp_path, "t.trace", "\n".join(TRACE_10) + "\n"))
    assert trace.fields == 10 and trace.skipped == {} and len(trace) == 2
    first, second = trace
    assert first == GavelTraceJob(
        job_type="ResNet-50 (batch size 64)",
        scale_factor=1,
        total_steps=2931,
        arrival_time_s=0.0,
        priority_weight=1.0,
        slo=None,  # Gavel writes -1 for "no SLO"
        command="python3 main.py -j 2 -a resnet50 -b 64 %s/imagenet/",
        working_directory="image_classification/imagenet",
        num_steps_arg="--num_minibatches",
        needs_data_dir=True,
        line=1,
    )
    assert second.key == ("A3C", 2)
    assert (second.priority_weight, second.slo, second.arrival_time_s) == (5.0, 1.2, 3600.5)
    assert not second.needs_data_dir and second.line == 2


def test_trace_old_format(tmp_path: Path) -> None:
    trace = load_gavel_trace(write(tmp_path, "t.trace", "\n".join(TRACE_7) + "\n"))
    assert trace.fields == 7 and len(trace) == 2
    assert trace.skipped == {"scale_factor == 0": 1}
    first, last = trace
    assert first.key == ("Transformer (batch size 128)", 1)
    assert (first.total_steps, first.arrival_time_s, first.num_steps_arg) == (95121, 0.0, "-step")
    assert (first.priority_weight, first.slo, first.working_directory) == (1.0, None, "")
    assert last.key == ("LM (batch size 80)", 8) and last.arrival_time_s == 336541.0
    assert last.line == 3


def test_trace_line_endings(tmp_path: Path) -> None:
    crlf = load_gavel_trace(write(tmp_path, "crlf.trace", "\r\n".join(TRACE_10) + "\r\n"))
    bare = load_gavel_trace(write(tmp_path, "bare.trace", "\n".join(TRACE_10)))
    assert crlf.jobs == bare.jobs and len(bare) == 2


@needs_gavel
def test_trace_real_file() -> None:
    trace = load_gavel_trace(GAVEL / "msr_seed0.trace")
    assert trace.fields == 7 and len(trace) == 2000 and trace.skipped == {}
    arrivals = [j.arrival_time_s for j in trace]
    assert arrivals[0] == 0 and arrivals == sorted(arrivals)
    table = load_gavel_throughput_table(GAVEL / "simulation_throughputs.json")
    single = [j for j in trace if j.scale_factor == 1]
    assert len(single) > 900 and all(j.key in table.alone for j in single)
