"""Hostile input: numbers no solver can take, huge or deep documents, endless files. Each ends
as InvalidInstanceError naming the field, never another exception or a hang."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

import schedopt
from schedopt.io import instance_json

from .threads import in_thread

ROOT = Path(__file__).resolve().parents[2]
SMALL = {
    p: ROOT / "instances" / p / f
    for p, f in [
        ("admission", "small-s0.json"),
        ("fairshare", "small-s0.json"),
        ("moe_placement", "tiny-s0.json"),
    ]
}


def text_with(problem: str, field: str, token: str) -> str:
    """The small instance's text with the first number of ``"field": <number>`` replaced."""
    text = json.dumps(json.loads(SMALL[problem].read_text()))
    new, n = re.subn(rf'"{field}": -?[0-9.e+-]+', f'"{field}": {token}', text, count=1)
    assert n == 1, field
    return new


@pytest.mark.parametrize(
    ("problem", "field", "path"),
    [
        ("admission", "slot_s", "slot_s"),
        ("admission", "value", "jobs[*].deadlines[0].value"),
        ("admission", "weight", "jobs[*].weight"),
        ("admission", "remaining_iterations", "jobs[0].remaining_iterations"),
        ("fairshare", "round_s", "round_s"),
        ("fairshare", "weight", "tenants[0].weight"),
        ("moe_placement", "memory_gib", "cluster.gpus[0].memory_gib"),
    ],
)
@pytest.mark.parametrize("token", ["1e999", "-1e999", "1e308", "18446744073709551616", "5e-324"])
def test_hostile_numbers_name_the_field(problem: str, field: str, path: str, token: str) -> None:
    with pytest.raises(schedopt.InvalidInstanceError) as info:
        schedopt.loads(text_with(problem, field, token))
    pattern = re.escape(path).replace(r"\*", r"\d+")
    assert any(re.fullmatch(pattern, p) for p, _ in info.value.problems), info.value.problems


def test_a_number_of_more_than_4300_digits_is_invalid_instance() -> None:
    with pytest.raises(schedopt.InvalidInstanceError, match="4300 digits"):
        schedopt.loads(text_with("admission", "slot_s", "9" * 5000))


def test_a_huge_python_integer_is_described_not_printed() -> None:
    doc = json.loads(SMALL["admission"].read_text())
    doc["slots"] = 10**5000  # repr() of it raises ValueError past 4,300 digits
    with pytest.raises(schedopt.InvalidInstanceError) as info:
        schedopt.io.parse_instance(doc)
    assert info.value.path == "slots" and "bits" in info.value.reason


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_deep_nesting_in_the_text(depth: int) -> None:
    text = text_with("admission", "slot_s", "[" * depth + "1" + "]" * depth)
    with pytest.raises(schedopt.InvalidInstanceError):
        schedopt.loads(text)


def test_deep_nesting_in_python_objects_while_the_message_is_built() -> None:
    deep: list = []
    for _ in range(sys.getrecursionlimit() * 3):
        deep = [deep]
    doc = json.loads(SMALL["admission"].read_text())
    doc["jobs"][0]["deadlines"] = deep
    doc["jobs"][1]["throughput"] = deep
    with pytest.raises(schedopt.InvalidInstanceError):
        schedopt.io.parse_instance(doc)


@pytest.mark.parametrize("field", ["problem", "schema_version"])
@pytest.mark.parametrize("kind", ["deep", "huge_int", "long_str"])
def test_the_header_fields_are_described_not_printed(field: str, kind: str) -> None:
    """The message about a wrong problem or schema_version was built with repr() outside the
    recursion guard: a list nested 1,000 deep raised RecursionError (#16), a 5,000-digit integer
    ValueError, and a megabyte string went into the message whole."""
    value: object = {"huge_int": 10**5000, "long_str": "x" * 1_000_000}.get(kind)
    if kind == "deep":
        value = []
        for _ in range(1_000):
            value = [value]
    doc = {**json.loads(SMALL["admission"].read_text()), field: value}
    with pytest.raises(schedopt.InvalidInstanceError) as info:
        schedopt.io.parse_instance(doc)
    assert info.value.path == field and len(str(info.value)) < 300


@pytest.mark.parametrize(
    ("slot_s", "slots", "rate", "words"),
    [
        (1e7, None, 1e9, "iterations in one slot"),  # a coefficient HiGHS refuses (>= 1e15)
        (1e5, 10_000, 1e7, "2\\*\\*53"),  # more iterations than doubles count exactly
    ],
)
def test_products_the_models_form_are_checked_across_fields(slot_s, slots, rate, words) -> None:
    # Each field in range, but throughput x slot_s (x slots) is too large for the solvers:
    # before this check CP-SAT answered INFEASIBLE and milp:highs raised IndexError.
    doc = json.loads(SMALL["admission"].read_text())
    doc["slot_s"] = slot_s
    doc["slots"] = slots or doc["slots"]
    doc["jobs"][0]["throughput"] = {"1": rate}
    doc["jobs"][0].pop("throughput_by_type", None)
    with pytest.raises(schedopt.InvalidInstanceError, match=words) as info:
        schedopt.io.parse_instance(doc)
    assert info.value.path == "jobs[0].throughput"


def test_the_largest_iteration_count_solves_with_every_method() -> None:
    # remaining_iterations 1e15 made milp:highs raise IndexError inside PuLP (HiGHS refuses
    # coefficients >= 1e15); the range now stops at 1e12, which every method takes.
    from schedopt.core.limits import MAX_ITERATIONS

    doc = json.loads(SMALL["admission"].read_text())
    doc["jobs"][1]["remaining_iterations"] = MAX_ITERATIONS
    inst = schedopt.io.parse_instance(doc)
    for method in ("milp:highs", "cpsat", "heuristic:edf"):
        assert schedopt.solve(inst, method, time_limit_s=5).status.has_solution, method
    doc["jobs"][1]["remaining_iterations"] = MAX_ITERATIONS * 1000
    with pytest.raises(schedopt.InvalidInstanceError, match="remaining_iterations"):
        schedopt.io.parse_instance(doc)


def test_ranges_are_in_the_json_schema() -> None:
    schema = json.dumps(schedopt.io.json_schema("admission"))
    for field in ("slot_s", "remaining_iterations", "value", "weight", "bandwidth_gbps"):
        block = schema[schema.index(f'"{field}"') :][:400]
        assert '"maximum"' in block, field


# --------------------------------------------------------------------------- endless files
@pytest.fixture
def small_cap(monkeypatch: pytest.MonkeyPatch) -> int:
    cap = 1 << 20
    monkeypatch.setattr(instance_json, "MAX_FILE_BYTES", cap)
    return cap


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_dev_zero_is_refused(small_cap: int) -> None:
    box = in_thread(lambda: schedopt.load("/dev/zero"))
    assert isinstance(box.get("error"), schedopt.InvalidInstanceError), box
    assert "character device" in str(box["error"])


def test_cli_info_on_dev_zero_answers(small_cap: int, capsys: pytest.CaptureFixture) -> None:
    from schedopt.cli import main

    box = in_thread(lambda: main(["info", "/dev/zero"]))
    assert box.get("value") == 3, box  # the CLI's exit code for bad input


def test_moe_expert_times_are_bounded_for_the_solvers() -> None:
    # One expert with a load of ~1e9 µs per batch among µs-sized ones: milp:highs answered a
    # false INFEASIBLE, and in weighted mode CP-SAT refused the model (objective overflow).
    doc = json.loads((ROOT / "instances" / "moe_placement" / "tiny-s0-weighted.json").read_text())
    doc["layers"][1]["experts"][3]["compute_us_per_token"] = 1e6
    with pytest.raises(schedopt.InvalidInstanceError, match="µs") as info:
        schedopt.io.parse_instance(doc)
    assert info.value.path == "layers[1].experts[3]"
    doc["layers"][1]["experts"][3]["compute_us_per_token"] = 5e4
    inst = schedopt.io.parse_instance(doc)
    for method in ("milp:highs", "cpsat"):
        assert schedopt.solve(inst, method, time_limit_s=5).status.has_solution, method


@pytest.mark.parametrize("problem", ["fairshare"])  # admission accepts it: test_mixed_host.py
def test_a_host_mixing_gpu_types_is_refused(problem: str) -> None:
    # The schedulers count a host as one GPU type; with one GPU of another type on an H100
    # host, heuristic:slack placed an H100 job on it (ValidationFailedError).
    doc = json.loads(SMALL[problem].read_text())
    first, second = doc["cluster"]["gpus"][:2]
    assert first["host"] == second["host"]
    second["gpu_type"] = "X1"
    with pytest.raises(schedopt.InvalidInstanceError, match="mixes GPU types") as info:
        schedopt.io.parse_instance(doc)
    assert info.value.path == "cluster.gpus[1].gpu_type"
