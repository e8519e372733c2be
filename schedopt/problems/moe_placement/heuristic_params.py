"""The tunable parameters of the MoE placement heuristics (:mod:`.eplb`, :mod:`.local_search`).

Parameters are frozen dataclasses with a ``SPACE`` so that :mod:`schedopt.tuning` can tune them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class EplbParams:
    """``replica_budget``: fraction of the memory left after one copy of every expert that
    replicas may take; ``stop_ratio``: replicate while work per replica exceeds this times the
    layer's fair per-GPU share; ``hierarchical``: 1 packs to hosts then GPUs when possible."""

    replica_budget: float = 1.0
    stop_ratio: float = 0.5
    hierarchical: int = 1

    SPACE: ClassVar[dict[str, tuple[float, float]]] = {
        "replica_budget": (0.0, 1.0),
        "stop_ratio": (0.1, 2.0),
        "hierarchical": (0, 1),
    }


@dataclass(frozen=True)
class LocalSearchParams:
    """EPLB start (``replica_budget``, ``stop_ratio``) and the moves: ``replicate`` 1 allows
    adding replicas, ``swap`` 1 allows swapping two replicas; ``max_iterations`` per layer."""

    replica_budget: float = 1.0
    stop_ratio: float = 0.5
    replicate: int = 1
    swap: int = 1
    max_iterations: int = 400

    SPACE: ClassVar[dict[str, tuple[float, float]]] = {
        "replica_budget": (0.0, 1.0),
        "stop_ratio": (0.1, 2.0),
        "replicate": (0, 1),
        "swap": (0, 1),
        "max_iterations": (50, 2000),
    }
