"""A machine many times slower, emulated (#17): for the tests that ``deterministic=True``
answers do not depend on the wall clock or the machine's load.

Every wall clock the library reads runs ``factor`` times faster: ``time.perf_counter`` (every
:class:`~schedopt.core.stopping.Deadline`, every loop that stops on a share of it) and the
solvers' own limits (CP-SAT's ``max_time_in_seconds``, HiGHS's ``time_limit``, CBC's ``-sec``) cut
by the same
factor, as they would run out that much earlier on a machine that much slower. CP-SAT's
deterministic time and a HiGHS node budget are work, not time: they are left alone.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import pytest


@contextlib.contextmanager
def slower_machine(factor: float) -> Iterator[None]:
    """Within the block, the wall clock runs ``factor`` times faster (see the module)."""
    import highspy
    from ortools.sat.python import cp_model

    from schedopt.backends import cbc

    real, t0 = time.perf_counter, time.perf_counter()
    solve = cp_model.CpSolver.solve
    set_option = highspy.Highs.setOptionValue

    def cpsat(self, *args, **kwargs):
        self.parameters.max_time_in_seconds = self.parameters.max_time_in_seconds / factor
        return solve(self, *args, **kwargs)

    def highs(self, name, value):
        # HiGHS's ``time_limit`` is on its run clock, which adds up over an object's runs, so
        # a caller that runs it again sets its clock now plus the new limit (``StagedLp``):
        # only what lies beyond the clock is cut (dividing the sum took a later stage's time
        # from it: the third LP stage of a fair share part ended after 6 ms at 3x)
        if name == "time_limit":
            ran = self.getRunTime()
            value = ran + max(0.0, value - ran) / factor
        return set_option(self, name, value)

    launch = cbc._launch

    def cbc_run(args: list[str]):
        # CBC is a child process on the real clock: its own limit is cut as HiGHS's is.
        args = list(args)
        if "-sec" in args:
            i = args.index("-sec") + 1
            args[i] = f"{float(args[i]) / factor:.3f}"
        return launch(args)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(cbc, "_launch", cbc_run)
        m.setattr(time, "perf_counter", lambda: t0 + (real() - t0) * factor)
        m.setattr(cp_model.CpSolver, "solve", cpsat)
        m.setattr(highspy.Highs, "setOptionValue", highs)
        yield
