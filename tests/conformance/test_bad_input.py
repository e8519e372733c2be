"""Conformance over every registered problem: broken input gives InvalidInstanceError, never
another exception, and a document that survives its mutations still solves cleanly."""

from __future__ import annotations

import contextlib
import copy
import importlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedopt
from schedopt.core.status import Status
from schedopt.testing import BAD_VALUES, HOSTILE_NUMBERS, mutations

PROBLEMS = sorted(schedopt.problem_names())


def _strategies(problem: str):
    return importlib.import_module(f"schedopt.problems.{problem}.strategies")


@pytest.mark.parametrize("problem", PROBLEMS)
@settings(derandomize=True, deadline=None, max_examples=300)
@given(data=st.data())
def test_mutated_documents_load_or_raise_invalid_instance(problem: str, data) -> None:
    doc = data.draw(_strategies(problem).mutated_dicts())
    try:
        inst = schedopt.io.parse_instance(doc)
    except schedopt.InvalidInstanceError as err:
        assert str(err)
        for path, reason in err.problems:
            assert reason, path
        return
    # Still valid after mutation: it must then also solve cleanly with the first heuristic.
    heuristic = schedopt.get_problem(problem).auto_heuristics[0]
    result = schedopt.solve(inst, heuristic, time_limit_s=5)
    assert result.status in (Status.FEASIBLE, Status.NO_SOLUTION)


@pytest.mark.parametrize("problem", PROBLEMS)
@settings(derandomize=True, deadline=None, max_examples=200)
@given(data=st.data())
def test_corrupted_files_raise_invalid_instance(problem: str, data) -> None:
    text = data.draw(_strategies(problem).bad_texts())
    with contextlib.suppress(schedopt.InvalidInstanceError):
        schedopt.loads(text)


# --------------------------------------------------------------------------- built in Python
def _public_models(problem: str) -> list[type]:
    """Every pydantic model a user may construct for ``problem``: the instance's and the
    solution's modules, and the cluster spec."""
    import pydantic

    from schedopt.topology import spec as topology_spec

    modules = [
        importlib.import_module(f"schedopt.problems.{problem}.instance"),
        importlib.import_module(f"schedopt.problems.{problem}.solution"),
        topology_spec,
    ]
    return sorted(
        {
            obj
            for m in modules
            for obj in vars(m).values()
            if isinstance(obj, type)
            and issubclass(obj, pydantic.BaseModel)
            and not obj.__name__.startswith("_")
            and obj.__module__ == m.__name__
        },
        key=lambda c: c.__qualname__,
    )


_VALUES = (*BAD_VALUES, *HOSTILE_NUMBERS, float("inf"), float("nan"), 10**5000, "h0/g0")


@pytest.mark.parametrize("problem", PROBLEMS)
@settings(derandomize=True, deadline=None, max_examples=300)
@given(data=st.data())
def test_python_built_models_raise_invalid_instance(problem: str, data) -> None:
    """Every public constructor and ``model_validate``: bad keyword arguments give
    InvalidInstanceError (a ValueError) with the field path, never pydantic's ValidationError."""
    cls = data.draw(st.sampled_from(_public_models(problem)))
    fields = list(cls.model_fields)
    kwargs = data.draw(
        st.dictionaries(st.sampled_from([*fields, "unknown_field"]), st.sampled_from(_VALUES))
    )
    build = data.draw(st.sampled_from(["init", "validate"]))
    try:
        cls(**kwargs) if build == "init" else cls.model_validate(kwargs)
    except schedopt.InvalidInstanceError as err:
        assert isinstance(err, ValueError)
        assert all(reason for _, reason in err.problems)


@pytest.mark.parametrize("problem", PROBLEMS)
@settings(derandomize=True, deadline=None, max_examples=100)
@given(data=st.data())
def test_python_built_instances_report_nested_paths(problem: str, data) -> None:
    """Built from Python objects, a broken instance reports the same full paths as from JSON."""
    doc = data.draw(_strategies(problem).mutated_dicts())
    if not isinstance(doc, dict):
        return
    cls = schedopt.get_problem(problem).instance_type
    try:
        cls(**doc)
    except schedopt.InvalidInstanceError as built:
        with pytest.raises(schedopt.InvalidInstanceError) as parsed:
            cls.model_validate(doc)
        assert built.problems == parsed.value.problems


def test_admission_job_built_in_python() -> None:
    from schedopt.problems.admission.instance import DeadlineTier, Job

    with pytest.raises(schedopt.InvalidInstanceError) as info:
        Job(id="a", kind="strict_slo", remaining_iterations=10, deadlines=[{"deadline_s": 1e999}])
    assert ("deadlines[0].deadline_s", "Input should be a finite number (got inf)") in (
        info.value.problems
    )
    with pytest.raises(ValueError, match="value"):  # hosts catching ValueError still work
        DeadlineTier(deadline_s=10, value=-1)


# --------------------------------------------------------------------------- solution files
_SOLVED: dict[str, tuple[object, dict]] = {}


def _solved(problem: str) -> tuple[object, dict]:
    """The problem's smallest generated instance and its first heuristic's solution document."""
    if problem not in _SOLVED:
        spec = schedopt.get_problem(problem)
        inst = spec.generate(spec.sizes[0], 0)
        result = schedopt.solve(inst, spec.auto_heuristics[0], time_limit_s=10)
        assert result.solution is not None
        _SOLVED[problem] = (inst, json.loads(schedopt.io.to_json(result.solution)))
    return _SOLVED[problem]


_SOLUTION_VALUES = (*BAD_VALUES, *HOSTILE_NUMBERS, "h9/g9", "j999", [None], [0], [-1], [10**6])


@pytest.mark.parametrize("problem", PROBLEMS)
@settings(derandomize=True, deadline=None, max_examples=300)
@given(data=st.data())
def test_corrupted_solutions_give_violations_or_invalid_instance(problem: str, data) -> None:
    inst, doc = _solved(problem)
    spec = schedopt.get_problem(problem)
    broken = data.draw(mutations(st.just(doc), bad_values=_SOLUTION_VALUES))
    try:
        sol = spec.solution_type.model_validate(broken)
    except schedopt.InvalidInstanceError:
        return
    if not spec.validate(inst, sol):  # still valid: it must evaluate as ``validate`` does
        spec.evaluate(inst, sol)
        spec.metrics(inst, sol)


def test_admission_plan_with_empty_gpu_types_is_a_violation(tmp_path) -> None:
    inst, doc = _solved("admission")
    doc = copy.deepcopy(doc)
    running = next(p for p in doc["plans"] if p["gpus"] and p["gpus"][0])
    running["gpu_types"] = []
    path = tmp_path / "sol.json"
    path.write_text(json.dumps(doc))
    violations = schedopt.get_problem("admission").validate(
        inst, schedopt.load_solution(inst, path)
    )
    assert [v.constraint_id for v in violations] == ["V1"], violations
    assert "gpu_types" in violations[0].message


@pytest.mark.parametrize("bad", [None, 42, [1], {"gpus": []}, {"gpus": "x", "hosts": 1}])
def test_cluster_built_in_python(bad) -> None:
    with pytest.raises(schedopt.InvalidInstanceError) as info:
        schedopt.Cluster(bad)
    assert info.value.reason


@pytest.mark.parametrize("problem", PROBLEMS)
def test_nested_models_keep_pydantics_fast_path(problem: str) -> None:
    # FrozenModel's __init__ converts errors at the outermost call only; pydantic must not call
    # it for every nested model (that would cost a Python call per job and convert too early).
    for cls in _public_models(problem):
        assert cls.__pydantic_custom_init__ is False, cls


@pytest.mark.parametrize("given", PROBLEMS)
@pytest.mark.parametrize("problem", PROBLEMS)
def test_a_solution_names_its_problem_and_a_mismatch_is_named(
    problem: str, given: str, tmp_path
) -> None:
    """Every problem's solution accepts a ``problem`` key and checks it: an admission solution
    labelled "reconfig" or "" validated as VALID, reconfig's format refused the key, and a
    solution of another problem gave "plans: required field is missing" (#16)."""
    inst, _ = _solved(problem)
    _, doc = _solved(given)
    assert doc["problem"] == given  # every problem writes its label
    path = tmp_path / "sol.json"
    labels = [given, None] if given != problem else ["", "admissio", [["x"]], "reconfig"]
    if given == problem == "reconfig":
        labels[-1] = "admission"
    for label in labels:
        shown = {k: v for k, v in doc.items() if k != "problem"}
        path.write_text(json.dumps(shown if label is None else {**shown, "problem": label}))
        with pytest.raises(schedopt.InvalidInstanceError) as err:
            schedopt.load_solution(inst, path)
        assert err.value.path == "problem", (label, err.value)
        if label == given:  # the label, or (unlabelled) the one format it fits, is named
            assert repr(given) in err.value.reason and repr(problem) in err.value.reason
    if given == problem:
        for own in (doc, {k: v for k, v in doc.items() if k != "problem"}):
            path.write_text(json.dumps(own))
            sol = schedopt.load_solution(inst, path)
            assert sol.problem == problem
            assert schedopt.get_problem(problem).validate(inst, sol) == []
