"""W7's landing against its first target (#17): ``columned`` alone, no deadline, so the plan
it returns depends on the code and the start only. Usage: ``land.py GPUS LOWER_S`` (GPUS 256
or 1024: issue #17's rows; LOWER_S the proven bound W7 is handed, in seconds). The template
plan W7 starts from (``solve_templates``, its L1 proven in about 2 s) is kept in /tmp."""

import os
import pickle
import sys
import time

from schedopt.core import SolveOptions
from schedopt.core.stopping import Deadline
from schedopt.problems.reconfig.chains import _plan
from schedopt.problems.reconfig.decomp import solve_templates
from schedopt.problems.reconfig.design import Partitioner
from schedopt.problems.reconfig.generate import generate_custom
from schedopt.problems.reconfig.physical import _chains_of
from schedopt.problems.reconfig.targets import columned
from schedopt.problems.reconfig.validate import evaluate

ROWS = {256: (32, 8, "llama2-70b", 512, 16, 16), 1024: (128, 8, "llama2-70b", 1024, 16, 16)}

size, lower = int(sys.argv[1]), float(sys.argv[2])
inst = generate_custom(*ROWS[size], seed=0)
cache = f"/tmp/rr/tmpl{size}.pkl"
if os.path.exists(cache):
    with open(cache, "rb") as f:
        sol = pickle.load(f)
else:
    sol = solve_templates(inst, SolveOptions(), Deadline.after(60.0), hand_over=False).solution
    with open(cache, "wb") as f:
        pickle.dump(sol, f)
part = Partitioner(inst)
upper = round(evaluate(inst, sol)[0] * 1e6)
t = time.perf_counter()
found = columned(inst, part, upper, None, int(lower * 1e6), _chains_of(part, sol))
best = evaluate(inst, _plan(inst, found[0]))[0] if found else None
print(
    f"{size} lower={lower:.4f} upper={upper / 1e6:.4f} best={best} t={time.perf_counter() - t:.1f}s"
)
