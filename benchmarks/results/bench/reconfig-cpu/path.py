# ruff: noqa: E402, E501
"""The essential path of decomp:physical with no deadline, CPU per piece:
python path.py 256|1024 ROUNDS [prof OUT]"""

import cProfile
import sys
import time

import acc
import numpy as np

acc.install()
import schedopt.problems.reconfig.price_bound as pb
from schedopt.problems.reconfig.generate import generate_custom
from schedopt.problems.reconfig.validate import evaluate

big = sys.argv[1] == "1024"
pb.PRICE_ROUNDS = int(sys.argv[2])
inst = generate_custom(
    *((128, 8, "llama2-70b", 1024) if big else (32, 8, "llama2-70b", 512)), 16, 16, seed=0
)
prof = cProfile.Profile(time.process_time) if len(sys.argv) > 3 and sys.argv[3] != "-" else None
T = time.process_time
c = T()
from schedopt.problems.reconfig.data import build_data
from schedopt.problems.reconfig.exact import warm_start

data = build_data(inst)
start = warm_start(data, None, None)
from schedopt.problems.reconfig.plan import first_level_us

up = first_level_us(data, start)
if len(sys.argv) > 4:
    up = int(sys.argv[4])
print(f"data+start {T() - c:.3f} upper {up}")
c = T()
if prof:
    prof.enable()
g = pb.Gathered()
lo, st = pb.priced_bound_us(inst, up, None, gathered=g)
import hashlib

dig = hashlib.sha1(b"".join(np.round(x, 9).tobytes() for x in g.prices)).hexdigest()[:12]
pdig = hashlib.sha1(repr(list(g.pool)).encode()).hexdigest()[:12]
print(
    f"bound {T() - c:.3f} lo {lo} rounds {len(g.prices)} {st} pool {len(g.pool)} {pdig} prices {dig}"
)
c = T()
acc.report()
sh = pb.mean_bound_us(inst, g, lo, up, None, st)
print(f"Q8'' {T() - c:.3f} -> {sh}")
c = T()
from schedopt.problems.reconfig.branch import branched
from schedopt.problems.reconfig.chains import _plan
from schedopt.problems.reconfig.design import Partitioner

part = Partitioner(inst)
ch = branched(g.sd, part, g.pool, g.prices, lo, None)
plan = _plan(inst, ch) if ch else None
print(
    f"W8 {T() - c:.3f} -> {evaluate(inst, plan) if plan else None} chains {hashlib.sha1(repr(sorted(repr(x) for x in ch)).encode()).hexdigest()[:12] if ch else None}"
)
c = T()
acc.report()
if prof:
    prof.disable()
    prof.dump_stats(sys.argv[3])
