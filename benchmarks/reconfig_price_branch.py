"""Price-and-branch at 256 GPUs (#17; RESULTS.md, "Reconfig at 256 GPUs: the integer master
over Q10's columns ..."): do whole pipelines on whole hosts hold M near 12.42 s?

Not a ``schedopt bench`` suite. On ``generate_custom(32, 8, 'llama2-70b', 512, 16, 16,
seed=0)``: Q8′'s first prices, then Q10's master (``dw_prices``, no deadline, every
micro-batch count priced) at each ``--gather`` probe, the type sequences kept from one probe to
the next (the bound's own columns); with ``--every``, also the cheapest sequence of every
(depth, row of capacities) at each probe's final prices (columns an integer selection may
want; the LP's pricing adds only the best few by reduced value; ``branch.every_count``).
Then, at each ``--probes`` target, over those columns and the hosts' packings:

- ``lp``: the master LP with Q10's credit (Q1–Q3 under Λ, the all-reduce ``α_p``);
- ``ip``: the same master with integer pipelines and hosts (HiGHS MIP, no time limit): the
  most micro-batches whole pipelines on whole hosts hold (with ``--capped``, capped at M),
  its pipelines realised on the hosts of its packings (W7's realisation), split (W2), the
  micro-batches by min-max, checked by the validator (``ip_valid``, ``ip_l1`` in s);
- ``w7``: W7's MILP over the same columns (W2's split, each column's own all-reduce, the
  plan's largest all-reduce as a level), its plan realised on the hosts, checked by the
  validator and evaluated (L1 in s), with no pricing of W7's own (``columns.ROUNDS = 0``).

A heuristic question (a restricted master proves nothing); rows go to
benchmarks/results/reconfig_price_branch.jsonl.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import append_rows

import schedopt.problems.reconfig.columns as columns_mod
from schedopt.problems.reconfig.branch import every_count
from schedopt.problems.reconfig.chains import _plan
from schedopt.problems.reconfig.columns import Columns
from schedopt.problems.reconfig.design import Partitioner
from schedopt.problems.reconfig.dw_prices import _credit, dw_prices
from schedopt.problems.reconfig.generate import generate_custom
from schedopt.problems.reconfig.master import solve_master
from schedopt.problems.reconfig.price_bound import column_prices
from schedopt.problems.reconfig.stage_bound import stage_data
from schedopt.problems.reconfig.validate import evaluate, validate

OUT = "reconfig_price_branch"


def _need(sd, seqs: list[tuple[int, ...]]) -> np.ndarray:
    need = np.zeros((len(seqs), len(sd.types)))
    for i, q in enumerate(seqs):
        np.add.at(need[i], list(q), 1.0)
    return need


def realised(inst, sd, part, seqs, x: np.ndarray, g: np.ndarray) -> tuple[bool, float] | None:
    """The integer master's pipelines (``x`` copies of each of ``seqs``) on the hosts of its
    packings ``g`` (W7's realisation), split (W2), the micro-batches by min-max: (valid, L1)."""
    cols = Columns(sd, part, None, set())
    pools = cols.realise(g)
    chains = []
    for q, n in zip(seqs, x, strict=True):
        for _ in range(int(n)):
            if any(not pools.get(j) for j in q):
                return None
            ch = part.chain([pools[j].pop() for j in q])
            if ch is not None:
                chains.append(ch)
    plan = _plan(inst, chains) if chains else None
    if plan is None:
        return None
    return not validate(inst, plan), evaluate(inst, plan)[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gather", default="12.30,12.33,12.36,12.40,12.42,12.45")
    ap.add_argument("--probes", default="12.30,12.35,12.40,12.42,12.45,12.47,12.49")
    ap.add_argument("--hosts", type=int, default=32)
    ap.add_argument("--capped", action="store_true", help="the integer master capped at M")
    ap.add_argument("--every", action="store_true", help="every (depth, m) at each probe's prices")
    args = ap.parse_args(argv)
    inst = generate_custom(args.hosts, 8, "llama2-70b", 512, 16, 16, seed=0)
    sd = stage_data(inst, True)
    assert sd is not None
    part = Partitioner(inst)
    survivors = inst.cluster.num_gpus - len(set(inst.failed_gpus))
    k_max = min(sd.M, survivors // sd.g_mem)
    gather = [round(float(x) * 1e6) for x in args.gather.split(",")]
    pool: dict[tuple[int, ...], None] = {}
    t = time.perf_counter()
    column_prices(sd, gather[0], None, pool)
    print(f"Q8' at {gather[0] / 1e6:.3f}: {len(pool)} columns, {time.perf_counter() - t:.1f} s")
    rows = []
    for lam in gather:
        t = time.perf_counter()
        mu, ended = dw_prices(sd, lam, None, pool, k_max)
        if args.every and mu is not None:
            every_count(sd, lam, mu, pool)
        print(
            f"Q10 at {lam / 1e6:.3f}: ended {ended}, {len(pool)} columns, "
            f"{time.perf_counter() - t:.1f} s"
        )
    seqs = sorted(pool)
    need = _need(sd, seqs)
    columns_mod.ROUNDS = 0  # W7's MILP over the bound's columns alone
    for lam in (round(float(x) * 1e6) for x in args.probes.split(",")):
        row: dict[str, object] = {
            "hosts": args.hosts,
            "probe_s": lam / 1e6,
            "columns": len(seqs),
            "load": os.getloadavg()[0],
        }
        values = np.array(_credit(sd, seqs, lam), float)
        keep = values >= 1
        t = time.perf_counter()
        lp, _, _ = solve_master(values[keep], need[keep], sd.types, sd.classes, False, None, None)
        row["lp"] = round(lp, 3)
        cap = float(sd.M) if args.capped else None
        ip, y, _ = solve_master(values[keep], need[keep], sd.types, sd.classes, True, cap, None)
        row["ip"] = round(ip, 3)
        row["ip_s"] = round(time.perf_counter() - t, 2)
        if y is not None:
            at = np.flatnonzero(keep)
            x = np.rint(y[: len(at)]).astype(int)
            g = np.rint(y[len(at) :]).astype(int)  # the hosts
            row["ip_pipelines"] = int(x.sum())
            got = realised(inst, sd, part, [seqs[i] for i in at], x, g)
            if got is not None:
                row["ip_valid"], row["ip_l1"] = got
            row["ip_seqs"] = [
                [sd.types[j] for j in seqs[i]] for i, n in zip(at, x, strict=True) for _ in range(n)
            ]
        t = time.perf_counter()
        cols = Columns(sd, part, None, set(seqs))
        chains = cols.plan(lam, None)  # six levels of the all-reduce ("free")
        plan = _plan(inst, chains) if chains else None
        if plan is not None:
            bad = validate(inst, plan)
            row["w7_valid"] = not bad
            row["w7_l1"] = evaluate(inst, plan)[0]
            row["w7_pipelines"] = len(plan.pipelines)
        else:
            row["w7_valid"] = None
        row["w7_s"] = round(time.perf_counter() - t, 2)
        print(row, flush=True)
        rows.append(row)
    append_rows(OUT, rows, argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
