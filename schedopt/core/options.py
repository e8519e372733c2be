"""Options every method understands."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypeVar

from .errors import InvalidInstanceError
from .progress import ProgressCallback

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_Params = TypeVar("_Params", bound="DataclassInstance")

#: Largest seed: CP-SAT's ``random_seed`` and HiGHS's ``random_seed`` are 32-bit signed ints.
MAX_SEED = 2**31 - 1
#: Most solver threads accepted (CP-SAT rejects far larger worker counts with an opaque error).
MAX_THREADS = 256
#: Longest time limit accepted, one week: beyond it the timers' platform ``time_t`` overflows.
MAX_TIME_LIMIT_S = 7 * 24 * 3600.0

#: Seconds ``solve()`` may take beyond ``time_limit_s``: validation, solution extraction and
#: the return from the solver's last callback. Measured in benchmarks/RESULTS.md (worst seen:
#: 0.93 s); the tests assert it on a large instance of every problem. A heuristic pass is not
#: interrupted: the largest measured, MoE placement's EPLB at the DeepSeek-V3 shape (256 GPUs
#: × 58 layers × 256 experts), returns in 0.9–1.1 s even for a 0.5 s limit. Those seconds are
#: CPU work: where the process gets a 1/s share of a core (s, the slowdown: its wall time over
#: its CPU time), they take s times as long, and the overhead is this times s (what the tests of
#: the promise assert, tests/timing.py). Measured at a sixth of a core and less (fair share's
#: 16,384 GPUs at 10 s beside other work: 12.1 s at 1.8 CPU s, 14.2 s at 0.7 CPU s;
#: benchmarks/RESULTS.md, "Fair share 16,384 on a starved machine").
TIME_LIMIT_OVERHEAD_S = 1.0


@dataclass(frozen=True)
class SolveOptions:
    """Limits and knobs shared by every method.

    ``time_limit_s`` is a promise: ``solve`` returns within it plus
    :data:`TIME_LIMIT_OVERHEAD_S` (times the slowdown where the machine gives the process less
    than a core), with the best solution found, its bound and gap.
    ``mip_gap`` is the relative gap at which an exact back-end may stop and still call the
    result OPTIMAL (0.0 = prove exact optimality). ``hint`` is a solution of the same problem
    used as a warm start. ``params`` carries method-specific parameters (heuristic knobs).
    ``deterministic``: reproducible answers instead of the wall-clock promise — CP-SAT stops on
    its deterministic time (``max_deterministic_time`` = the limit's share, in CP-SAT's
    deterministic seconds) and heuristics do a fixed amount of work, so two runs with the same
    input, seed and threads=1 return the same solution; the wall time may then exceed the limit
    (the wall clock only stops a runaway run, at 10 × the limit + 10 s). HiGHS has no
    deterministic time: ``milp:highs`` and ``milp:cbc`` then stop a MIP level on a budget of
    branch-and-bound nodes (100 per second of its share, at least 50; CBC with its seed, no
    ``-threads``, its serial search, and at most 20 cut passes at the root) and solve an LP to
    the end. A node of a large model costs more, and the root is not bounded by the nodes:
    HiGHS has no option for its root's cut rounds and sub-MIPs (2-5 CPU s on moe's small
    instance at one node a level).
    Decompositions join their parts in the parts' order and give each a fixed budget (fair
    share's ``decomp``: its bounds' step limits, and no time-boxed L2/L3 repair after them;
    admission's ``decomp:lp``: its LPs to their end, its repair in CP-SAT steps of
    deterministic time; moe's ``decomp:layer`` and ``milp:scenario``: node budgets from the
    limit, the local search's iterations to their end; reconfig's ``decomp:physical``:
    decomp:rate's search and bound to their end, then widening on budgets of W7 targets, W6
    designs and MILP nodes fixed by the limit).
    Honoured by every method. A method registered as not reproducible
    (``MethodSpec.reproducible`` False; none is, since reconfig's ``decomp:physical`` honours
    it) would run to the runaway cap with shares of it, and ``Result.stats["deterministic"]``
    would say so (``auto`` too when it routes the instance to one).
    ``warm_start`` is what a method handed back last round (``Result.warm_start``: timeshare's
    simplex basis, keyed by job); a method that can resume from it does, the others ignore it.
    ``on_progress`` receives :class:`~schedopt.core.progress.Progress` events while the solve
    runs (method, level, incumbent, bound, time left; a few a second at most); None: silent.
    ``tuned`` is method name → parameter values of the tuned heuristics in force for this
    solve (the shipped ones, overridden by ``solve(..., tuned=PATH)``): ``solve`` sets it, so
    that a method that runs heuristics inside (admission's ``decomp:lp`` and ``lns``) runs them
    with the parameters the caller chose. None (a method run without ``solve``): the method
    reads the shipped ones itself.
    """

    time_limit_s: float = 10.0
    mip_gap: float = 0.0
    threads: int = 1
    seed: int = 0
    hint: Any = None
    verbose: bool = False
    params: dict[str, Any] = field(default_factory=dict)
    deterministic: bool = False
    warm_start: Any = None
    on_progress: ProgressCallback | None = field(default=None, compare=False, repr=False)
    tuned: Mapping[str, Mapping[str, Any]] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        # InvalidInstanceError (a ValueError) naming the option: the same ranges as the CLI's,
        # so a value no solver can take never reaches one (CP-SAT, numpy and CBC reject
        # them with unrelated errors deep inside a solve).
        limit = self.time_limit_s
        if (
            isinstance(limit, bool)
            or not isinstance(limit, numbers.Real)
            or not (0 < limit <= MAX_TIME_LIMIT_S)
        ):
            raise InvalidInstanceError(
                "time_limit_s", f"must be in (0, {MAX_TIME_LIMIT_S:g}] s (got {limit!r})"
            )
        gap = self.mip_gap
        if (
            isinstance(gap, bool)
            or not isinstance(gap, numbers.Real)
            or not (math.isfinite(gap) and 0.0 <= gap < 1.0)
        ):
            raise InvalidInstanceError("mip_gap", f"must be in [0, 1) (got {gap!r})")
        whole_number("threads", self.threads, 1, MAX_THREADS)
        whole_number("seed", self.seed, 0, MAX_SEED)
        if self.on_progress is not None and not callable(self.on_progress):
            raise InvalidInstanceError("on_progress", "must be callable or None")
        if not isinstance(self.params, dict):
            raise InvalidInstanceError(
                "params", f"must be a dict (got {type(self.params).__name__})"
            )


def whole_number(name: str, value: Any, low: int, high: int) -> int:
    """``value`` as an int in ``[low, high]``; anything else (a bool, a float, text, out of
    range) is refused with :class:`InvalidInstanceError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidInstanceError(name, f"must be a whole number (got {value!r})")
    if not low <= int(value) <= high:
        raise InvalidInstanceError(
            name, f"must be a whole number in [{low}, {high}] (got {value!r})"
        )
    return int(value)


def method_params(cls: type[_Params], given: Mapping[str, Any]) -> _Params:
    """``cls(**given)`` for a method's parameter dataclass; a ValueError names unknown keys."""
    known = {f.name for f in fields(cls)}
    unknown = set(given) - known
    if unknown:
        raise ValueError(
            f"unknown parameters {sorted(unknown)} for {cls.__name__}; known {sorted(known)}"
        )
    return cls(**given)
