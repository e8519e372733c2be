"""``schedopt solve --time-limit`` covers the whole command from its start, loading the file
included (#16 item 5: a 39 MB admission file with --time-limit 1 returned 5.9 s late)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import schedopt
from schedopt.cli import EXIT_NO_SOLUTION, main
from schedopt.io import instance_json
from tests.timing import promised_s


@pytest.fixture(scope="module")
def instance_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli-limit") / "tiny.json"
    assert main(["generate", "admission", "--size", "tiny", "--seed", "1", "--out", str(path)]) == 0
    return path


def test_a_file_too_large_for_the_time_left_is_refused_before_decoding(
    instance_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    decoded = []
    monkeypatch.setattr(instance_json, "LOAD_S_PER_MB", 1e6)  # every file "takes" too long
    monkeypatch.setattr(instance_json, "decode_json", lambda text: decoded.append(text))
    code = main(["solve", str(instance_file), "--time-limit", "5", "--json"])
    assert code == EXIT_NO_SOLUTION
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "no_solution"
    assert "was not loaded" in doc["explanation"] and "MB" in doc["explanation"]
    assert doc["timing"]["time_limit_s"] == 5
    assert not decoded


def test_loading_that_uses_the_limit_says_so(
    instance_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    parse = instance_json.parse_instance

    def slow_parse(doc):  # validation that takes longer than the whole limit
        time.sleep(0.6)
        return parse(doc)

    monkeypatch.setattr(instance_json, "LOAD_S_PER_MB", 0.0)
    monkeypatch.setattr(instance_json, "parse_instance", slow_parse)
    started = time.perf_counter()
    code = main(["solve", str(instance_file), "--time-limit", "0.3", "--method", "heuristic:edf"])
    elapsed = time.perf_counter() - started
    assert code == EXIT_NO_SOLUTION
    err = capsys.readouterr().err
    assert "loading tiny.json" in err, err
    assert elapsed <= 0.6 + promised_s(0.3)  # no solve started after it


def test_the_solver_gets_what_loading_left(
    instance_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    limits = []
    solve = schedopt.solve

    def spy(*args, **kwargs):
        limits.append(kwargs["time_limit_s"])
        return solve(*args, **kwargs)

    monkeypatch.setattr(schedopt, "solve", spy)
    code = main(["solve", str(instance_file), "--time-limit", "3", "--method", "heuristic:edf"])
    assert code == 0
    assert limits and limits[0] < 3.0  # the command's clock started before loading


@pytest.mark.slow
def test_a_100k_job_file_keeps_a_one_second_limit(tmp_path: Path) -> None:
    """The issue's case: 100,000 admission jobs (39 MB), --time-limit 1."""
    from schedopt.problems.admission import generate_custom

    path = tmp_path / "adm100k.json"
    schedopt.dump(generate_custom(hosts=1024, jobs=100_000, slots=12, seed=0), path)
    started = time.perf_counter()
    code = main(["solve", str(path), "--time-limit", "1", "--method", "heuristic:edf"])
    assert time.perf_counter() - started <= promised_s(1.0)
    assert code == EXIT_NO_SOLUTION


@pytest.mark.parametrize("problem", ["admission", "fairshare", "moe_placement", "timeshare"])
def test_the_solution_in_json_output_is_the_solution(problem: str) -> None:
    """``solve --json`` writes the solution with pydantic's serializer (100,000 admission plans:
    0.6 s against 12.4 s through the dict, #16): the same document as before."""
    from schedopt.cli.report import result_json, solution_json

    spec = schedopt.get_problem(problem)
    result = schedopt.solve(spec.generate(spec.sizes[0], 0), "auto", time_limit_s=5)
    assert result.solution is not None
    assert json.loads(solution_json(result)) == result_json(result)["solution"]


def test_json_output_with_raw_values(capsys: pytest.CaptureFixture[str]) -> None:
    from schedopt.cli.common import write_json

    write_json({"a": 1, "b": [1.5, float("inf")]}, raw={"solution": '{"x": [1, 2]}'})
    assert json.loads(capsys.readouterr().out) == {
        "a": 1,
        "b": [1.5, None],
        "solution": {"x": [1, 2]},
    }
    write_json({}, raw={"solution": "null"})
    assert json.loads(capsys.readouterr().out) == {"solution": None}
