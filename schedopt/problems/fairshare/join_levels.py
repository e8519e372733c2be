"""The joined plan's lower levels (formulations/fairshare.md, "Decomposition", B2L, B3L): B2L
behind the plan's L1, the L2 neighbourhoods its multipliers guide (``l2_repair.py``), B3L and
B3U behind the repaired plan, then the L3 steps at the plan's L2: running jobs returned as a
set (``l3_return.py``), swaps (``l3_swap.py``), the exchange neighbourhood
(``l3_exchange.py``) and the L3 neighbourhoods, all within the time the join leaves."""

from __future__ import annotations

import time

import numpy as np

from schedopt.core.stopping import Deadline

from .bound import Bounds
from .data import finish_reserve_s
from .l1_fix import l1_settled, need_gpus
from .l2_bound import l2_prices
from .l2_repair import L2_PHASE, RepairStats, repair_l2, repair_l3
from .l3_bound import joint_search_runs, l3_dual
from .l3_exchange import exchange
from .l3_return import return_running
from .l3_swap import swap_returns
from .l3_units import search_reserve_s, unit_search
from .option_arrays import arrays
from .plan import Plan

#: Seconds B2L and B3L may take at most after the join (B3L's whole search: 0.2 s at 4,096
#: GPUs, about 1 s at 16,384 behind the repaired plan's L2, load 5), out of what the join's
#: reserve leaves beyond the finish (not kept back from the parts: at load 5 that starved
#: them, L2 75% under B2 at 16,384 GPUs), and the relative slack on the plan's L2 in its
#: floor (the validator sums the same e_jo in another order).
B3L_MAX_S = 1.25
#: Share of that time B2L (the L2 bound behind the plan's L1) counts as taking (0.225 s), and
#: the most it may take: its steps are counted, not timed (25 take 0.19 CPU s at 16,384 GPUs;
#: 0.225 s of wall cut them on half a core: RESULTS.md, "Fair share: the two regimes").
B2L_SHARE = 0.18
B2L_MAX_S = 0.75
#: Seconds more for B3L on rounds where its joint search runs (at most JOINT_MAX_UNITS
#: counted units): out of what the join leaves, not out of the parts' or the repair's time.
JOINT_EXTRA_S = 1.0
L2_FLOOR_TOL = 1e-9


def l3_stats(
    state: Plan,
    whole: Bounds,
    stop: Deadline,
    repair_s: float = 0.0,
    neighbourhoods: int | None = None,
) -> dict[str, float | str]:
    """B2L (``l2_bound.py``) behind the joined plan's L1, then the L2 neighbourhoods guided by
    its multipliers (``l2_repair.py``), then B3L behind that plan, within B3L_MAX_S and
    ``stop``, then the return step (``l3_return.py``) in the L3 part of the repair's share
    ``repair_s``, the swap step in the time left (it ends at its last pair), the exchange
    neighbourhood (``l3_exchange.py``) in time of its own, and the L3 neighbourhoods in what
    the return step left of the share where the swap step did not run.
    Both bounds are over the allocations at least as fair as the plan (``m_v(t̂)``) and, for
    B3L when t̂ is L1 of the optimum (``l1_settled``), at least its effective throughput.
    ``neighbourhoods`` given (deterministic mode, SolveOptions.deterministic): B2L, B3L and
    B3U each run to their own step limits, the L2 and L3 repairs solve that many
    neighbourhoods each on a budget of nodes (``l2_repair.deterministic_neighbourhoods``),
    ``stop`` only a runaway cap; the L3 steps boxed by the wall clock alone (the return, swap
    and exchange steps) do not run."""
    deterministic = neighbourhoods is not None
    data = state.data
    started = time.perf_counter()
    t_hat = data.min_share([float(g) for g in state.unit_gpus])
    # (not out of the finish kept back once more for solve(): under load it needs it, #16)
    finish = finish_reserve_s(data.instance)
    left = stop.remaining() - finish
    bounds_s = max(0.0, min(B3L_MAX_S, left))
    need, prices = need_gpus(data, t_hat), np.asarray(whole.prices)
    a = arrays(data)  # (once for B2L, the repair and B3L: 0.1 s at 20,000 jobs)
    b2l_started = time.perf_counter()
    b2l_stop = stop if deterministic else Deadline.after(min(B2L_MAX_S, left))
    l2_bound, mu, rho = l2_prices(data, need, prices, b2l_stop, a)
    # (B3L's time as when B2L fits its share: what B2L takes past it is not B3L's)
    over = max(0.0, time.perf_counter() - b2l_started - B2L_SHARE * bounds_s)
    b3l_s = bounds_s - (time.perf_counter() - started) + over
    stats: dict[str, float | str] = {}
    out = RepairStats()
    l3_s = (1.0 - L2_PHASE) * repair_s
    if repair_s > 0.0:
        # the L2 neighbourhoods first (their own time, not B3L's: B3L's floor is the
        # repaired plan's L2), the L3 ones after B3L, filled by its margins
        repair_stop = stop if deterministic else stop.earlier(finish + max(0.0, b3l_s) + l3_s)
        out = repair_l2(
            state,
            mu,
            rho,
            repair_stop,
            repair_s,
            a,
            l2_bound,
            l3=False,
            budget=neighbourhoods,
        )
    left = stop.remaining() - finish - (l3_s if repair_s > 0 else 0.0)
    if joint_search_runs(need, len(data.jobs)):
        # B3L's joint search runs on these rounds only, and needs about 200 steps: under
        # load it was cut (4,096 GPUs at load 4: 76,917, with B3U 77,309, where it reaches
        # 77,517 and B3U 78,174 given the time)
        b3l_s += JOINT_EXTRA_S
    budget = (
        stop
        if deterministic
        else Deadline.after(max(0.0, min(b3l_s, left) - search_reserve_s(len(a.unit))))
    )
    l2 = sum(
        job.options[r.option].eff
        for job, r in zip(data.jobs, state.raw, strict=True)
        if r.option is not None
    )
    settled = l1_settled(data, t_hat, whole.l1)
    floor = l2 - L2_FLOOR_TOL * max(1.0, abs(l2)) if settled else None
    # (a valid bound for the plan the L3 neighbourhoods make too: it bounds L3*, and its
    # floor is a feasible plan's L2 at t̂ = L1*, formulations/fairshare.md, B3L Claim 1)
    dual = l3_dual(data, need, floor, prices, budget, a, deterministic)
    # B3U at B3L's (λ, μ) and along their ray, after B3L's search (not out of its time)
    b3u = unit_search(a, need, floor, dual.lam, dual.mu, stop.earlier(finish), deterministic)
    value = max(dual.value, b3u)
    if repair_s > 0.0 and deterministic:
        repair_l3(state, dual, stop, 0.0, out, a, budget=neighbourhoods)
        stats.update(out.as_stats())
    elif repair_s > 0.0:
        # running jobs returned as a set first (l3_return.py), then the L3 neighbourhoods in
        # what is left of their share
        l3_stop = stop.earlier(finish)
        back = return_running(state, max(0.0, min(l3_s, l3_stop.remaining())), RepairStats())
        # restarting jobs returned by swaps with one other job each (l3_swap.py), in all the
        # time left: the step ends at its last pair (its array passes and about 0.2 ms a
        # pair; 0.15-0.25 CPU s at 16,384 GPUs); a fixed 0.25 CPU s cut it in about half
        # the runs with 3-5 s of the limit unused (L3 gap 0.87% -> 1.55%: RESULTS.md,
        # "Fair share 16,384's L3 step"). The L3 neighbourhoods only where it did not run
        # (after it never kept); the exchange in what it leaves.
        swap_s = max(0.0, l3_stop.remaining())
        swap = swap_returns(state, swap_s, RepairStats(), a, swap_s)
        # other jobs' moves beside the returns (l3_exchange.py), where the time left covers
        # its LP (at 16,384 GPUs 2 s: its LP alone took 1.8-2.3 s), in time of its own
        moved = exchange(state, l3_stop.remaining(), RepairStats())  # (it checks it fits)
        repair_l3(state, dual, l3_stop, 0.0 if swap.seconds else l3_s - back.seconds, out, a)
        stats.update(out.as_stats())
        stats["l3_return_saved"] = round(back.saved_l3, 3)
        stats["l3_return_s"] = round(back.seconds, 3)
        stats["l3_swap_saved"] = round(swap.saved_l3, 3)
        stats["l3_swap_s"] = round(swap.seconds, 3)
        stats["l3_exchange_saved"] = round(moved.saved_l3, 3)
        stats["l3_exchange_s"] = round(moved.seconds, 3)
    return {
        **stats,
        "L2_bound": min(whole.l2, l2_bound),
        "L3_bound": max(whole.l3, value),
        "L3_bound_s": round(time.perf_counter() - started, 3),
        "L3_bound_rows": "L1 fix, L2 floor" if settled else "L1 fix",
    }


__all__ = ["l3_stats"]
