# ruff: noqa: E501
"""python trace7.py LIMIT [instance args]: each W7 target (cols.plan) with time, lam, plan L1, columns known"""

import sys

if "--help" in sys.argv:
    print(__doc__)
    sys.exit()

import sys
import time

import schedopt
import schedopt.problems.reconfig.columns as co
from schedopt.problems.reconfig import generate_custom
from schedopt.problems.reconfig.chains import _plan
from schedopt.problems.reconfig.validate import evaluate

T0 = time.perf_counter()
orig = co.Columns.plan


def plan(self, lam, deadline):
    t = time.perf_counter()
    n = len(self.seqs)
    out = orig(self, lam, deadline)
    p = _plan(self.part.inst, out) if out else None
    print(
        f"{t - T0:7.2f} +{time.perf_counter() - t:5.2f} packed={self.packed} level={self.level} own={self.own} lam={lam} seqs {n}->{len(self.seqs)} plan={None if p is None else round(evaluate(self.part.inst, p)[0], 6)}"
    )
    return out


co.Columns.plan = plan
a = sys.argv[2:] or ["4", "4", "llama2-7b", "32", "1", "2"]
inst = generate_custom(int(a[0]), int(a[1]), a[2], int(a[3]), int(a[4]), int(a[5]), seed=0)
r = schedopt.solve(inst, "decomp:physical", time_limit_s=float(sys.argv[1]))
print(r.status, r.objectives, r.best_bound, r.gap, round(time.perf_counter() - T0, 2))
