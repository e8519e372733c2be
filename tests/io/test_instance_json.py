"""The JSON format: round trips, the schema, and errors that name the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import schedopt

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "instances" / "admission" / "small-s0.json"


#: Index of the first SLO job of the file (the tests that touch deadlines need one).
SLO = next(i for i, j in enumerate(json.loads(SMALL.read_text())["jobs"]) if j.get("deadlines"))


def doc() -> dict:
    return json.loads(SMALL.read_text())


def error(d) -> schedopt.InvalidInstanceError:
    with pytest.raises(schedopt.InvalidInstanceError) as info:
        schedopt.io.parse_instance(d)
    return info.value


def test_round_trip(tmp_path) -> None:
    inst = schedopt.load(SMALL)
    schedopt.dump(inst, tmp_path / "x.json")
    assert schedopt.load(tmp_path / "x.json") == inst


def test_schema_describes_the_instance() -> None:
    schema = schedopt.io.json_schema("admission")
    assert {"cluster", "jobs", "slots", "slot_s"} <= set(schema["properties"])
    assert "admission" in json.dumps(schema)


@pytest.mark.parametrize(
    ("mutate", "path", "words"),
    [
        (lambda d: d.update(slots=-1), "slots", "greater than or equal to 1"),
        (
            lambda d: d["jobs"][3].update(remaining_iterations=0),
            "jobs[3].remaining_iterations",
            "greater than 0",
        ),
        (
            lambda d: d["jobs"][SLO].update(arrival_s=5000.0),
            f"jobs[{SLO}].deadlines[0].deadline_s",
            "after arrival_s",
        ),
        (
            lambda d: d["jobs"][SLO]["deadlines"][0].update(deadline_s=1e6),
            f"jobs[{SLO}].deadlines[0].deadline_s",
            "beyond the horizon",
        ),
        (lambda d: d["jobs"][1].update(id=d["jobs"][0]["id"]), "jobs[1].id", "duplicate"),
        (
            lambda d: d["jobs"][0].update(throughput={"3": 1.0}),
            "jobs[0].throughput[3]",
            "power of two",
        ),
        (lambda d: d["jobs"][0].update(throughput={"1": -2.0}), "jobs[0].throughput[1]", "> 0"),
        (lambda d: d.update(unavailable_gpus=["h9/g9"]), "unavailable_gpus[0]", "unknown GPU"),
        (lambda d: d["cluster"]["links"].pop(), "cluster.links", "not connected"),
        (
            lambda d: d["cluster"]["links"][0].update(bandwidth_gbps=0),
            "cluster.links[0].bandwidth_gbps",
            "greater than or equal to 0.001",
        ),
        (lambda d: d["jobs"][0].update(kind="urgent"), "jobs[0].kind", "strict_slo"),
        (lambda d: d["jobs"][0].update(colour="red"), "jobs[0].colour", "unknown field"),
        (lambda d: d.pop("jobs"), "jobs", "missing"),
        (lambda d: d.update(problem="tetris"), "problem", "must be one of"),
        (lambda d: d.update(schema_version=7), "schema_version", "version 1"),
    ],
)
def test_errors_name_the_field(mutate, path: str, words: str) -> None:
    d = doc()
    mutate(d)
    err = error(d)
    paths = [p for p, _ in err.problems]
    assert path in paths, err.problems
    reason = dict(err.problems)[path]
    assert words in reason, reason


def test_several_problems_are_all_reported() -> None:
    d = doc()
    d["jobs"][0]["remaining_iterations"] = -1
    d["jobs"][1]["kind"] = "x"
    err = error(d)
    paths = [p for p, _ in err.problems]
    assert "jobs[0].remaining_iterations" in paths and "jobs[1].kind" in paths
    assert str(err).startswith(f"{len(err.problems)} problems in the instance")


@pytest.mark.parametrize("text", ["", "{", "[1, 2]", "null", '{"problem": NaN}', "\\x00"])
def test_malformed_json(text: str) -> None:
    with pytest.raises(schedopt.InvalidInstanceError):
        schedopt.loads(text)


def test_missing_file() -> None:
    with pytest.raises(schedopt.InvalidInstanceError, match="cannot read"):
        schedopt.load("/nonexistent/x.json")


def test_model_too_large_is_refused_before_building() -> None:
    from schedopt.problems.admission import generate_custom

    inst = generate_custom(hosts=2, jobs=2000, slots=2000, seed=0, slot_s=60.0)
    with pytest.raises(schedopt.ModelTooLargeError, match="variables"):
        schedopt.solve(inst, "cpsat", time_limit_s=5)
