# ruff: noqa: E402, SIM115
"""Replayed or captured Q7 calls (RESULTS.md, "Reconfig at 10 s on a busy 2-core machine", #17)."""

import importlib.util
import pickle
import sys
import time

import numpy as np

# the reference: pricing.py of main, loaded as its own module
spec = importlib.util.spec_from_file_location("ref_pricing", "/tmp/rcc/ref_pricing.py")
import schedopt.problems.reconfig.pricing as new

ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)
sd, calls = pickle.load(open(sys.argv[1], "rb"))
T = time.process_time
t_old = t_new = 0.0
for mu, caps, keep in calls:
    c = T()
    a = ref._least_cost(sd, mu, caps, keep)
    t_old += T() - c
    c = T()
    b = new._least_cost(sd, mu, caps, keep)
    t_new += T() - c
    assert np.array_equal(a[0], b[0]), "cost"
    if keep:
        for r in range(len(caps)):
            if np.isfinite(a[0][r]):
                assert ref.cheapest_types(sd, caps, a[1], r) == new.cheapest_types(
                    sd, caps, b[1], r
                )
print(f"old {t_old:.3f} new {t_new:.3f}")
