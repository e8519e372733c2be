# ruff: noqa: E402
"""``../reconfig-burner/phases.py`` (the bench CLI with CPU, ``process_time``, and wall per
phase logged to $RC_LOG) with the deadline ``auto`` hands on, the finish, the validations, W4,
W5, every evaluation and every W7 plan logged too. RC_LOG=F python trace.py bench ...
(The rows here ran from a flat copy of both in one file; the same wrappers.)"""

import runpy
import sys
import time
from pathlib import Path

_phases = runpy.run_path(str(Path(__file__).parent.parent / "reconfig-burner" / "phases.py"))
T0, log, wrap, main = _phases["T0"], _phases["log"], _phases["wrap"], _phases["main"]
dc, ph = _phases["dc"], _phases["ph"]

import importlib

so = importlib.import_module("schedopt.core.solve")
_ra = so.run_auto


def _run_auto(spec, instance, options, deadline, tuned):
    log(
        ev="deadline",
        t=round(time.perf_counter() - T0, 3),
        end=round(deadline.end - T0, 3),
        stretch=deadline.stretch_s,
    )
    return _ra(spec, instance, options, deadline, tuned)


so.run_auto = _run_auto
wrap(so, "_finish", "finish")
wrap(ph, "validate", "ph.validate")
wrap(ph, "_add_while_better", "W4")
wrap(ph, "deal", "W5")
wrap(dc, "evaluate", "dc.evaluate")

import schedopt.problems.reconfig.columns as co

_pl = co.Columns.plan
C0 = [None]


def _plan_logged(self, lam, deadline):
    c, t = time.process_time(), time.perf_counter()
    out = _pl(self, lam, deadline)
    log(
        ev="W7.plan",
        t=round(t - T0, 3),
        cpu_at=round(c, 3),
        cpu=round(time.process_time() - c, 3),
        wall=round(time.perf_counter() - t, 3),
        lam=lam,
        packed=self.packed,
        found=out is not None and len(out),
    )
    return out


co.Columns.plan = _plan_logged

_ev = ph.evaluate


def _ev_logged(inst, plan):
    v = _ev(inst, plan)
    import traceback

    who = [f.name for f in traceback.extract_stack(limit=4)[:-1]]
    log(ev="ph.evaluate", t=round(time.perf_counter() - T0, 3), L1=round(v[0], 5), who=who)
    return v


ph.evaluate = _ev_logged

sys.exit(main())
