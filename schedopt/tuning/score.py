"""The score tuning minimises: a heuristic's lexicographic objectives collapsed to one number.

Each level is normalised by a reference (the default parameters' value on the same instance,
or 1 where that value is below 1, so that a level near 0 cannot drown the first; the defaults
then score -1 per maximised level and +1 per minimised one, or their value itself), weighted
1, 1e-3, 1e-6, … by level so that the first objective dominates, and signed so that lower is
better. An instance without a solution scores :data:`NO_SOLUTION_SCORE`, worse than any
solution. A score is therefore read against the defaults' score: ``-1.0206`` against the
defaults' ``-1.0010`` is about 2% better on the first level; :func:`improvement` says that in
per cent.
"""

from __future__ import annotations

from collections.abc import Sequence

from schedopt.core.result import ObjectiveTerm, Sense

#: Weight of each lexicographic level in the score: each level 1000 times less than the one
#: before (as many levels as any problem has).
LEVEL_WEIGHTS = (1.0, 1e-3, 1e-6, 1e-9, 1e-12)
#: The score of an instance on which the heuristic found nothing (each level scores ~1).
NO_SOLUTION_SCORE = 10.0

Objectives = tuple[float, ...]


def instance_score(
    terms: Sequence[ObjectiveTerm], objectives: Objectives | None, reference: Objectives | None
) -> float:
    """One instance's score (lower is better)."""
    if objectives is None or reference is None:
        return NO_SOLUTION_SCORE
    total = 0.0
    for w, term, value, base in zip(LEVEL_WEIGHTS, terms, objectives, reference, strict=False):
        # A level whose reference is ~0 (no best-effort progress at all) is scored in its own
        # units; dividing by ~0 would let it drown the first level.
        scale = max(abs(base), 1.0)
        signed = -value if term.sense is Sense.MAXIMIZE else value
        total += w * signed / scale
    return total


def mean_score(
    terms: Sequence[ObjectiveTerm],
    found: Sequence[Objectives | None],
    reference: Sequence[Objectives | None],
) -> float:
    """The mean of :func:`instance_score` over instances."""
    scores = [instance_score(terms, f, r) for f, r in zip(found, reference, strict=True)]
    return sum(scores) / len(scores)


def improvement(score: float, default_score: float) -> float:
    """How much better ``score`` is than the defaults' score, in per cent of its magnitude
    (positive: better; 0: as good as the defaults)."""
    return 100.0 * (default_score - score) / max(abs(default_score), 1e-12)


__all__ = [
    "LEVEL_WEIGHTS",
    "NO_SOLUTION_SCORE",
    "Objectives",
    "improvement",
    "instance_score",
    "mean_score",
]
