"""schedopt.testing's promises: feasible instances, checked claims, honest ratios, messages."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given

import schedopt
from schedopt.testing import (
    admission_decision,
    assert_valid,
    check,
    ci_settings,
    decision,
    fairshare_decision,
    instances,
    moe_decision,
    optimality_ratio,
    oracle,
    timeshare_decision,
)
from schedopt.testing.reference import Reference, reference

FEW = ci_settings(6)


def reject_all(inst: Any) -> Any:
    return admission_decision(inst, gpus={})


@FEW
@given(instances("admission", size="tiny", allow_admitted=True))
def test_feasible_instances_have_a_valid_decision(inst: object) -> None:
    # allow_admitted=True can draw instances without any valid decision: the proven check
    # keeps only those where the exact model found one
    assert reference(inst).feasible


@FEW
@given(instances("admission", size="tiny"))
def test_rejecting_every_job_is_valid_by_construction(inst: object) -> None:
    assert check(inst, reject_all(inst)) == []


def test_rejecting_everything_fails_the_ratio_property() -> None:
    @FEW
    @given(instances("admission", size="tiny"))
    def prop(inst: object) -> None:
        assert optimality_ratio(inst, reject_all(inst)).ratio >= 0.5

    with pytest.raises(AssertionError):
        prop()


@FEW
@given(instances("admission", size="tiny"))
def test_the_optimum_has_ratio_one_proven(inst: object) -> None:
    best = reference(inst).result
    ratio = optimality_ratio(inst, best.solution)
    assert ratio.proven and ratio.ratio == pytest.approx(1.0)


def _tiny_admission() -> object:
    return schedopt.get_problem("admission").instance_type.model_validate(
        {
            "cluster": schedopt.Cluster.dgx(nodes=1, gpus_per_node=2).to_dict(),
            "slots": 2,
            "slot_s": 60.0,
            "jobs": [
                {
                    "id": "j0",
                    "kind": "strict_slo",
                    "remaining_iterations": 60,
                    "throughput": {"1": 1.0},
                    "deadlines": [{"deadline_s": 120.0, "value": 5.0}],
                }
            ],
        }
    )


def test_a_false_proven_rejection_is_refuted() -> None:
    inst = _tiny_admission()
    claimed = admission_decision(inst, gpus={}, proven={"j0": "deadline_unreachable_alone"})
    found = check(inst, claimed)
    assert [v.constraint_id for v in found] == ["claim"], found
    assert "can be guaranteed" in found[0].message


def test_a_true_infeasibility_claim_is_accepted_and_a_false_one_refuted() -> None:
    inst = _tiny_admission()
    assert [v.constraint_id for v in check(inst, None)] == ["claim"]
    doc = inst.model_dump(mode="json")  # type: ignore[attr-defined]
    doc["jobs"][0].update(admitted=True, remaining_iterations=10**6)
    hopeless = type(inst).model_validate(doc)
    assert check(hopeless, None) == []


def test_assert_valid_names_the_rule_and_the_constraint() -> None:
    inst = _tiny_admission()
    early = admission_decision(inst, gpus={"j0": [None, None]}, admitted={"j0": 0})
    with pytest.raises(AssertionError, match=r"\[V5 \(C6\)\].*\n.*rule V5 of formulations"):
        assert_valid(inst, early)


def test_a_decision_of_the_wrong_shape_is_one_violation() -> None:
    inst = _tiny_admission()
    assert [v.constraint_id for v in check(inst, {"plans": "x"})] == ["shape"]
    with pytest.raises(ValueError):
        decision("admission", plans="x")


@FEW
@given(instances("fairshare", size="tiny"))
def test_the_builders_say_what_the_solution_types_say(inst: Any) -> None:
    best = reference(inst).result.solution
    built = fairshare_decision(
        {a.job_id: (a.gpu_type, a.hosts) for a in best.allocations if a.hosts}, inst
    )
    assert built == best


def test_timeshare_and_moe_builders() -> None:
    shares = timeshare_decision({"a": {"v100": 0.5, "k80": 0.0}, "b": {"k80": 1.0}}).shares
    assert [(s.job, s.worker_type, s.fraction) for s in shares] == [
        ("a", "v100", 0.5),
        ("b", "k80", 1.0),
    ]
    plan = moe_decision([[{"h0/g0": 0.25, "h0/g1": 0.75}]])
    assert plan.layers[0].experts[0].gpus == ("h0/g0", "h0/g1")


def test_without_a_proof_the_ratio_is_against_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = _tiny_admission()
    solved = reference(inst).result
    assert solved.status is schedopt.Status.OPTIMAL and solved.objective == 5.0
    interrupted = dataclasses.replace(solved, status=schedopt.Status.FEASIBLE, best_bound=8.0)
    monkeypatch.setattr(oracle, "reference", lambda instance: Reference(interrupted))
    ratio = optimality_ratio(inst, solved.solution)
    assert not ratio.proven and ratio.reference == 8.0
    assert ratio.ratio == pytest.approx(5.0 / 8.0)  # a lower bound on the true ratio (1)
    assert ratio.gap == interrupted.gap
