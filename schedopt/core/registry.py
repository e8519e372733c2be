"""The method registry: which problems exist and which methods each one offers.

A problem package registers one :class:`ProblemSpec`; each back-end (CP-SAT, MILP with a given
solver, a named heuristic) is a :class:`MethodSpec` in it. ``solve()`` looks methods up here and
nowhere else, so a method name is parsed in exactly one place.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from .errors import UnknownMethodError, UnknownProblemError
from .options import SolveOptions
from .result import ObjectiveTerm, Violation
from .status import Status
from .stopping import Deadline

if TYPE_CHECKING:
    from pydantic import BaseModel


class MethodKind(str, Enum):
    EXACT = "exact"
    HEURISTIC = "heuristic"


@dataclass(frozen=True)
class Outcome:
    """What a back-end hands back to ``solve()`` before validation and timing.

    ``bound`` is a proven bound on the first objective level (instance units), or None.
    ``proven_optimal`` says that every lexicographic level was proven optimal.
    """

    status: Status
    solution: Any = None
    bound: float | None = None
    build_s: float = 0.0
    solve_s: float = 0.0
    explanation: str | None = None
    stats: Mapping[str, Any] = field(default_factory=dict)
    #: Measurements the method makes beyond the validator's (merged into Result.metrics).
    metrics: Mapping[str, float] = field(default_factory=dict)
    #: The solution is the caller's hint, returned because the method found nothing better in
    #: time; a hint that no longer fits the instance is reported, not raised as a bug.
    from_hint: bool = False
    #: What the method can resume from next round (``SolveOptions.warm_start``), or None.
    warm_start: Any = None
    #: The solution's objectives when ``solve`` already evaluated it (``auto`` compares
    #: answers), so that it is not evaluated again (0.7 s at fair share's 20,000 jobs).
    objectives: tuple[float, ...] | None = None


Runner = Callable[[Any, SolveOptions, Deadline], Outcome]

#: ``load(path)`` → method name → parameter values: a problem's tuned heuristic parameters
#: (the shipped ones, overridden by the parameter file at ``path`` when it is not None).
TunedLoader = Callable[[str | os.PathLike[str] | None], dict[str, dict[str, Any]]]


@dataclass(frozen=True)
class MethodSpec:
    name: str
    kind: MethodKind
    run: Runner
    description: str
    supports_hint: bool = False
    #: For tunable heuristics: a frozen dataclass of parameters with a ``SPACE`` class attribute
    #: (field → (low, high)); ``options.params`` holds values for its fields.
    params: type | None = None
    #: A decomposition that makes its own starting plan (its parts' greedy or LP rounding):
    #: when ``auto_route`` picks it, ``auto`` runs it first, with the whole limit, and the
    #: heuristics only if it answers nothing (they would only take its time: 3-4 s at fair
    #: share's 16,384 GPUs, issue #17). Unmarked, ``auto`` runs the heuristics first and
    #: hands their best plan to the routed method as a hint.
    decomposition: bool = False
    #: Honours ``SolveOptions.deterministic`` (the same answer for the same input, seed and
    #: threads=1, whatever the clock or the machine's load). False for a method whose answer
    #: still follows the wall clock: asked for a deterministic run it runs to the runaway cap
    #: as the others do (its shares of the clock then large), but its Result says that the
    #: answer is not guaranteed reproducible in ``stats["deterministic"]``. SolveOptions'
    #: docstring lists them and why.
    reproducible: bool = True


@dataclass(frozen=True)
class PolicySpec:
    """What policy-level tuning (AutoSched-style) needs of a problem: episodes of a replay,
    cut from a public trace, and the metrics a scheduler cares about over one episode.

    ``episodes(data_dir, trace, start, count, size)`` cuts ``count`` consecutive episodes of
    ``size`` (jobs, days, rounds: the problem says) from ``trace`` (one of ``traces``) in the
    folder ``data_dir``, starting at ``start``. ``evaluate(method, episode, params)`` replays
    one episode with ``method`` (a heuristic with ``params``) deciding every round, and
    returns the metrics in the order and sense of ``terms`` (lexicographic, as a problem's
    objectives). A module-level function, so any executor can run it by reference.
    """

    traces: tuple[str, ...]
    terms: tuple[ObjectiveTerm, ...]
    episodes: Callable[[str | os.PathLike[str], str, int, int, int], list[Any]]
    evaluate: Callable[[str, Any, dict[str, Any]], Sequence[float] | None]
    #: The heuristics worth tuning on a replay (default: every tunable one).
    methods: tuple[str, ...] = ()
    description: str = ""


@dataclass(frozen=True)
class ProblemSpec:
    """Everything generic code needs to know about one problem."""

    name: str
    instance_type: type[BaseModel]
    solution_type: type[BaseModel]
    terms: tuple[ObjectiveTerm, ...]
    validate: Callable[[Any, Any], list[Violation]]
    evaluate: Callable[[Any, Any], tuple[float, ...]]
    metrics: Callable[[Any, Any], dict[str, float]]
    generate: Callable[[str, int], Any]
    sizes: tuple[str, ...]  # what ``generate`` accepts, smallest first
    estimate_variables: Callable[[Any], int]
    export_model: Callable[[Any, str, str], None] | None
    methods: Mapping[str, MethodSpec]
    auto_exact: str
    auto_heuristics: Sequence[str]
    description: str = ""
    #: ``plot(instance, solution) -> SVG text``, where the problem has a picture.
    plot: Callable[[Any, Any], str] | None = None
    #: ``render(console, instance, result)``: print the decisions of a solved ``result`` on a
    #: rich Console, its table in ``schedopt solve`` (without one the CLI prints a summary line).
    render: Callable[[Any, Any, Any], None] | None = None
    #: Seconds to keep back from every method for turning its answer into a Result (validate,
    #: evaluate, metrics), estimated cheaply from the instance's size before anything is built.
    finish_reserve_s: Callable[[Any], float] = lambda instance: 0.05
    #: ``formulate(instance, options, deadline)``: the problem's backend-neutral model for
    #: one instance (a ``schedopt.model.Formulated``, or an early Outcome), where it has one;
    #: the conformance suite checks that every emitter says what it says.
    formulate: Callable[[Any, SolveOptions, Deadline], Any] | None = None
    #: ``auto_route(instance) -> method name``: the exact method ``auto`` runs after the
    #: heuristics for this instance (a decomposition method past a size, say; one marked
    #: :attr:`MethodSpec.decomposition` runs first instead); None: always ``auto_exact``.
    #: Decided from the instance's size alone, before anything is built.
    auto_route: Callable[[Any], str] | None = None
    #: Where ``solve`` gets the tuned parameters of the heuristics (``auto``, ``tuned=``); a
    #: problem passes the tuning store's loader. None: nothing is tunable.
    tuned_params: TunedLoader | None = None
    #: ``info(instance) -> [(label, text), ...]``: what ``schedopt info`` shows about an
    #: instance beyond the generic lines (cluster, jobs, horizon, model size): the problem's
    #: own parts (pools and prices, the model and its failed GPUs, layers and experts).
    info: Callable[[Any], list[tuple[str, str]]] | None = None
    #: Replays for policy-level tuning (``schedopt tune PROBLEM --replay TRACE``), if any.
    policy: PolicySpec | None = None

    def auto_exact_for(self, instance: Any) -> str:
        """The exact method ``auto`` runs for ``instance`` (:attr:`auto_route`)."""
        return self.auto_exact if self.auto_route is None else self.auto_route(instance)

    def method(self, name: str) -> MethodSpec:
        try:
            return self.methods[name]
        except KeyError:
            known = ", ".join(["auto", *self.methods])
            raise UnknownMethodError(
                f"unknown method {name!r} for problem {self.name!r}; known: {known}"
            ) from None


def by_name(*methods: MethodSpec) -> dict[str, MethodSpec]:
    """The ``methods`` mapping of a ProblemSpec, keyed by each method's own name."""
    out: dict[str, MethodSpec] = {}
    for m in methods:
        if m.name in out:
            raise RuntimeError(f"method {m.name!r} registered twice")
        out[m.name] = m
    return out


_PROBLEMS: dict[str, ProblemSpec] = {}
#: Problems known by name whose package is imported on first use: name → (loader, the
#: package that defines the problem's types).
_PENDING: dict[str, tuple[Callable[[], ProblemSpec], str | None]] = {}


def register_problem(spec: ProblemSpec) -> ProblemSpec:
    """Make ``spec`` known to ``solve``, ``load`` and the CLI. Registration is explicit: this
    module never imports a problem package; ``schedopt.problems`` registers the built-in ones
    (``import schedopt`` imports it), and a caller registers its own the same way."""
    if spec.name in _PROBLEMS and _PROBLEMS[spec.name] is not spec:
        raise RuntimeError(f"problem {spec.name!r} registered twice")
    _PROBLEMS[spec.name] = spec
    _PENDING.pop(spec.name, None)
    return spec


def register_problem_loader(
    name: str, load: Callable[[], ProblemSpec], package: str | None = None
) -> None:
    """Make the problem ``name`` known without importing it: ``load()`` returns its spec and
    runs on first use (``get_problem``, ``problem_of``), so that ``import schedopt`` and the
    command line's ``--help`` import no problem and no solver. ``package`` is the module that
    defines the problem's types: ``problem_of`` loads a pending problem only once that module
    has been imported (an instance of its types cannot exist before), and always when None."""
    if name in _PROBLEMS or name in _PENDING:
        raise RuntimeError(f"problem {name!r} registered twice")
    _PENDING[name] = (load, package)


def problem_names() -> tuple[str, ...]:
    """Every registered problem, loaded or not (this imports none)."""
    return tuple(sorted({*_PROBLEMS, *_PENDING}))


def problem_loaded(name: str) -> bool:
    """Whether ``name``'s package is imported already (``get_problem`` then imports nothing)."""
    return name in _PROBLEMS


def get_problem(name: str) -> ProblemSpec:
    spec = _PROBLEMS.get(name)
    if spec is not None:
        return spec
    if name not in _PENDING:
        raise UnknownProblemError(
            f"unknown problem {name!r}; known: {', '.join(problem_names())}"
        ) from None
    load, _ = _PENDING[name]
    spec = load()
    if spec.name != name:
        raise RuntimeError(f"the loader of problem {name!r} returned problem {spec.name!r}")
    return register_problem(spec)


def problem_of(instance: object) -> ProblemSpec:
    for name, (_, package) in list(_PENDING.items()):
        if package is None or package in sys.modules:
            get_problem(name)
    for spec in _PROBLEMS.values():
        if isinstance(instance, spec.instance_type):
            return spec
    raise TypeError(
        f"{type(instance).__name__} is not an instance of any registered problem "
        f"({', '.join(problem_names())}); load it with schedopt.load(path)"
    )
