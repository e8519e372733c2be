"""The bound alone at 256 GPUs with a short deadline (a busy row's CPU share):
python short.py SECONDS [UPPER_US]; the bound, its rounds and probes, the CPU taken."""

import sys
import time

import schedopt.problems.reconfig.price_bound as pb
from schedopt.core.stopping import Deadline
from schedopt.problems.reconfig.generate import generate_custom

inst = generate_custom(32, 8, "llama2-70b", 512, 16, 16, seed=0)
upper = int(sys.argv[2]) if len(sys.argv) > 2 else 17342800
c0 = time.process_time()
g = pb.Gathered()
lo, stats = pb.priced_bound_us(
    inst, upper, Deadline(time.perf_counter() + float(sys.argv[1])), gathered=g
)
print(
    f"{sys.argv[1]} s: bound {lo} rounds {len(g.prices)} probes {stats['q_priced']:.0f} "
    f"cpu {time.process_time() - c0:.2f}"
)
