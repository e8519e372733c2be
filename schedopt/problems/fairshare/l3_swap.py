"""Restarting jobs returned by swaps with one other job each, at the plan's L1 and L2
(formulations/fairshare.md, "Decomposition", the swap step).

After the return step (``l3_return.py``) every GPU type is full, so a restarting job ``A``
that ran on type ``Y`` (its previous hosts) and now runs on ``X`` (or is idle) goes back only
if a job ``B`` leaves ``Y``: to ``X`` on ``A``'s count (the GPUs ``A`` gives back there), or
to idle when ``A`` was idle. Each such pair keeps every type's GPUs; ``A``'s unit gets
``n_p − n_now`` more GPUs and ``B``'s ``n_to − n_B``; L2 changes by
``ΔL2 = (e_Ap − e_A,now) + (e_B,to − e_B,now)``; L3 falls by ``c_A`` (less the host costs).
The jobs not kept that sit on ``A``'s previous hosts are placed again on their own options.

Found by array passes, no LP: across two types with as many GPUs, each direction's *legs*
(returns, valued ``s_A + λ ΔL2``, and moves of jobs that restart nothing, ``λ ΔL2``) are
paired best with best while a pair's value is positive, at the least price ``λ`` of L2 whose
pairs do not lower L2 together (``matched``); then each other restarting job's best partner
by L2 whose unit can give the GPUs (``candidates``); where the L2 gained so far cannot pay
for a partner, idle jobs take the places of movable jobs they beat on L2 (``l3_idle.py``), once.
Each pair is applied on the board and
checked exactly (the touched jobs' L2 and L3 as the validator counts them, every touched
unit at a share of at least t̂) and undone if it fails: the matching's pairs first, most L2
first, then the partners' (those that do not lower L2 first, then by L3 saved per L2 spent),
the L2 gained so far (the bank) never going below 0. The whole plan is then checked: kept
only if its minimum share is at least t̂ and its L3 fell (the pairs' changes add up to the
whole plan's: each is its touched jobs' change); otherwise every pair is undone. So the
plan gets lexicographically better or stays, kept jobs are never moved, and C1–C4 hold as
the board holds them.
Nothing else is claimed (a heuristic: the exchange's LP and MILP, ``l3_exchange.py``, see
more moves, at a cost that does not fit 16,384 GPUs).
Not with hard guarantees or a preemption cap (``decomp`` refuses both). The search for
the pairs is ``l3_pairs.py``; the idle legs are ``l3_idle.py``.
"""

from __future__ import annotations

import time

from .data import JobData
from .l2_repair import COST_TOL, RepairStats
from .l3_idle import Leg, idle_legs
from .l3_pairs import Move, Tables, candidates, matched, pools
from .option_arrays import Arrays, arrays
from .plan import Plan, Saved
from .restore import restarting

#: Fewest seconds the step is started with.
MIN_S = 0.05
#: The step's seconds are counted as CPU time (``time.process_time``), within this many
#: times them of wall (and the caller's ``wall``): at load 3-4 it got half a core in half
#: the runs and stopped at 0.25 s of wall, 4,871-4,987 s of L3 saved against 6,600-7,100.
WALL_X = 2.0
#: Slack on the bank of L2 (sums of e in another order).
BANK_TOL = 1e-12


def swap_returns(
    state: Plan,
    seconds: float,
    out: RepairStats,
    a: Arrays | None = None,
    wall: float | None = None,
) -> RepairStats:
    """The swap step (module docstring) within ``seconds`` of CPU time and at most ``wall``
    (default ``seconds``) or WALL_X times ``seconds`` of wall; its effect added to ``out``
    (``a``: ``l3_bound.arrays(state.data)``, if made already)."""
    started = time.perf_counter()
    end = started + min(WALL_X * seconds, seconds if wall is None else wall)
    cpu_end = time.process_time() + seconds

    def over() -> bool:
        return time.perf_counter() >= end or time.process_time() >= cpu_end

    data = state.data
    inst = data.instance
    if inst.guarantees_hard or inst.max_preemptions is not None or seconds < MIN_S:
        return out
    t_hat = data.min_share([float(g) for g in state.unit_gpus])
    tables = Tables(data, arrays(data) if a is None else a)
    returning = _returning(state)
    by_kind = pools(state)
    journal: list[tuple[list[int], list[Saved]]] = []
    used: set[int] = set()
    on_host: dict[str, set[int]] = {}
    for i, hosts in enumerate(state.hosts):
        for h in hosts:
            on_host.setdefault(h, set()).add(i)
    bank = saved = 0.0  # the L2 the pairs gained and the L3 they saved, so far

    def run(moves: list[Move]) -> bool:
        nonlocal bank, saved
        got = _try(state, moves, t_hat, bank, on_host)
        if got is None:
            return False
        touched, old, delta, less = got
        journal.append((touched, old))
        saved += less
        used.update(touched)
        bank += delta
        return True

    # the pairs across types, those that raise L2 first (the bank), then the others
    pairs_x = matched(state, tables, returning, by_kind) if not over() else []
    for _, moves in sorted(pairs_x, key=lambda p: -p[0]):
        if over():
            break
        if not any(i in used for i, _ in moves):
            run(moves)
    pairs = candidates(state, tables, returning, by_kind, used, end)
    gain = [p for p in pairs if p[1] >= 0.0]
    spend = [p for p in pairs if p[1] < 0.0]
    gain.sort(key=lambda p: (-p[0], -p[1], p[2]))
    spend.sort(key=lambda p: (-p[0] / -p[1], p[2]))
    legs: list[Leg] | None = None
    for _, d_l2, job, other, to in gain + spend:
        if over():
            break
        if legs is None and bank + d_l2 < -BANK_TOL and not {job, other} & used:
            # the bank first short: idle jobs in the places of jobs that move at no restart
            # (l3_idle.py), among the jobs no pair has touched: L2 for the bank
            legs = idle_legs(state, *tables.columns, by_kind, used)
            for _, leg in legs:
                if over():
                    break
                run(leg)
        if job in used or other in used or bank + d_l2 < -BANK_TOL:
            continue
        run([(job, "keep"), (other, to)])
    fair = data.min_share([float(g) for g in state.unit_gpus]) >= t_hat
    # (every pair's L2 and L3 are its touched jobs' change, so their sums are the whole
    # plan's; the bank never went below -BANK_TOL)
    if journal and not (fair and bank >= -BANK_TOL and saved > COST_TOL):
        for touched, old in reversed(journal):
            state.put_back(touched, old)
    elif journal:
        out.neighbourhoods += 1
        out.improved += len(journal)
        out.gained_l2 += bank
        out.saved_l3 += saved
    out.seconds += time.perf_counter() - started
    return out


def _returning(state: Plan) -> list[JobData]:
    """The restarting jobs (``restore.restarting``) whose previous hosts have room beside
    the kept jobs (``f_h − K_h``)."""
    data = state.data
    room = dict(data.free)
    for i, r in enumerate(state.raw):
        if r.keep:
            for h, m in state.hosts[i].items():
                room[h] -= m
    return [j for j in restarting(state) if all(room[h] >= m for h, m in j.prev_hosts.items())]


def _try(
    state: Plan,
    moves: list[Move],
    t_hat: float,
    bank: float,
    on_host: dict[str, set[int]],
) -> tuple[list[int], list[Saved], float, float] | None:
    """The moves applied on the board (the jobs kept first, then the others, then the jobs
    not kept that sat on the kept ones' previous hosts, largest first) and checked (module
    docstring): the jobs touched, how they were, the change of L2 and the L3 saved; or None
    and the plan as it was."""
    data = state.data
    mine = [i for i, _ in moves]
    prev = {h for i, act in moves if act == "keep" for h in data.jobs[i].prev_hosts}
    sitters = sorted({i for h in prev for i in on_host.get(h, ())} - set(mine))
    sitters = [i for i in sitters if not state.raw[i].keep]
    touched = [*mine, *sitters]
    before = state.levels(touched)
    old = state.saved(touched)
    again = [(i, state.raw[i].option) for i in sitters]
    for i in touched:
        state.unset(data.jobs[i])
    ok = all(state.keep(data.jobs[i]) for i, act in moves if act == "keep")
    if ok:
        rest = [(i, act) for i, act in moves if isinstance(act, int)] + again
        rest.sort(key=lambda m: -_gpus(state, *m))
        ok = all(not isinstance(o, int) or state.place(data.jobs[i], o) for i, o in rest)
    if ok:
        after = state.levels(touched)
        d_l2 = after[0] - before[0]
        ok = (
            bank + d_l2 >= -BANK_TOL
            and after[1] <= before[1] + COST_TOL
            and (after[1] < before[1] - COST_TOL or d_l2 > BANK_TOL)
            and all(
                data.units[v].share(state.unit_gpus[v], data.round_s) >= t_hat
                for v in {data.jobs[i].unit for i in touched}
                if data.units[v].included
            )
        )
        if ok:
            for i, (_, was) in zip(touched, old, strict=True):
                for h in was:
                    on_host[h].discard(i)
                for h in state.hosts[i]:
                    on_host.setdefault(h, set()).add(i)
            return touched, old, d_l2, before[1] - after[1]
    state.put_back(touched, old)
    return None


def _gpus(state: Plan, i: int, o: int | str | None) -> int:
    return state.data.jobs[i].options[o].n if isinstance(o, int) else 0


__all__ = ["swap_returns"]
