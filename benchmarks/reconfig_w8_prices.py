"""W8's plan against where the bound stopped (#17; RESULTS.md, "Reconfig at 256 GPUs: W8 at
the mean of the bound's prices"): the bound's state (its columns, its prices, the bound
reached) saved after a cut, then W8 from each state with no deadline.

Not a ``schedopt bench`` suite. On ``generate_custom(32, 8, 'llama2-70b', 512, 16, 16,
seed=0)``, with the template plan's L1 (17.3428 s) as the bound's upper end:

- ``save --cuts 2.5,3.0,3.5,4.0,0 --dir D``: ``priced_bound_us`` with each deadline (0: none,
  converged), its ``Gathered`` (pool, prices) and bound pickled under D, the load recorded;
- ``eval --dir D --variant mean|last``: ``branch.branched`` from each saved state (``mean``:
  every row priced at the mean of the bound's prices, then its last two, as shipped; ``last``:
  at its last three, newest first, as main c5bbed6 did), its plan checked by the validator;
  rows to benchmarks/results/reconfig_w8_prices.jsonl.
"""

from __future__ import annotations

import argparse
import os
import pickle
import time
from pathlib import Path

from common import append_rows

import schedopt.problems.reconfig.branch as branch
from schedopt.core.stopping import Deadline
from schedopt.problems.reconfig.chains import _plan
from schedopt.problems.reconfig.design import Partitioner
from schedopt.problems.reconfig.generate import generate_custom
from schedopt.problems.reconfig.price_bound import Gathered, priced_bound_us
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
        if st["hosts"] not in cache:
            inst = _inst(st["hosts"])
            cache[st["hosts"]] = (inst, stage_data(inst, True), Partitioner(inst))
        inst, sd, part = cache[st["hosts"]]
        pool = dict.fromkeys(st["pool"])
        t = time.perf_counter()
        if args.variant == "last":  # main c5bbed6: the bound's last three prices, newest first
            branch.w8_prices = lambda prices: prices[::-1][:3]
        chains = branch.branched(sd, part, pool, st["prices"], st["bound"], None)
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
    args = ap.parse_args(argv)
    save(args) if args.cmd == "save" else evaluate_states(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
