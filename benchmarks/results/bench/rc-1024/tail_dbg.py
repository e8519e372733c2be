import time
import traceback

import schedopt
from schedopt.core.stopping import Deadline
from schedopt.problems.reconfig import physical
from schedopt.problems.reconfig.generate import generate_custom

inst = generate_custom(8, 8, "llama2-70b", 128, 4, 4, seed=0)
start = schedopt.solve(inst, "heuristic:oobleck", time_limit_s=10).solution
real = physical.validate
D = [None]


def slow(inst, plan):
    t = time.perf_counter()
    time.sleep(0.15)
    st = [f.name for f in traceback.extract_stack(limit=5)[:-1]]
    print(f"validate at {t - D[0].end:+.3f}", st)
    return real(inst, plan)


physical.validate = slow
D[0] = deadline = Deadline.after(1.5)
wide = physical.widen(inst, start, deadline)
print("late", time.perf_counter() - deadline.end)
