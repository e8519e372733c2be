"""W8's plan against where the bound stopped (#17; RESULTS.md, "Reconfig at 256 GPUs: W8 at
the mean of the bound's prices"): the bound's state (its columns, its prices, the bound
reached) saved after a cut, then W8 from each state with no deadline.

Not a ``schedopt bench`` suite. On ``generate_custom(32, 8, 'llama2-70b', 512, 16, 16,
seed=0)``, with the template plan's L1 (17.3428 s) as the bound's upper end:

- ``save --cuts 2.5,3.0,3.5,4.0,0 --dir D``: ``priced_bound_us`` with each deadline (0: none,
  converged), its ``Gathered`` (pool, prices) and bound pickled under D, the load recorded;
- ``bound --dir D``: Q7/Q9's test at the mean of each state's prices, bisected from the
  bound it reached up to the plan's L1 (12.415943 s);
- ``eval --dir D --variant mean|last [--min-rounds 3]``: ``branch.branched`` (main's W8) from
  each saved state with at least that many rounds of prices (``last``: every row priced at the
  bound's last three prices, newest first, as main does; ``mean``: at the mean of all its
  prices, then its last two), its plan checked by the validator; rows to
  benchmarks/results/reconfig_w8_prices.jsonl.
"""

from __future__ import annotations

import argparse
import os
import pickle
import time
from pathlib import Path

import numpy as np
from common import append_rows

import schedopt.problems.reconfig.branch as branch
from schedopt.core.stopping import Deadline
from schedopt.problems.reconfig.chains import _plan
from schedopt.problems.reconfig.design import Partitioner
from schedopt.problems.reconfig.generate import generate_custom
from schedopt.problems.reconfig.price_bound import Gathered, priced_bound_us
from schedopt.problems.reconfig.pricing import priced_out, supply_value
from schedopt.problems.reconfig.stage_bound import stage_data
from schedopt.problems.reconfig.validate import evaluate, validate

OUT = "reconfig_w8_prices"
UPPER_US = 17_342_800  # the template answer's L1 at 256 GPUs


def _inst(hosts: int):
    return generate_custom(hosts, 8, "llama2-70b", 512, 16, 16, seed=0)


def save(args: argparse.Namespace) -> None:
    inst = _inst(args.hosts)
    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    for cut in (float(x) for x in args.cuts.split(",")):
        g = Gathered()
        load = os.getloadavg()[0]
        t = time.perf_counter()
        lo, _ = priced_bound_us(inst, UPPER_US, Deadline.after(cut) if cut else None, gathered=g)
        took = time.perf_counter() - t
        state = {
            "cut": cut,
            "load": load,
            "bound": lo,
            "took": took,
            "pool": list(g.pool),
            "prices": g.prices,
            "hosts": args.hosts,
        }
        name = f"cut-{cut:.1f}-{int(time.time())}.pkl"
        (out / name).write_bytes(pickle.dumps(state))
        print(
            f"{name}: bound {lo / 1e6:.4f} s after {took:.2f} s, {len(g.prices)} prices, "
            f"{len(g.pool)} columns, load {load:.2f}",
            flush=True,
        )


def evaluate_states(args: argparse.Namespace) -> None:
    rows = []
    cache: dict[int, tuple] = {}
    for f in sorted(Path(args.dir).glob("*.pkl")):
        st = pickle.loads(f.read_bytes())
        if len(st["prices"]) < args.min_rounds:
            continue
        if st["hosts"] not in cache:
            inst = _inst(st["hosts"])
            cache[st["hosts"]] = (inst, stage_data(inst, True), Partitioner(inst))
        inst, sd, part = cache[st["hosts"]]
        pool = dict.fromkeys(st["pool"])
        t = time.perf_counter()
        prices = list(st["prices"])
        if args.variant == "mean":  # branched prices prices[::-1][:PRICES] (3): so the mean,
            # then the last two, newest first
            prices += [*prices[-2:], np.mean(prices, axis=0)]
        chains = branch.branched(sd, part, pool, prices, st["bound"], None)
        took = time.perf_counter() - t
        plan = _plan(inst, chains) if chains else None
        l1 = None
        if plan is not None and not validate(inst, plan):
            l1 = evaluate(inst, plan)[0]
        row = {
            "state": f.name,
            "cut": st["cut"],
            "bound_s": st["bound"] / 1e6,
            "rounds": len(st["prices"]),
            "variant": args.variant,
            "plan_s": l1,
            "w8_s": round(took, 2),
            "load": os.getloadavg()[0],
        }
        print(row, flush=True)
        rows.append(row)
    append_rows(OUT, rows, None)


def bound_states(args: argparse.Namespace) -> None:
    """Q7/Q9's priced test (valid at any prices μ ≥ 0) at the mean of each saved state's
    prices, bisected from the bound the state reached to ``--top`` µs (rel. tolerance 1e-3, as
    the bound's own bisection): how far those prices prove L1 > Λ."""
    rows = []
    inst = _inst(args.hosts)
    sd = stage_data(inst, True)
    assert sd is not None
    survivors = inst.cluster.num_gpus - len(set(inst.failed_gpus))
    k_max = min(sd.M, survivors // sd.g_mem)
    for f in sorted(Path(args.dir).glob("*.pkl")):
        st = pickle.loads(f.read_bytes())
        if len(st["prices"]) < args.min_rounds:
            continue
        mu = np.mean(st["prices"], axis=0)
        supply, memo = supply_value(sd, mu), {}  # type: ignore[var-annotated]
        lo, top, probes = st["bound"], args.top, 0
        t = time.perf_counter()
        while top - lo > max(1.0, 1e-3 * top):
            mid = (lo + top) // 2
            probes += 1
            if priced_out(sd, mid, mu, supply, k_max, memo):
                lo = mid + 1
            else:
                top = mid
        row = {
            "state": f.name,
            "cut": st["cut"],
            "rounds": len(st["prices"]),
            "bound_s": st["bound"] / 1e6,
            "mean_bound_s": lo / 1e6,
            "probes": probes,
            "took_s": round(time.perf_counter() - t, 2),
            "load": os.getloadavg()[0],
        }
        print(row, flush=True)
        rows.append(row)
    append_rows(OUT, rows, None)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("save")
    s.add_argument("--cuts", default="2.5,3.0,3.5,4.0,0")
    s.add_argument("--dir", required=True)
    s.add_argument("--hosts", type=int, default=32)
    e = sub.add_parser("eval")
    e.add_argument("--dir", required=True)
    e.add_argument("--variant", choices=("mean", "last"), default="mean")
    e.add_argument("--min-rounds", type=int, default=0)
    b = sub.add_parser("bound")
    b.add_argument("--dir", required=True)
    b.add_argument("--hosts", type=int, default=32)
    b.add_argument("--min-rounds", type=int, default=3)
    b.add_argument("--top", type=int, default=12_415_943, help="µs: the plan's L1")
    args = ap.parse_args(argv)
    {"save": save, "eval": evaluate_states, "bound": bound_states}[args.cmd](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
