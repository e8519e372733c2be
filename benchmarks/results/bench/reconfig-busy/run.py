"""The bench CLI, with the bound's rounds priced, Q8″, W8's gate and the widening logged to $RB_LOG
(wrappers around the same functions: no behaviour change). RB_LOG=F python run.py bench ..."""

import json
import os
import sys
import time

import schedopt.problems.reconfig.physical as ph
import schedopt.problems.reconfig.price_bound as pb
from schedopt.cli import main

LOG = os.environ["RB_LOG"]


def log(**kw):
    with open(LOG, "a") as f:
        f.write(json.dumps(kw) + "\n")


_pb = pb.priced_bound_us


def priced_bound_us(inst, upper, deadline, *a, **k):
    t = time.perf_counter()
    rem = deadline.remaining() if deadline else None
    out = _pb(inst, upper, deadline, *a, **k)
    g = k.get("gathered")
    log(
        ev="bound",
        gpus=inst.cluster.num_gpus,
        share_s=rem,
        took=time.perf_counter() - t,
        rounds=None if g is None else len(g.prices),
        lower=None if out is None else out[0],
        stats=None
        if out is None
        else {kk: v for kk, v in out[1].items() if isinstance(v, (int, float))},
    )
    return out


pb.priced_bound_us = priced_bound_us
_mb = pb.mean_bound_us


def mean_bound_us(inst, gathered, lower, upper, deadline, *a, **k):
    out = _mb(inst, gathered, lower, upper, deadline, *a, **k)
    log(
        ev="mean", gpus=inst.cluster.num_gpus, rounds=len(gathered.prices), lower=lower, sharper=out
    )
    return out


pb.mean_bound_us = mean_bound_us
_bf = ph._branch_fits


def _branch_fits(inst, deadline, gathered):
    r = _bf(inst, deadline, gathered)
    log(
        ev="w8_gate",
        gpus=inst.cluster.num_gpus,
        rounds=len(gathered.prices),
        left=None if deadline is None else deadline.remaining(),
        runs=r,
    )
    return r


ph._branch_fits = _branch_fits
_w = ph.widen


def widen(inst, sol, deadline=None, *a, **k):
    rem = deadline.remaining() if deadline else None
    out = _w(inst, sol, deadline, *a, **k)
    from schedopt.problems.reconfig.validate import evaluate

    log(ev="widen", gpus=inst.cluster.num_gpus, share_s=rem, l1=evaluate(inst, out)[0])
    return out


ph.widen = widen

sys.exit(main())
