# ruff: noqa: E402
"""Capture real inputs of _least_cost and unique_rows during 3 rounds + W8 at 256."""

import pickle
import sys

import schedopt.problems.reconfig.branch as br
import schedopt.problems.reconfig.dw_prices as dw
import schedopt.problems.reconfig.price_bound as pb
import schedopt.problems.reconfig.pricing as pr
from schedopt.problems.reconfig.generate import generate_custom

big = sys.argv[1] == "1024"
inst = generate_custom(
    *((128, 8, "llama2-70b", 1024) if big else (32, 8, "llama2-70b", 512)), 16, 16, seed=0
)
LC, UR = [], []
f0, u0 = pr._least_cost, pr.unique_rows


def lc(sd, mu, caps, keep=False):
    LC.append((mu.copy(), caps.copy(), keep))
    return f0(sd, mu, caps, keep)


def ur(caps):
    UR.append(caps.copy())
    return u0(caps)


for m in (pr, pb, dw, br):
    if hasattr(m, "_least_cost"):
        m._least_cost = lc
    if hasattr(m, "unique_rows"):
        m.unique_rows = ur
pb.PRICE_ROUNDS = 3
g = pb.Gathered()
lo, st = pb.priced_bound_us(inst, int(sys.argv[2]), None, gathered=g)
nb = len(LC)
from schedopt.problems.reconfig.design import Partitioner

br.branched(g.sd, Partitioner(inst), g.pool, g.prices, lo, None)
with open(f"/tmp/rcb/cap{sys.argv[1]}.pkl", "wb") as out:
    pickle.dump((LC, UR, nb, g.sd), out)
print(len(LC), nb, len(UR))
