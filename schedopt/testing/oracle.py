"""``check``, ``assert_valid``, ``optimality_ratio``: a scheduler's decision against the oracle.

A decision is the problem's solution type (``schedopt.get_problem(p).solution_type``, built
with :mod:`schedopt.testing.decisions`), its JSON document (a dict), or ``None``: the claim
that the instance has no valid decision at all, which is checked by the exact model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from schedopt.core import InvalidInstanceError, Sense, Violation
from schedopt.core.registry import ProblemSpec, problem_of

from .claims import check_claims
from .reference import CHECK_LIMIT_S, reference
from .rules import RULES


def with_problem(spec: ProblemSpec, fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` with the solution type's ``problem`` tag, where it has one."""
    tagged = "problem" in spec.solution_type.model_fields
    return {"problem": spec.name, **fields} if tagged else dict(fields)


def as_decision(spec: ProblemSpec, decision: Any) -> Any:
    """``decision`` as the problem's solution type (a dict is parsed; pydantic's error raised)."""
    if isinstance(decision, spec.solution_type):
        return decision
    if isinstance(decision, dict):
        return spec.solution_type.model_validate(with_problem(spec, decision))
    raise TypeError(
        f"a {spec.name} decision is a {spec.solution_type.__name__} or its JSON dict, "
        f"not {type(decision).__name__}"
    )


def check(instance: Any, decision: Any) -> list[Violation]:
    """Every rule ``decision`` breaks on ``instance`` (empty: valid).

    The problem's independent validator (``V1``...), then the claims the decision makes:
    a rejection marked ``proven`` (admission) and ``decision=None`` ("no valid decision exists")
    are checked by the exact model (``claim``); a decision that is not of the solution type's
    shape is one ``shape`` violation.
    """
    spec = problem_of(instance)
    if decision is None:
        ref = reference(instance)
        if ref.feasible:
            return [Violation("claim", "the decision says infeasible, but a valid one exists")]
        if not ref.infeasible:
            return [
                Violation(
                    "claim",
                    f"the decision says infeasible; unproven: the exact model neither proved it "
                    f"nor found a decision in {CHECK_LIMIT_S:g} s ({ref.result.status.name})",
                )
            ]
        return []
    try:
        solution = as_decision(spec, decision)
    except (ValidationError, InvalidInstanceError) as err:
        return [Violation("shape", f"not a {spec.solution_type.__name__}: {err}")]
    found = list(spec.validate(instance, solution))
    return found or check_claims(spec.name, instance, solution)


def describe(problem: str, violation: Violation) -> str:
    """One line: the rule's id, the formulation's constraint ids and text, and the message."""
    rule = RULES.get(problem, {}).get(violation.constraint_id)
    if rule is None:
        return f"[{violation.constraint_id}] {violation.message}"
    text, cited = rule
    where = f" ({', '.join(cited)})" if cited else ""
    return (
        f"[{violation.constraint_id}{where}] {violation.message}\n"
        f"    rule {violation.constraint_id} of formulations/{problem}.md: {text}"
    )


def assert_valid(instance: Any, decision: Any) -> None:
    """Raise AssertionError naming every broken rule and its constraint ids (pytest prints it)."""
    spec = problem_of(instance)
    found = check(instance, decision)
    if found:
        lines = "\n".join(describe(spec.name, v) for v in found)
        raise AssertionError(f"{spec.name} decision breaks {len(found)} rule(s):\n{lines}")


@dataclass(frozen=True)
class Ratio:
    """How good a valid decision is on the first objective level, against the exact model.

    ``ratio`` is in [0, 1] for a decision no better than the reference (1 = as good):
    value/reference when maximising, reference/value when minimising. ``proven``: the
    reference is the proven optimum; otherwise it is the best proven bound, ``gap`` away from
    the best decision the exact model found, and ``ratio`` is a lower bound on the true ratio.
    """

    term: str
    value: float
    reference: float
    proven: bool
    gap: float | None
    ratio: float

    def __str__(self) -> str:
        what = "the proven optimum" if self.proven else f"a bound (gap {self.gap})"
        return (
            f"{self.term}: {self.value:.6g} against {what} {self.reference:.6g}: {self.ratio:.3g}"
        )


def _ratio(sense: Sense, value: float, ref: float) -> float:
    if sense is Sense.MAXIMIZE:
        return 1.0 if ref <= 0 or value >= ref else max(value, 0.0) / ref
    return 1.0 if value <= ref else (max(ref, 0.0) / value if value > 0 else 1.0)


def optimality_ratio(instance: Any, decision: Any) -> Ratio:
    """The decision's first objective level against the exact optimum (small instances) or the
    best proven bound. Raises AssertionError if the decision is not valid (see assert_valid)."""
    spec = problem_of(instance)
    assert_valid(instance, decision)
    solution = as_decision(spec, decision)
    value = float(spec.evaluate(instance, solution)[0])
    term = spec.terms[0]
    result = reference(instance).result
    gap: float | None
    if result.status.name == "OPTIMAL" and result.objective is not None:
        ref, proven, gap = float(result.objective), True, 0.0
    elif result.best_bound is not None and math.isfinite(result.best_bound):
        ref, proven, gap = float(result.best_bound), False, result.gap
    else:
        raise AssertionError(
            f"no reference for {spec.name}: the exact model proved no bound in "
            f"{CHECK_LIMIT_S:g} s ({result.status.name}); use a smaller instance"
        )
    return Ratio(term.name, value, ref, proven, gap, _ratio(term.sense, value, ref))
