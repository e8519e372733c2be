# ruff: noqa: E402, SIM115
"""Replayed or captured Q7 calls (RESULTS.md, "Reconfig at 10 s on a busy 2-core machine", #17)."""

import pickle
import sys

import numpy as np

import schedopt.problems.reconfig.branch as br
import schedopt.problems.reconfig.dw_prices as dw
import schedopt.problems.reconfig.price_bound as pb
import schedopt.problems.reconfig.pricing as pr

orig = pr._least_cost
CALLS = []


def lc(sd, mu, caps, keep=False):
    CALLS.append((np.array(mu), np.array(caps), keep))
    return orig(sd, mu, caps, keep)


for m in (pr, pb, br, dw):
    if hasattr(m, "_least_cost"):
        m._least_cost = lc
from schedopt.problems.reconfig.generate import generate_custom

big = sys.argv[1] == "1024"
pb.PRICE_ROUNDS = 3
inst = generate_custom(
    *((128, 8, "llama2-70b", 1024) if big else (32, 8, "llama2-70b", 512)), 16, 16, seed=0
)
up = 5422187 if big else 17342800
g = pb.Gathered()
lo, st = pb.priced_bound_us(inst, up, None, gathered=g)
sh = pb.mean_bound_us(inst, g, lo, up, None, st)
from schedopt.problems.reconfig.branch import branched
from schedopt.problems.reconfig.design import Partitioner

ch = branched(g.sd, Partitioner(inst), g.pool, g.prices, lo, None)

sd = g.sd
sd.caps_at = {}
pickle.dump((sd, CALLS), open(f"calls{sys.argv[1]}.pkl", "wb"))
print(len(CALLS))
