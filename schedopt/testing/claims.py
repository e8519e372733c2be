"""Claims a decision makes beyond its decisions, checked by the exact model, not trusted.

admission: a rejection marked ``proven`` says the job cannot be guaranteed (alone on the
cluster, or beside the jobs admitted earlier). The check admits it (``admitted=True``: C5
then forces a tier for it) on the instance the reason speaks of and solves exactly: a decision
found refutes the claim; no proof in time is reported as an unproven claim.
"""

from __future__ import annotations

from typing import Any

from schedopt.core import Violation

from .reference import CHECK_LIMIT_S, reference


def _admission(instance: Any, solution: Any) -> list[Violation]:
    out: list[Violation] = []
    for plan in solution.plans:
        rejection = plan.rejection
        if plan.admitted is not False or rejection is None or not rejection.proven:
            continue
        alone = rejection.reason.value == "deadline_unreachable_alone"
        jobs = [
            j.model_copy(update={"admitted": True}) if j.id == plan.job_id else j
            for j in instance.jobs
            if j.id == plan.job_id or (not alone and j.admitted)
        ]
        trial = type(instance).model_validate(
            {**instance.model_dump(mode="json"), "jobs": [j.model_dump(mode="json") for j in jobs]}
        )
        ref = reference(trial)
        where = f"job {plan.job_id!r}: rejection {rejection.reason.value} marked proven"
        if ref.feasible:
            out.append(Violation("claim", f"{where}, but it can be guaranteed"))
        elif not ref.infeasible:
            out.append(
                Violation(
                    "claim",
                    f"{where}: unproven, the exact model neither proved nor refuted it in "
                    f"{CHECK_LIMIT_S:g} s ({ref.result.status.name})",
                )
            )
    return out


_CHECKERS = {"admission": _admission}


def check_claims(problem: str, instance: Any, solution: Any) -> list[Violation]:
    """Violations of the claims ``solution`` makes (empty: none made, or all proven)."""
    checker = _CHECKERS.get(problem)
    return [] if checker is None else checker(instance, solution)
