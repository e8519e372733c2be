"""Admission-specific hypothesis properties (validity, honesty and hints of every method are in
tests/conformance/test_properties.py)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import schedopt
from schedopt.core.solve import lex_better
from schedopt.core.status import Status
from schedopt.problems.admission import SPEC
from schedopt.problems.admission.strategies import instances
from schedopt.testing import mutations

SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow]
)
METHODS = [
    "cpsat",
    "milp:highs",
    "milp:cbc",
    "heuristic:edf",
    "heuristic:slack",
    "heuristic:lns",
    "auto",
]


@SETTINGS
@given(inst=instances())
def test_no_heuristic_beats_a_proven_optimum(inst) -> None:
    # Every level, against the MILP (real L2 coefficients); CP-SAT's rounded L2 is compared on
    # two levels only (tests/conformance/support.COMPARED_LEVELS).
    exact = schedopt.solve(inst, "milp:highs", time_limit_s=10)
    if exact.status is not Status.OPTIMAL:
        return
    for name in ("heuristic:edf", "heuristic:slack", "heuristic:lns"):
        h = schedopt.solve(inst, name, time_limit_s=5)
        if h.objectives is not None:
            assert not lex_better(h.objectives, exact.objectives, SPEC.terms)


@SETTINGS
@given(inst=instances(allow_admitted=False))
def test_without_earlier_guarantees_every_method_finds_a_solution(inst) -> None:
    # Rejecting everything is always feasible, so no method may come back empty-handed.
    for method in METHODS:
        assert schedopt.solve(inst, method, time_limit_s=10).status.has_solution


@settings(derandomize=True, deadline=None, max_examples=100)
@given(
    value=st.one_of(
        st.integers(),
        st.floats(),
        st.text(max_size=5),
        st.none(),
        st.lists(st.integers(), max_size=2),
    )
)
def test_any_value_for_slots_is_refused_or_accepted_cleanly(value) -> None:
    doc = json.loads(schedopt.io.to_json(schedopt.load("instances/admission/small-s0.json")))
    doc["slots"] = value
    try:
        schedopt.io.parse_instance(doc)
    except schedopt.InvalidInstanceError as err:
        assert err.path.startswith("slots") or err.path.startswith("jobs")


def test_auto_keeps_the_heuristic_when_the_exact_model_has_no_time() -> None:
    from schedopt.problems.admission import generate
    from schedopt.tuning import load_tuned

    inst = generate("large", 1)
    tuned = load_tuned("admission")  # auto runs the heuristics with their tuned parameters
    best = max(
        schedopt.solve(inst, h, params=tuned.get(h, {})).objective
        for h in ("heuristic:edf", "heuristic:slack")
    )
    result = schedopt.solve(inst, "auto", time_limit_s=1.0)
    assert result.status is Status.FEASIBLE
    assert result.objective >= best


def _shipped_documents() -> st.SearchStrategy[dict]:
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "instances" / "admission"
    docs = [
        json.loads(p.read_text()) for p in sorted(folder.glob("*.json")) if p.name != "golden.json"
    ]
    return st.sampled_from(docs)


@settings(derandomize=True, deadline=None, max_examples=200)
@given(doc=mutations(_shipped_documents()))
def test_random_mutations_of_shipped_files_load_or_raise_invalid_instance(doc) -> None:
    try:
        schedopt.io.parse_instance(doc)
    except schedopt.InvalidInstanceError as err:
        assert err.problems and all(reason for _, reason in err.problems)
