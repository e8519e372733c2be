"""The bound alone (priced_bound_us, then Q8'' and W8's pricing) at 256 (or 1,024) GPUs, no
deadline, at most ROUNDS rounds: python bound_prof.py ROUNDS [OUT.prof|-] [UPPER] [1024];
prints the bound, the rounds,
the CPU of each part and a digest of the prices (old vs new: the same arrays)."""

import cProfile
import hashlib
import sys
import time

import numpy as np

import schedopt.problems.reconfig.price_bound as pb
from schedopt.problems.reconfig.generate import generate_custom

rounds = int(sys.argv[1])
pb.PRICE_ROUNDS = rounds
big = len(sys.argv) > 4 and sys.argv[4] == "1024"
inst = generate_custom(
    *((128, 8, "llama2-70b", 1024) if big else (32, 8, "llama2-70b", 512)), 16, 16, seed=0
)
upper = int(sys.argv[3]) if len(sys.argv) > 3 else 17342800
prof = cProfile.Profile(time.process_time) if len(sys.argv) > 2 and sys.argv[2] != "-" else None
if prof:
    prof.enable()
c0 = time.process_time()
g = pb.Gathered()
lo, stats = pb.priced_bound_us(inst, upper, None, gathered=g)
c1 = time.process_time()
sharper = pb.mean_bound_us(inst, g, lo, upper, None, stats)
c2 = time.process_time()
from schedopt.problems.reconfig.branch import STEPS, every_count, w8_prices  # noqa: E402

pool = dict(g.pool)
lams = [int(lo * (1 + s)) for s in STEPS]
for mu in w8_prices(g.prices):
    every_count(g.sd, lams, mu, pool)
c3 = time.process_time()
if prof:
    prof.disable()
    prof.dump_stats(sys.argv[2])
h = hashlib.sha1(b"".join(np.round(p, 9).tobytes() for p in g.prices)).hexdigest()[:12]
print(f"bound {lo} rounds {len(g.prices)} q8'' {sharper} pool {len(g.pool)} w8pool {len(pool)}")
print(f"cpu bound {c1 - c0:.2f} q8'' {c2 - c1:.2f} w8 pricing {c3 - c2:.2f} prices {h}")
print({k: v for k, v in stats.items()})
