"""W8: a plan from the bound's own columns, price-and-branch (formulations/reconfig.md, W8;
#17 item 3). The bound's master (Q8′, Q10) gathers pipeline columns and prices near the bound;
here the cheapest type sequence of every (depth, row of capacities) at those prices is added
(the LP's pricing keeps only the best few by reduced value, an integer selection wants others),
and the master with integer pipelines and hosts, each column credited Q1–Q3's micro-batches at
a target, is solved once. Its pipelines are realised on the hosts of its packings, split per
stage (W2), and the micro-batches handed out by min-max. A heuristic: the credit is the
bound's (optimistic in the all-reduce), so the validator's L1 decides."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from schedopt.core.stopping import Deadline

from .budgets import phase_deadline
from .columns import Columns
from .design import Chain, Partitioner
from .dw_prices import _credit
from .master import solve_master
from .pricing import _caps, _least_cost, cheapest_types, unique_rows
from .stage_bound import StageData

#: The targets whose rows are priced for columns: the bound reached and steps of this much
#: above it (#17: at 256 GPUs the plan of 12.416 s took a column priced 0.25% above).
STEPS = (0.0, 0.0025, 0.005, 0.0075, 0.01)
#: The integer master's target, this much above the bound reached (its credit is optimistic,
#: so a target at the bound still gives plans above it; RESULTS.md, #17).
TARGET = 0.01
#: Every row is priced first at the mean of all the bound's prices, then at its last this many,
#: newest first. The last prices alone follow where the bound's deadline cut its column
#: generation: at 256 GPUs, from states whose bound stopped at 12.271 / 12.283 s (3-4 rounds)
#: the last three gave 12.436 s, from 12.2956 s 12.416 s; the mean and the last two give
#: 12.416 s from all of them (10 states with 3-5 rounds, load 1-4.5), for the same three
#: pricings (RESULTS.md, "Reconfig at 256 GPUs: W8 at the mean of the bound's prices", #17).
PRICES = 2
#: The pricing's share of W8's time; the integer master keeps the rest.
PRICING_SHARE = 0.6
#: The integer master keeps the columns of reduced value (credit less the LP's prices of its
#: groups) at least this: at 256 GPUs 126 of 2,350 columns, the same plan (12.416 s) in 0.2 s
#: where all of them took 2.5 s; at -1 (49 columns) 12.436 s (RESULTS.md, #17).
REDUCED_MIN = -3.0


def every_count(
    sd: StageData,
    lams: Sequence[int],
    mu: np.ndarray,
    pool: dict[tuple[int, ...], None],
    deadline: Deadline | None = None,
) -> int:
    """The cheapest type sequence of every (depth, row of capacities) under any of ``lams`` at
    prices ``mu`` added to ``pool``; how many were new. A row's cheapest sequence depends on
    the row and the prices only, so the rows of all targets are pooled and priced once (the
    targets' rows overlap: at 256 GPUs 8,630 rows over five targets, 2,926 distinct)."""
    fresh = 0
    for p in sd.depths:
        if deadline is not None and deadline.expired():
            break
        rows = [found[1] for lam in lams if (found := _caps(sd, p, lam)) is not None]
        if not rows:
            continue
        flat, _ = unique_rows(np.concatenate(rows))  # (each target's rows run in m)
        caps = flat.reshape(len(flat), p, -1)
        _, arg = _least_cost(sd, mu, caps, keep=True)
        assert arg is not None
        for seq in map(tuple, cheapest_types(sd, caps, arg, np.arange(len(caps))).tolist()):
            if seq not in pool:
                pool[seq] = None
                fresh += 1
    return fresh


def integer_master(
    sd: StageData,
    part: Partitioner,
    seqs: list[tuple[int, ...]],
    lam: int,
    deadline: Deadline | None,
    nodes: int | None = None,
) -> list[Chain] | None:
    """The master over ``seqs`` and the hosts' packings with integer pipelines and hosts, the
    most micro-batches Q1–Q3 credit under ``lam``, realised on concrete hosts (W7's
    realisation) and split (W2): the chains, or None. ``nodes``: its MIP's node budget."""
    values = np.array(_credit(sd, seqs, lam), float)
    at = np.flatnonzero(values >= 1)
    if not len(at):
        return None
    need = np.zeros((len(at), len(sd.types)))
    for i, j in enumerate(at):
        np.add.at(need[i], list(seqs[j]), 1.0)
    # the master's LP first: only columns of reduced value >= REDUCED_MIN go to the MIP
    _, _, mu = solve_master(values[at], need, sd.types, sd.classes, False, None, deadline)
    if mu is not None:
        near = values[at] - need @ mu >= REDUCED_MIN
        at, need = at[near], need[near]
    _, y, _ = solve_master(
        values[at], need, sd.types, sd.classes, True, None, deadline, max_nodes=nodes
    )
    if y is None:  # (a MIP cut short by the deadline gives its incumbent)
        return None
    x = np.rint(y[: len(at)]).astype(int)
    pools = Columns(sd, part, None).realise(np.rint(y[len(at) :]).astype(int))
    chains = []
    for j, n in zip(at, x, strict=True):
        for _ in range(int(n)):
            if any(not pools.get(k) for k in seqs[j]):
                return None  # a packing not realised on its hosts (it cannot happen)
            ch = part.chain([pools[k].pop() for k in seqs[j]])
            if ch is not None:
                chains.append(ch)
    return chains or None


def w8_prices(prices: list[np.ndarray]) -> list[np.ndarray]:
    """The prices W8 prices every row at, in order: the mean of all the bound's ``prices`` (a
    centre of its dual iterates, less sensitive to where the bound stopped than any one of
    them; any μ ≥ 0 proposes columns, nothing here is a proof), then the last PRICES of
    them, newest first."""
    if not prices:
        return []
    return [np.mean(prices, axis=0), *prices[::-1][:PRICES]]


def branched(
    sd: StageData,
    part: Partitioner,
    pool: dict[tuple[int, ...], None],
    prices: list[np.ndarray],
    lower: int,
    deadline: Deadline | None,
    nodes: int | None = None,
) -> list[Chain] | None:
    """W8: ``pool`` (the bound's columns) with every (depth, row) priced at the mean of the
    bound's ``prices``, then at its last PRICES newest first (``w8_prices``), at targets
    STEPS above ``lower`` (the bound reached), in at most PRICING_SHARE of the time; then the
    integer master at TARGET above it. ``nodes`` (deterministic mode): the master's node
    budget, and the pricing takes no share of ``deadline`` (the runaway cap): every price."""
    pool = dict(pool)
    lams = [int(lower * (1 + step)) for step in STEPS]
    pricing = phase_deadline(deadline, PRICING_SHARE, nodes is not None)
    for mu in w8_prices(prices):
        if pricing is not None and pricing.expired():
            break
        every_count(sd, lams, mu, pool, pricing)
    return integer_master(sd, part, sorted(pool), int(lower * (1 + TARGET)), deadline, nodes)
