"""Options every method understands."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Seconds ``solve()`` may take beyond ``time_limit_s``: validation, solution extraction and
#: the return from the solver's last callback. Measured in benchmarks/RESULTS.md (worst seen:
#: 0.93 s); the tests assert it on a large instance of every problem. A heuristic pass is not
#: interrupted: the largest measured, MoE placement's EPLB at the DeepSeek-V3 shape (256 GPUs
#: × 58 layers × 256 experts), returns in 0.9–1.1 s even for a 0.5 s limit.
TIME_LIMIT_OVERHEAD_S = 1.0


@dataclass(frozen=True)
class SolveOptions:
    """Limits and knobs shared by every method.

    ``time_limit_s`` is a promise: ``solve`` returns within it plus
    :data:`TIME_LIMIT_OVERHEAD_S`, with the best solution found, its bound and gap.
    ``mip_gap`` is the relative gap at which an exact back-end may stop and still call the
    result OPTIMAL (0.0 = prove exact optimality). ``hint`` is a solution of the same problem
    used as a warm start. ``params`` carries method-specific parameters (heuristic knobs).
    ``deterministic``: reproducible answers instead of the wall-clock promise — CP-SAT stops on
    its deterministic time (``max_deterministic_time`` = the limit's share, in CP-SAT's
    deterministic seconds) and heuristics do a fixed amount of work, so two runs with the same
    input, seed and threads=1 return the same solution; the wall time may then exceed the limit.
    Honoured by admission's ``cpsat``, heuristics and ``auto``; other methods ignore it.
    """

    time_limit_s: float = 10.0
    mip_gap: float = 0.0
    threads: int = 1
    seed: int = 0
    hint: Any = None
    verbose: bool = False
    params: dict[str, Any] = field(default_factory=dict)
    deterministic: bool = False

    def __post_init__(self) -> None:
        if not self.time_limit_s > 0:
            raise ValueError(f"time_limit_s must be > 0 (got {self.time_limit_s})")
        if not 0.0 <= self.mip_gap < 1.0:
            raise ValueError(f"mip_gap must be in [0, 1) (got {self.mip_gap})")
        if self.threads < 1:
            raise ValueError(f"threads must be >= 1 (got {self.threads})")
