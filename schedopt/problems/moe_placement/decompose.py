"""``decomp:layer``: decomposition by layer ("Decomposition by layer" in
``formulations/moe_placement.md``), structured partition → solve part → join/repair → bound:

1. identical GPUs: replica budgets from the bound's exact split, each layer in bins
   (``layer_bins.py``), the bins joined onto the GPUs;
2. any shape: every layer's own model with the best plan's memory per GPU fixed
   (``layer_parts.py``; :func:`solve_part`, module-level with picklable input), joined and
   repaired (:func:`join`);
3. the local search across layers in the time left; never worse than the hint.

The parts of 1 and 2 are :class:`~schedopt.executor.Task` objects run on the executor that
``params`` names, as for every decomposition (``{"executor": "process", "workers": k}``;
``schedopt.model.decompose.executor_choice``; inline by default), one pool for both rounds,
so its workers start once; each part's :class:`~schedopt.model.decompose.Budget` is its share
of the parts' time, ending by their deadline whatever the workers' start-up took.

The bound is the whole instance's (``ModelData.lower_bound``, and the exact split of the replica
slots when it fits the time): per-layer bounds with the memory coupling relaxed, valid whatever
memory the parts were given; a part's own bound (memory fixed) is never used.

A part solves the layer's model (model.py on one layer) with HiGHS twice at most: first on its
replicas (the token shares' LP, at once), then, when the layer's full model can be built in a
quarter of its time, over every GPU of its group with the memory fixed, warm-started.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from schedopt.backends.first_import import HIGHS, solver_in_time
from schedopt.core.gates import first_import_deadline
from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, runaway_cap_s
from schedopt.executor import Executor, Task
from schedopt.model import solve_levels
from schedopt.model.decompose import Budget, budgets, open_executor, run_parts

from .codec import decode, encode
from .data import BUILD_S_PER_VARIABLE, LEX_REL_TOL, ModelData, Plan, build_data
from .exact import MoeHooks
from .heuristics import EplbParams, LocalSearchParams, improve, run_eplb
from .instance import MoePlacementInstance
from .layer_bins import bins_round, identical_slots
from .layer_parts import LayerPart, pack_layer, partition, warm_memory
from .model import build_model
from .warmstart import better_of, hint_plan

#: The exact split of the replica slots (bound and budgets) may have this many cells (about
#: 0.5 s at DeepSeek-V3's 58 layers of 256 experts on 256 GPUs).
SPLIT_CELLS = 200_000_000
#: The split's table may take this share of the time left (then the Lagrangian stands in).
SPLIT_TIME_SHARE = 0.4
#: Share of the time left that the bins round may take at most (it needs far less, but a
#: round cut short is lost whole: 14.8% instead of 0.001% under auto at 6 s, load 11).
BINS_SHARE = 0.8
#: Share of the time left that the parts get; the rest goes to the cross-layer local search
#: (its trades move memory between layers) and the finish.
PARTS_SHARE = 0.6
#: The finish keeps back this many times one measured conversion of a plan to a solution
#: (the answer's conversion, two evaluations to compare it with the hint, and the validation
#: solve() runs after; each costs about one conversion).
FINISH_CONVERSIONS = 5
#: A part tries its layer's full model only when building it is estimated below this share of
#: the part's time.
FULL_MODEL_BUILD_SHARE = 0.25
#: Levels a part solves: L3 (GPUs used) is not a sum over layers, and a part never uses a GPU
#: its memory does not give it, so it is left to the whole.
PART_LEVELS = ("L1", "W", "L2", "L4")


#: ``auto`` runs ``decomp:layer`` instead of the whole model past this many variables (2 x, f
#: per layer, expert and GPU). OLMoE's 16 layers x 64 experts on 16 GPUs (32,768): the whole
#: model gave 3.4% in 3 s, the decomposition 0.02% in 5 s; the whole model still proves the small
#: golden instances optimal.
AUTO_DECOMPOSE_VARIABLES = 20_000


def auto_route(inst: MoePlacementInstance) -> str:
    """The exact method ``auto`` runs: ``decomp:layer`` past AUTO_DECOMPOSE_VARIABLES, from
    the instance's size alone (nothing is built)."""
    gpus = len(inst.cluster.gpus())
    variables = 2 * gpus * sum(len(layer.experts) for layer in inst.layers)
    return "decomp:layer" if variables > AUTO_DECOMPOSE_VARIABLES else "milp:highs"


@dataclass(frozen=True)
class PartInput:
    """Everything a part needs, picklable: the layer's data (one layer on its group's GPUs,
    memory fixed), the part, and its time."""

    sub: ModelData
    part: LayerPart
    budget: Budget
    seed: int = 0
    #: Deterministic mode (SolveOptions.deterministic): the part's share of the limit, which
    #: sizes its HiGHS runs' node budgets and picks its stages; ``budget`` is then only the
    #: runaway cap. None: the part follows ``budget``.
    work_s: float | None = None


@dataclass(frozen=True)
class PartAnswer:
    layer: int
    x: np.ndarray  # (E, G_k) over part.gpus
    f: np.ndarray
    load_us: float  # the layer's max GPU load
    how: str  # "greedy", "graph", "full" or "warm"


def layer_data(data: ModelData, part: LayerPart) -> ModelData:
    """Layer ``part.layer`` alone on its GPUs, with the part's memory as the GPUs' capacity.
    The instance is not carried (the parts read arrays only, and a worker need not receive it)."""
    i, g = part.layer, part.gpus
    return dataclasses.replace(
        data,
        instance=cast(MoePlacementInstance, None),
        gpu_ids=tuple(data.gpu_ids[int(k)] for k in g),
        cap=part.cap.copy(),
        speed=data.speed[g],
        host=data.host[g],
        group=np.zeros(len(g), dtype=np.int64),
        n_groups=1,
        mem=(data.mem[i],),
        pop=(data.pop[i],),
        cpt=(data.cpt[i],),
        comm=data.comm[g],
        eligible=(data.eligible[i][:, g] & (data.mem[i][:, None] <= part.cap[None, :] + 1e-9),),
        current=None if data.current is None else (data.current[i][:, g],),
        extra_memory_gib=part.extra_gib,
        hierarchical=False,
    )


def _max_load(sub: ModelData, x: np.ndarray, f: np.ndarray) -> float:
    return float(sub.layer_loads(Plan([x], [f]), 0).max())


def _solve_model(
    sub: ModelData, start: Plan, seconds: float, seed: int, deterministic: bool = False
) -> Plan | None:
    """The layer's model (model.py on ``sub``) by HiGHS from ``start``; its best point.
    ``deterministic``: ``seconds`` is work (each level's node budget, emit_highs.py), the
    wall clock only the runaway cap."""
    from schedopt.model.emit_highs import HighsSession  # on first use (highspy)

    deadline = Deadline.after(runaway_cap_s(seconds) if deterministic else seconds)
    mm = build_model(sub, deadline)
    mm.model.levels[:] = [lv for lv in mm.model.levels if lv.name in PART_LEVELS]
    session = HighsSession(mm.model)
    try:
        options = SolveOptions(
            time_limit_s=max(seconds, 0.01), seed=seed, deterministic=deterministic
        )
        lex = solve_levels(
            mm.model, session, options, deadline, MoeHooks(mm, 0.0), encode(mm, start)
        )
    finally:
        session.close()
    return None if lex.values is None else decode(mm, lex.values)


def solve_part(inp: PartInput) -> PartAnswer | None:
    """Solve one layer (module docstring); None when not even the greedy fits its memory."""
    started = time.perf_counter()
    end = started + inp.budget.deadline().remaining()
    work = inp.work_s  # deterministic mode: the part's work, not the clock (PartInput)
    sub, part = inp.sub, inp.part
    packed = pack_layer(
        sub.work(0),
        sub.mem[0],
        sub.speed,
        sub.cap,
        sub.eligible[0],
        sub.replica_cap,
        part.extra_gib,
    )
    best: PartAnswer | None = None
    for how, xf in (("warm", part.warm), ("greedy", packed)):
        if xf is not None:
            z = _max_load(sub, *xf)
            if best is None or z < best.load_us:
                best = PartAnswer(part.layer, xf[0], xf[1], z, how)
    if best is None:
        return None
    stages = [
        ("graph", dataclasses.replace(sub, eligible=(sub.eligible[0] & best.x,), symmetric=False))
    ]
    full_build = sub.num_variables * BUILD_S_PER_VARIABLE
    if full_build < FULL_MODEL_BUILD_SHARE * (end - started if work is None else work):
        stages.append(("full", sub))
    for k, (how, model_data) in enumerate(stages):
        if work is None:
            seconds = (end - time.perf_counter()) / (len(stages) - k)
        else:  # an equal share of the work each, whatever the clock says
            seconds = work / len(stages)
        if seconds < 0.02 or (work is not None and time.perf_counter() >= end):
            break
        # HiGHS's first import within the part's time, else the greedy answer stands
        # (deterministic mode: not gated, the run must not depend on the clock)
        if not solver_in_time(HIGHS, first_import_deadline(Deadline(end), work is not None)):
            break
        start = Plan([best.x], [best.f])
        plan = _solve_model(model_data, start, seconds, inp.seed, work is not None)
        if plan is None or not plan.x[0].any(axis=1).all():
            continue
        f = plan.f[0] / np.maximum(plan.f[0].sum(axis=1, keepdims=True), 1e-300)
        z = _max_load(sub, plan.x[0], f)
        # the model's level 1 is optimal over a space holding its start, so an equal load
        # is kept too: its lower levels (L2, L4) were optimised after it
        if z <= best.load_us * (1 + LEX_REL_TOL):
            best = PartAnswer(part.layer, plan.x[0], f, z, how)
    return best


def join(data: ModelData, parts: list[LayerPart], answers: dict[int, PartAnswer]) -> Plan | None:
    """The layers' answers as one plan. Repair: a layer without an answer (its part ran out
    of time or failed) gets the greedy within its memory here; the plan is checked against
    memory per GPU (C1), extra memory (C6) and the replica cap (C5); None if it fails them."""
    plan = data.empty_plan()
    for part in parts:
        i = part.layer
        ans = answers.get(i)
        if ans is None:
            sub = layer_data(data, part)
            xf = part.warm or pack_layer(
                sub.work(0), sub.mem[0], sub.speed, sub.cap, sub.eligible[0],
                sub.replica_cap, part.extra_gib,
            )  # fmt: skip
            if xf is None:
                return None
            ans = PartAnswer(i, xf[0], xf[1], 0.0, "repair")
        plan.x[i][:, part.gpus] = ans.x
        plan.f[i][:, part.gpus] = np.where(ans.x, ans.f, 0.0)
    used = sum(data.mem[i] @ plan.x[i] for i in range(data.L))
    extra = sum(float(data.mem[i] @ (plan.x[i].sum(axis=1) - 1)) for i in range(data.L))
    if (used > data.cap + 1e-6).any() or extra > data.extra_memory_gib + 1e-6:
        return None
    if any((x.sum(axis=1) > data.replica_cap).any() or not x.any(axis=1).all() for x in plan.x):
        return None
    return plan


def solve_decomposed(
    inst: MoePlacementInstance, options: SolveOptions, deadline: Deadline
) -> Outcome:
    """The registered ``decomp:layer`` method: (identical GPUs) the layers as bins joined onto
    the GPUs; then every layer's exact model with the memory of the best plan so far fixed;
    the join; the cross-layer local search. Never worse than the caller's hint (``auto``
    passes the heuristics' best); without one and without bins, EPLB's warm start."""
    t0 = time.perf_counter()
    phases: dict[str, float] = {}

    def mark(name: str) -> None:
        phases[name] = round(time.perf_counter() - t0 - sum(phases.values()), 3)

    data = build_data(inst, check_size=False, deadline=deadline)
    hint = hint_plan(data, options.hint)
    mark("data")
    # Deterministic mode (SolveOptions.deterministic): every step runs its fixed work (the
    # split's table, the bins' bisections, the local search's iterations, the parts' node
    # budgets from their share of the limit) to its end; ``deadline`` is the runaway cap.
    det = options.deterministic
    split = _split_in_time(data, deadline, det)
    bound = max(data.lower_bound(), data.split_bound(SPLIT_CELLS) if split else -math.inf)
    mark("bound")
    build_s = time.perf_counter() - t0
    with open_executor(options) as pool:  # one pool for both rounds; closed on every path
        cells = SPLIT_CELLS if split else 0
        binned = bins_round(data, deadline, cells, 1.0 if det else BINS_SHARE, pool)
        mark("bins")
        warm = hint
        if warm is None and binned is None and identical_slots(data) is None:
            # EPLB's pass is not interrupted between layers' steps (1.2 s past its deadline at
            # load 18 on the DeepSeek-V3 shape): only where the bins do not apply at all
            warm = run_eplb(data, EplbParams(), deadline)  # past the deadline: DeadlineReached
            if warm is not None:
                by = deadline if det else deadline.earlier(0.9 * deadline.remaining())
                warm = improve(data, warm, LocalSearchParams(), by)
        starts = [(n, p) for n, p in (("bins", binned), ("warm start", warm)) if p is not None]
        if not starts:
            return Outcome(
                Status.NO_SOLUTION,
                bound=bound,
                build_s=build_s,
                explanation="no placement found in the time left (the bins' round needs more, "
                "or no packing fits the GPU memory); not a proof of infeasibility",
            )
        name, start = min(starts, key=lambda t: data.objectives(t[1])[0])
        stats: dict[str, object] = {**pool.describe(), "start": name, "parts": data.L}
        # What the finish costs on this machine now: one conversion measured (the start's,
        # kept for when nothing beats it), times the conversions and evaluations to come.
        t1 = time.perf_counter()
        start_solution = data.to_solution(start)
        reserve = FINISH_CONVERSIONS * (time.perf_counter() - t1) + 0.05
        mark("start")
        plan, ran = None, det or deadline.remaining() > 2 * reserve
        if ran:
            plan, part_stats = _run_parts(data, start, options, deadline, reserve, pool)
            stats.update(part_stats)
    if ran:
        better = plan is not None and data.objectives(plan)[0] <= data.objectives(start)[0]
        best = plan if better and plan is not None else start
        mark("parts")
        # The cross-layer step: the local search moves replicas and memory between layers.
        end = deadline if det else deadline.earlier(reserve)
        if not end.expired():
            best = improve(data, best, LocalSearchParams(), end)
        mark("local_search")
    else:
        best = start
    solution = start_solution if best is start else data.to_solution(best)
    if warm is not None:  # never worse than the hint (or the warm start)
        warm_solution = options.hint if warm is hint else None
        kept, hint_won = better_of(data, solution, warm, warm_solution)
        solution = solution if kept is None else kept
        if hint_won and warm is hint:
            stats["hint_returned"] = "yes"
    mark("finish")
    stats["phase_s"] = phases
    return Outcome(
        Status.FEASIBLE,
        solution=solution,
        bound=bound,
        build_s=build_s,
        solve_s=time.perf_counter() - t0 - build_s,
        stats={"solver": "highs", **stats},
        explanation="joined from per-layer models; the gap is against the whole instance's "
        "bound (per-layer bounds, the replica slots split exactly over the layers)",
    )


def _split_in_time(data: ModelData, deadline: Deadline, deterministic: bool = False) -> bool:
    """Build the exact split of the replica slots (``budget.py``) if its table is within
    SPLIT_CELLS, giving up after SPLIT_TIME_SHARE of the time left (``deterministic``: at
    ``deadline``, the runaway cap); True if it is built."""
    cells = data.split_cells()
    if cells is None or cells > SPLIT_CELLS:
        return False
    stop = deadline if deterministic else Deadline.after(deadline.share(SPLIT_TIME_SHARE))
    return data.build_split(stop) is not None


def _run_parts(
    data: ModelData,
    start: Plan,
    options: SolveOptions,
    deadline: Deadline,
    reserve: float,
    pool: Executor,
) -> tuple[Plan | None, dict[str, Any]]:
    """Every layer's exact model with ``start``'s memory fixed, run by ``pool`` within the
    parts' share of the time (each part's budget its share of what is left when it is handed
    out); the join, and what became of the parts (``parts_solved``, ``parts_improved``, ...)."""
    parts = partition(data, start, warm_memory(data, start))
    if options.deterministic:  # each part PARTS_SHARE of the limit shared out, as work
        stop = deadline
        work_s: float | None = PARTS_SHARE * options.time_limit_s / max(1, len(parts))
    else:
        stop = Deadline.after(max(0.0, deadline.remaining() - reserve) * PARTS_SHARE)
        work_s = None

    def tasks() -> Iterator[Task]:
        for part, budget in zip(parts, budgets(stop, len(parts), pool, 0.0), strict=True):
            inp = PartInput(layer_data(data, part), part, budget, options.seed, work_s)
            yield Task(f"layer{part.layer}", solve_part, (inp,))

    found, stats = run_parts(pool, tasks(), stop)
    answers: dict[int, PartAnswer] = {
        a.layer: a for a in found.values() if isinstance(a, PartAnswer)
    }
    stats["parts_improved"] = sum(1 for a in answers.values() if a.how in ("graph", "full"))
    return join(data, parts, answers), dict(stats)
