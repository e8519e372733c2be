"""``--param KEY=VALUE`` on ``schedopt solve``: method parameters from the command line, and
the parameters every decomposition reads (executor, workers, parts) refused by name when they
are wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import schedopt
from schedopt.cli import main
from schedopt.cli.args import param
from schedopt.core.errors import InvalidInstanceError
from schedopt.problems.admission.generate import generate
from schedopt.problems.fairshare.generate import generate as generate_fairshare

EXIT_OK, EXIT_USAGE, EXIT_INVALID = 0, 2, 3


@pytest.fixture(scope="module")
def instance_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("params") / "tiny.json"
    assert main(["generate", "admission", "--size", "tiny", "--seed", "1", "--out", str(path)]) == 0
    return path


def test_a_parameter_is_json_when_it_is_json_else_text():
    assert param("workers=2") == ("workers", 2)
    assert param("executor=process") == ("executor", "process")
    assert param(" parts = [1, 2]") == ("parts", [1, 2])
    assert param("flag=true") == ("flag", True)
    for bad in ("workers", "=2", ""):
        with pytest.raises(Exception, match="KEY=VALUE"):
            param(bad)


def test_solve_passes_the_parameters_to_the_method(instance_file, capsys):
    argv = ["solve", str(instance_file), "--method", "decomp", "--time-limit", "20", "--json"]
    assert main([*argv, "--param", "executor=inline", "--param", "parts=2"]) == EXIT_OK
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] in ("optimal", "feasible")
    # the method saw them: a wrong executor is refused by name (exit 3), not run inline
    assert main([*argv, "--param", "executor=nope"]) == EXIT_INVALID
    assert "params.executor" in capsys.readouterr().err
    assert main([*argv, "--param", "workers"]) == EXIT_USAGE


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"executor": "nope"}, "params.executor"),
        ({"executor": 3}, "params.executor"),
        ({"workers": 0}, "params.workers"),
        ({"workers": "two"}, "params.workers"),
        ({"workers": True}, "params.workers"),
        ({"workers": 2.5}, "params.workers"),
        ({"parts": 0}, "params.parts"),
        ({"parts": "three"}, "params.parts"),
    ],
)
@pytest.mark.parametrize("problem", ["admission", "fairshare"])
def test_a_wrong_executor_parameter_is_refused_by_name(problem, params, field):
    inst = (
        generate(size="tiny", seed=0)
        if problem == "admission"
        else generate_fairshare(size="tiny", seed=0)
    )
    with pytest.raises(InvalidInstanceError, match=field.replace(".", r"\.")):
        schedopt.solve(inst, "decomp", time_limit_s=10, params=params)


@pytest.mark.parametrize(
    ("params", "field"), [({"workers": 0}, "workers"), ({"executor": "x"}, "executor")]
)
def test_colgen_reads_the_executor_parameters_as_every_decomposition(params, field):
    from schedopt.problems.cosched.generate import generate as generate_cosched

    with pytest.raises(InvalidInstanceError, match=rf"params\.{field}"):
        schedopt.solve(
            generate_cosched(size="tiny", seed=0), "colgen", time_limit_s=10, params=params
        )
