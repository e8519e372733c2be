"""The solvers' first imports under a deadline, each through the gate of
:mod:`schedopt.core.gates` (#17).

A solver is imported by the first model handed to it, not with the problem (start-up stays
light, tests/test_startup.py), so its first import falls inside a solve and its time limit; an
import runs to its end once started. Every first import of a solver under a deadline goes
through :func:`import_solver` (or :func:`solver_in_time` where a refusal only means "without
that solver"): refused before it starts when its quiet CPU seconds times the slowdown now would
not end in the time left. The quiet CPU seconds are measured after numpy and the problem's
package, as a solve has them (``time.process_time`` around the import, and
``python -X importtime``, load 3-4 on 2 cores).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from schedopt.core.gates import import_in_time
from schedopt.core.stopping import Deadline, DeadlineReached


@dataclass(frozen=True)
class Solver:
    """A solver's module, the quiet CPU seconds of its first import, and its name in a
    refusal's message."""

    module: str
    quiet_cpu_s: float
    subject: str


#: OR-Tools' ``cp_model`` (it imports pandas): 0.26-0.43 CPU s after numpy (0.52-0.61 alone);
#: 0.27-0.33 s at load 5 (benchmarks/admission_lns_short.py); beside 4 CPU burners at load
#: 8-10 it and the model took 9-10 s of wall, ungated, and a 30 s limit passed in them
#: (benchmarks/RESULTS.md).
CPSAT = Solver("ortools.sat.python.cp_model", 0.35, "the CP-SAT solver")
#: ``highspy``: 0.011-0.018 CPU s after numpy (0.14-0.19 alone, numpy with it).
HIGHS = Solver("highspy", 0.02, "the HiGHS solver")
#: PuLP (CBC's and the MPS export's model; it imports highspy): 0.024-0.036 CPU s after
#: highspy, 0.19-0.22 alone.
PULP = Solver("pulp", 0.05, "PuLP (CBC's model)")


def import_solver(solver: Solver, deadline: Deadline | None) -> ModuleType:
    """``solver``'s module, imported now if it fits the time left of ``deadline`` (None:
    ungated, as in deterministic mode, where the run must not depend on the wall clock:
    :func:`~schedopt.core.gates.first_import_deadline`); refused with :class:`DeadlineReached`
    otherwise, the module then not imported."""
    return import_in_time(solver.module, solver.quiet_cpu_s, deadline, solver.subject)


def solver_in_time(solver: Solver, deadline: Deadline | None) -> bool:
    """Whether ``solver`` is imported (now, if it fits the time left: :func:`import_solver`);
    False leaves it unimported, for a caller that can go on without it."""
    try:
        import_solver(solver, deadline)
    except DeadlineReached:
        return False
    return True
