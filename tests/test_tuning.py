"""Bayesian tuning never records parameters worse than the defaults; the store round-trips;
parameters a user saved are used only when passed, and the shipped ones are never written."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import schedopt
from schedopt.core.registry import get_problem
from schedopt.problems.admission import generate_custom
from schedopt.tuning import load_tuned, save_tuned, tune
from schedopt.tuning.store import default_save_path, shipped_path


@pytest.fixture(scope="module")
def training():
    return [generate_custom(hosts=2, jobs=20, slots=6, seed=s, load=2.5) for s in range(2)]


@pytest.mark.slow
@pytest.mark.parametrize("method", ["heuristic:edf", "heuristic:slack"])
def test_tuning_is_no_worse_than_the_defaults(training, method: str) -> None:
    result = tune(method, training, n_calls=8, seed=0)
    assert result.score <= result.default_score
    assert result.evaluations >= 7
    assert set(result.params) and all(isinstance(v, (int, float)) for v in result.params.values())


def test_exact_methods_cannot_be_tuned(training) -> None:
    with pytest.raises(ValueError, match="no tunable parameters"):
        tune("cpsat", training, n_calls=6)


def test_store_round_trip(tmp_path) -> None:
    path = tmp_path / "sub" / "admission.json"
    save_tuned("admission", "heuristic:edf", {"params": {"laxity_weight": 0.5}}, path)
    save_tuned("admission", "heuristic:slack", {"params": {"share_boost": 1}}, path)
    assert [p.name for p in path.parent.iterdir()] == ["admission.json"]  # no temporary left
    shipped = load_tuned("admission")
    # The file overrides the shipped parameters for the methods it lists.
    assert load_tuned("admission", path) == {
        **shipped,
        "heuristic:edf": {"laxity_weight": 0.5},
        "heuristic:slack": {"share_boost": 1},
    }


def test_default_save_path_is_per_user(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert default_save_path("admission") == tmp_path / "schedopt/params/admission.json"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/dir")  # ignored, as the XDG spec says
    expected = Path.home() / ".config/schedopt/params/admission.json"
    assert default_save_path("admission") == expected
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert default_save_path("admission") == expected
    assert shipped_path("admission").parent != default_save_path("admission").parent


def _doc(methods: object, problem: str = "admission") -> dict:
    return {"schema_version": 1, "problem": problem, "methods": methods}


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (None, "No such file"),
        ("{", "not JSON"),
        ("[]", "not a schema-1"),
        (_doc({}, problem="fairshare"), "parameters for 'fairshare'"),
        (_doc({"cpsat": {"params": {}}}), "not a tunable heuristic"),
        (_doc({"heuristic:edf": {"params": {"nonsense": 1}}}), "nonsense: unknown"),
        (_doc({"heuristic:edf": {"params": {"laxity_weight": "1"}}}), "finite number"),
        (
            '{"schema_version": 1, "problem": "admission", "methods": {"heuristic:edf": '
            '{"params": {"laxity_weight": 1e999}}}}',
            "finite number",
        ),
        (_doc({"heuristic:edf": []}), "'params' object"),
    ],
)
def test_bad_parameter_files_are_invalid_input(tmp_path, content, fragment) -> None:
    path = tmp_path / "p.json"
    if content is not None:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    inst = generate_custom(hosts=1, jobs=4, slots=3, seed=0)
    with pytest.raises(schedopt.InvalidInstanceError, match=fragment) as err:
        schedopt.solve(inst, "heuristic:edf", tuned=path)
    assert err.value.path == "tuned" and str(path) in str(err.value)


def _record_params(monkeypatch, method: str) -> list[dict]:
    """The ``options.params`` every run of ``method`` sees."""
    spec = get_problem("admission")
    original = spec.methods[method]
    seen: list[dict] = []

    def run(instance, options, deadline):
        seen.append(dict(options.params))
        return original.run(instance, options, deadline)

    monkeypatch.setitem(spec.methods, method, dataclasses.replace(original, run=run))
    return seen


def test_saved_parameters_are_used_only_when_passed(monkeypatch, tmp_path) -> None:
    inst = generate_custom(hosts=1, jobs=6, slots=4, seed=1)
    mine = {"laxity_weight": 0.123, "value_weight": 4.5}
    path = save_tuned("admission", "heuristic:edf", {"params": mine}, tmp_path / "edf.json")
    shipped = load_tuned("admission").get("heuristic:edf", {})
    assert shipped != mine
    seen = _record_params(monkeypatch, "heuristic:edf")

    schedopt.solve(inst, "auto", time_limit_s=5)
    schedopt.solve(inst, "heuristic:edf")
    assert seen == [shipped, {}]  # not passed: shipped for auto, defaults for a named heuristic

    seen.clear()
    schedopt.solve(inst, "auto", time_limit_s=5, tuned=path)
    schedopt.solve(inst, "heuristic:edf", tuned=str(path))
    schedopt.solve(inst, "heuristic:edf", tuned=path, params={"laxity_weight": 1.0})
    assert seen == [mine, mine, {"laxity_weight": 1.0}]  # explicit params still win
