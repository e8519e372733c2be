"""The InfiniteHBD fault-trace loader (schedopt.io.traces.infinitehbd)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from schedopt import InvalidInstanceError
from schedopt.io.traces import load_infinitehbd_faults

TRACE = Path(__file__).resolve().parents[3] / "shared" / "data" / "infinitehbd-faults"


def _write(tmp_path: Path, doc: object) -> Path:
    p = tmp_path / "fault_trace.json"
    p.write_text(json.dumps(doc))
    return p


def test_pairs_starts_with_ends(tmp_path: Path) -> None:
    ft = {"Level": "Hardware Failure", "Class": "GPU", "Desc": "GPU xid Error"}
    doc = [
        {"node_id": "a", "event_time": 1.0, "event_type": "fault_start", "fault_type": ft},
        {"node_id": "b", "event_time": 1.5, "event_type": "fault_start", "fault_type": ft},
        {"node_id": "a", "event_time": 2.0, "event_type": "fault_end", "fault_type": ft},
    ]
    faults = load_infinitehbd_faults(_write(tmp_path, doc))
    assert [(f.node, f.start_day, f.end_day) for f in faults] == [
        ("a", 1.0, 2.0),
        ("b", 1.5, math.inf),
    ]
    assert faults[0].is_gpu


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        ({"x": 1}, "fault_trace.json"),
        ([{"node_id": "", "event_time": 1, "event_type": "fault_start"}], "node_id"),
        ([{"node_id": "a", "event_time": -1, "event_type": "fault_start"}], "event_time"),
        ([{"node_id": "a", "event_time": 1, "event_type": "oops"}], "event_type"),
        (
            [{"node_id": "a", "event_time": 1, "event_type": "fault_end", "fault_type": 3}],
            "fault_type",
        ),
    ],
)
def test_bad_files_name_the_entry(tmp_path: Path, doc: object, where: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        load_infinitehbd_faults(_write(tmp_path, doc))
    assert where in str(err.value)


def test_not_json(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_text("[{")
    with pytest.raises(InvalidInstanceError):
        load_infinitehbd_faults(p)


@pytest.mark.skipif(not (TRACE / "fault_trace.json").exists(), reason="shared data absent")
def test_the_published_trace() -> None:
    faults = load_infinitehbd_faults(TRACE / "fault_trace.json")
    assert len(faults) == 584  # 584 faults on 231 of 400 servers over 349 days
    assert len({f.node for f in faults}) == 231
    assert max(f.start_day for f in faults) < 349


@pytest.mark.parametrize("t", [10**400, 1e300, -(10**400)])
def test_an_out_of_range_time_names_the_entry(tmp_path: Path, t: object) -> None:
    # an integer too large for a float once escaped as an OverflowError
    p = tmp_path / "fault_trace.json"
    p.write_text(f'[{{"node_id": "a", "event_time": {t}, "event_type": "fault_start"}}]')
    with pytest.raises(InvalidInstanceError) as err:
        load_infinitehbd_faults(p)
    assert "event_time" in str(err.value)


def test_an_unsorted_file_pairs_in_time_order(tmp_path: Path) -> None:
    # an end listed before its start once closed nothing and a later end was lost, or an end
    # earlier than the start it was paired with gave a fault of length 0
    doc = [
        {"node_id": "a", "event_time": 5.0, "event_type": "fault_end"},
        {"node_id": "a", "event_time": 3.0, "event_type": "fault_start"},
        {"node_id": "a", "event_time": 9.0, "event_type": "fault_start"},
        {"node_id": "a", "event_time": 1.0, "event_type": "fault_end"},
    ]
    faults = load_infinitehbd_faults(_write(tmp_path, doc))
    assert [(f.start_day, f.end_day) for f in faults] == [(3.0, 5.0), (9.0, math.inf)]
