"""Bad rounds are refused with InvalidInstanceError naming the field path."""

from __future__ import annotations

import copy

import pytest

import schedopt
from schedopt.problems.fairshare import generate

BASE = generate("small", 0).model_dump(mode="json")


def _paths(doc) -> set[str]:
    with pytest.raises(schedopt.InvalidInstanceError) as err:
        schedopt.io.parse_instance(doc)
    return {p for p, _ in err.value.problems}


def _doc():
    return copy.deepcopy(BASE)


def test_unknown_tenant() -> None:
    doc = _doc()
    doc["jobs"][3]["tenant"] = "nobody"
    assert "jobs[3].tenant" in _paths(doc)


def test_bad_weight_and_duplicate_tenant() -> None:
    doc = _doc()
    doc["tenants"][1]["weight"] = 0
    assert "tenants[1].weight" in _paths(doc)
    doc = _doc()
    doc["tenants"].append(copy.deepcopy(doc["tenants"][0]))
    assert f"tenants[{len(doc['tenants']) - 1}].id" in _paths(doc)


def test_throughput_for_a_type_not_in_the_cluster() -> None:
    doc = _doc()
    doc["jobs"][0]["throughput"]["K80"] = {"1": 1.0}
    assert "jobs[0].throughput['K80']" in _paths(doc)


def test_negative_or_zero_counts_and_rates() -> None:
    doc = _doc()
    g = next(iter(doc["jobs"][0]["throughput"]))
    doc["jobs"][0]["throughput"][g] = {"-1": 1.0, "2": -3.0}
    paths = _paths(doc)
    assert f"jobs[0].throughput[{g!r}][-1]" in paths
    assert f"jobs[0].throughput[{g!r}][2]" in paths


def test_previous_allocation_on_unknown_host_or_wrong_type() -> None:
    doc = _doc()
    j = next(i for i, job in enumerate(doc["jobs"]) if job.get("previous"))
    prev = doc["jobs"][j]["previous"]
    h = next(iter(prev["hosts"]))
    prev["hosts"]["h99"] = prev["hosts"].pop(h)
    assert f"jobs[{j}].previous.hosts['h99']" in _paths(doc)
    doc = _doc()
    prev = doc["jobs"][j]["previous"]
    prev["gpu_type"] = "V100" if prev["gpu_type"] != "V100" else "H100"
    assert any(p.startswith(f"jobs[{j}].previous") for p in _paths(doc))


def test_one_host_mode_needs_powers_of_two() -> None:
    doc = _doc()
    doc["allow_multi_host"] = False
    g = next(iter(doc["jobs"][0]["throughput"]))
    doc["jobs"][0]["throughput"][g]["3"] = 2.0
    assert f"jobs[0].throughput[{g!r}][3]" in _paths(doc)


def test_guarantees_beyond_the_cluster_and_negative_preemptions() -> None:
    doc = _doc()
    doc["tenants"][0]["guaranteed_gpus"] = 10_000
    assert "tenants" in _paths(doc)
    doc = _doc()
    doc["max_preemptions"] = -1
    assert "max_preemptions" in _paths(doc)


def test_round_trip_and_export(tmp_path) -> None:
    inst = schedopt.io.parse_instance(_doc())
    schedopt.dump(inst, tmp_path / "r.json")
    assert schedopt.load(tmp_path / "r.json") == inst
    spec = schedopt.get_problem("fairshare")
    spec.export_model(inst, str(tmp_path / "m.lp"), "lp")
    assert "C7_" in (tmp_path / "m.lp").read_text()
    assert spec.estimate_variables(inst) > len(inst.jobs)
    assert set(spec.sizes) == {"tiny", "small", "medium", "large"}


def test_too_large_models_are_refused_and_short_limits_answer_at_once(monkeypatch) -> None:
    from schedopt.problems.fairshare import data

    inst = schedopt.io.parse_instance(_doc())
    monkeypatch.setattr(data, "MAX_MODEL_VARIABLES", 5)
    for method in ("cpsat", "milp:highs"):
        with pytest.raises(schedopt.ModelTooLargeError):
            schedopt.solve(inst, method)
    assert schedopt.solve(inst, "heuristic:astraea").status.has_solution
    monkeypatch.setattr(data, "MAX_MODEL_VARIABLES", 10**9)
    monkeypatch.setattr(data, "BUILD_S_PER_VARIABLE", 1.0)  # "building takes forever"
    result = schedopt.solve(inst, "milp:cbc", time_limit_s=1)
    assert result.status is schedopt.Status.NO_SOLUTION
    assert "not enough time" in result.explanation


def test_per_job_fields_are_checked_and_never_silently_ignored() -> None:
    """F1: job weights and accounts only in per-job mode; weights in their documented range."""
    doc = _doc()
    doc["jobs"][0]["weight"] = 2.0  # tenant mode (the default): refused, not ignored
    doc["jobs"][1]["deserved_gpu_s"] = 60.0
    assert {"jobs[0].weight", "jobs[1].deserved_gpu_s"} <= _paths(doc)
    doc = _doc()
    doc["fairness_unit"] = "job"
    doc["jobs"][0]["weight"] = 0.0
    doc["jobs"][1]["weight"] = 1e7
    doc["jobs"][2]["deserved_gpu_s"] = -1.0
    assert {"jobs[0].weight", "jobs[1].weight", "jobs[2].deserved_gpu_s"} <= _paths(doc)
    doc = _doc()
    doc["fairness_unit"] = "team"
    assert "fairness_unit" in _paths(doc)
    doc = _doc()
    doc["fairness_unit"] = "job"
    doc["jobs"][0]["weight"] = 2.0
    doc["jobs"][1]["deserved_gpu_s"] = 60.0
    inst = schedopt.io.parse_instance(doc)
    assert inst.jobs[0].unit_weight == 2.0 and inst.jobs[2].unit_weight == 1.0


def test_schema_documents_the_fairness_unit() -> None:
    schema = schedopt.io.json_schema("fairshare")
    assert schema["$defs"]["FairnessUnit"]["enum"] == ["tenant", "job"]
    job = schema["$defs"]["Job"]["properties"]
    assert "weight" in job and "deserved_gpu_s" in job


def test_a_rate_of_zero_means_the_job_cannot_run_so() -> None:
    """Gavel's tables say 0 where a job cannot run on a type (some K80 jobs): taken as no
    option, never chosen; a job with every rate 0, or running now on a 0 option, is refused;
    a rate between 0 and the smallest positive one is still refused."""
    doc = _doc()
    table = doc["jobs"][0]["throughput"]
    slow = min(table, key=lambda g: next(iter(table[g].values())))
    count = next(iter(table[slow]))
    table[slow][count] = 0.0
    inst = schedopt.io.parse_instance(doc)
    assert (slow, int(count), 0.0) not in inst.jobs[0].options
    for method in ("milp:highs", "cpsat", "heuristic:astraea"):
        result = schedopt.solve(inst, method, time_limit_s=20)  # validated: never on a 0
        assert result.solution.allocation(inst.jobs[0].id).gpu_type != slow, method
    # the validator's own check (V2): last round's answer, with its option's rate now 0
    from schedopt.problems.fairshare.validate import validate

    base = schedopt.io.parse_instance(_doc())
    sol = schedopt.solve(base, "milp:highs", time_limit_s=20).solution
    a = next(x for x in sol.allocations if x.hosts)
    doc = _doc()
    k = next(i for i, job in enumerate(doc["jobs"]) if job["id"] == a.job_id)
    doc["jobs"][k]["throughput"][a.gpu_type][str(a.count)] = 0.0
    doc["jobs"][k]["previous"] = None  # (it may have run so last round too)
    ids = [v.constraint_id for v in validate(schedopt.io.parse_instance(doc), sol)]
    assert "V2" in ids
    doc = _doc()
    doc["jobs"][0]["throughput"] = {g: {n: 0.0 for n in t} for g, t in table.items()}
    assert "jobs[0].throughput" in _paths(doc)
    doc = _doc()
    doc["jobs"][0]["throughput"][slow][count] = 1e-9
    assert f"jobs[0].throughput[{slow!r}][{count}]" in _paths(doc)
    doc = _doc()
    j = next(i for i, job in enumerate(doc["jobs"]) if job.get("previous"))
    prev = doc["jobs"][j]["previous"]
    doc["jobs"][j]["throughput"][prev["gpu_type"]][str(sum(prev["hosts"].values()))] = 0.0
    assert f"jobs[{j}].previous" in _paths(doc)
