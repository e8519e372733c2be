"""Is fair share's L3 gap the plan or the bound? (issue #17). A one-off investigation, not a
suite: the monolithic MILP at 4,096 GPUs × 5,000 jobs given minutes per level, beside
``decomp``'s 10 s plan and its bound B3L, one JSON line per stage.

    python benchmarks/fairshare_l3_truth.py [SECONDS_PER_MIP] [GPUS TENANTS JOBS SEED]

Stages, all with L1 held at the plan's (proven) value as the exact models hold it (every
counted unit at least the whole GPUs ``m_v`` that keep it there):
- ``lp_l2``: the LP's largest L2 (an upper bound on L2*);
- ``mip_l2``: the MILP's largest L2 from the plan (incumbent ℓ, bound u: ℓ ≤ L2* ≤ u);
- ``mip_l3_plan_floor``: min L3 with L2 ≥ the plan's L2 (the rows B3L relaxes): its bound is
  the best any relaxation of those rows can reach, its incumbent what a plan can reach there;
- ``lp_l3_*``: the LP relaxation of the same two (what B3L's Lagrangian can reach at best);
- ``mip_l3_at_l2``: min L3 with L2 ≥ ℓ (1 − 10⁻⁶), ℓ the best L2 found: L3 near the
  lexicographic optimum.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

import schedopt
from schedopt.core.options import SolveOptions
from schedopt.model.emit_highs import HighsSession
from schedopt.model.lp_bound import relax, solve_relaxation
from schedopt.model.terms import RowBlock
from schedopt.problems.fairshare import generate_custom
from schedopt.problems.fairshare.codec import encode
from schedopt.problems.fairshare.data import build_data
from schedopt.problems.fairshare.exact import fix_min_share
from schedopt.problems.fairshare.model import build_model
from schedopt.problems.fairshare.placement import raw_from_solution


def floor_block(expr, lo: float) -> RowBlock:  # type: ignore[no-untyped-def]
    return RowBlock(
        "floor",
        np.array([0, len(expr.cols)]),
        np.asarray(expr.cols),
        np.asarray(expr.coefs, dtype=np.float64),
        np.array([lo - expr.constant]),
        np.array([np.inf]),
    )


def emit(stage: str, **kw: object) -> None:
    print(json.dumps({"stage": stage, "load": round(os.getloadavg()[0], 2), **kw}), flush=True)


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 300.0
    gpus, tenants, jobs, seed = (int(a) for a in (sys.argv[2:6] or [4096, 100, 5000, 0]))
    inst = generate_custom(gpus=gpus, tenants=tenants, jobs=jobs, seed=seed)
    r = schedopt.solve(inst, "decomp", time_limit_s=10)
    l1, l2p, l3p = r.objectives
    emit(
        "decomp",
        L1=l1,
        L2=l2p,
        L3=l3p,
        B1=r.best_bound,
        B2=r.stats.get("L2_bound"),
        B3L=r.stats.get("L3_bound"),
        rows=r.stats.get("L3_bound_rows"),
    )
    data = build_data(inst, check_size=False)
    fm = build_model(data)
    _, lv2, lv3 = fm.model.levels
    hint = encode(fm, raw_from_solution(data, r.solution))
    opts = SolveOptions(time_limit_s=seconds, mip_gap=1e-7)
    # L1 held as the exact models hold it (and as B3L's R1): g_v >= m_v(t) in whole GPUs, so
    # that the LPs below are over the rows B3L relaxes, not over fractional GPUs per unit
    fm.model.blocks.append(fix_min_share(fm, hint))

    rel = relax(fm.model, lv2.expr, lv2.sense)
    lp = solve_relaxation(rel, seconds)
    emit("lp_l2", bound=lp.bound, solved=lp.solved, s=round(lp.seconds, 2))

    def mip(stage: str, level, floors: list[RowBlock]) -> object:  # type: ignore[no-untyped-def]
        s = HighsSession(fm.model)
        for b in floors:
            s.add_block(b)
        s.set_level(level)
        s.set_hint(hint)
        t0 = time.perf_counter()
        run = s.run(seconds, opts)
        emit(
            stage,
            status=run.status.value,
            incumbent=run.objective,
            bound=run.bound,
            s=round(time.perf_counter() - t0, 1),
            nodes=run.stats.get("mip_nodes"),
        )
        return run

    best = mip("mip_l2", lv2, [])
    ell = best.objective if best.objective is not None else l2p
    floor_plan = floor_block(lv2.expr, l2p * (1 - 1e-9))
    mip("mip_l3_plan_floor", lv3, [floor_plan])

    def lp_l3(stage: str, floor: float) -> None:
        rel3 = relax(
            fm.model,
            lv3.expr,
            lv3.sense,
            [(lv2.expr, floor, np.inf)],
        )
        lp3 = solve_relaxation(rel3, seconds)
        # (relax drops L3's constant and negates a minimum: L3 >= constant - bound)
        low = None if lp3.bound is None else lv3.expr.constant - lp3.bound
        emit(stage, bound=low, floor=floor, s=round(lp3.seconds, 2))

    lp_l3("lp_l3_plan_floor", l2p * (1 - 1e-9))
    lp_l3("lp_l3_at_l2", ell * (1 - 1e-6))
    if ell > l2p:
        mip("mip_l3_at_l2", lv3, [floor_block(lv2.expr, ell * (1 - 1e-6))])


if __name__ == "__main__":
    main()
