"""``decomp:physical``'s budgets of work in deterministic mode (SolveOptions.deterministic;
formulations/reconfig.md, "Deterministic mode"; #17): what the wall-clock shares of its
widening (W6-W8) become, fixed by the limit alone, so that a run gives the same plan, bound
and stats on any machine at any load; the wall clock is then only the runaway cap."""

from __future__ import annotations

import math
from dataclasses import dataclass

from schedopt.core.stopping import Deadline, deterministic_nodes

#: W7's targets (a pricing and one MILP each) per second of the limit, and at least
#: MIN_TARGETS: at 10 s the wall-clock mode tried 11 at 256 and at 1,024 GPUs (quiet), and at
#: 1,024 GPUs the plan it keeps (5.0833 s) comes at the sixth.
TARGETS_PER_S = 1.0
MIN_TARGETS = 2
#: W6's target pipe times (``physical.TARGETS``, in that order, each designed both ways of
#: cutting the hosts, W1; no finer pass) per second of the limit, at least one: a design
#: takes 0.6 s at 1,024 GPUs, and all 24 took 14 s there (10 s at 256) without a plan as
#: good as W7's or W8's.
DESIGNS_PER_S = 0.2
#: The share of the limit widening is deemed to have (for W8's rule, ``physical.
#: _branch_fits``): what the wall-clock mode leaves it, TEMPLATE_SHARE and BOUND_SHARE
#: taken (decomp.py): 4.5 s at 10 s, where W8 runs on up to 512 GPUs as it does there.
WIDEN_OF_LIMIT = 0.75 * 0.6


@dataclass(frozen=True)
class Work:
    """Widening's budgets (``physical.widen``): ``targets`` W7 tries in all, ``nodes`` for each
    MILP (W7's and W8's integer master), ``designs`` W6's target pipe times, ``widen_s`` the
    seconds W8's rule reads in place of the time left."""

    targets: int
    nodes: int
    designs: int
    widen_s: float


def work_of(time_limit_s: float) -> Work:
    """The budgets of a deterministic run with limit ``time_limit_s``."""
    return Work(
        targets=max(MIN_TARGETS, round(TARGETS_PER_S * time_limit_s)),
        nodes=deterministic_nodes(time_limit_s),
        designs=max(1, math.ceil(DESIGNS_PER_S * time_limit_s)),
        widen_s=WIDEN_OF_LIMIT * time_limit_s,
    )


def phase_deadline(
    deadline: Deadline | None, fraction: float, deterministic: bool
) -> Deadline | None:
    """A phase's deadline: ``fraction`` of the time left before ``deadline``, from now; in
    deterministic mode ``deadline`` itself, the runaway cap (the phase ends on its work)."""
    if deadline is None or deterministic:
        return deadline
    return deadline.earlier(deadline.share(1 - fraction))
