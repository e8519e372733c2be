"""The instance as the models see it: numpy data computed once, in one place.

Both exact back-ends (``cpsat.py``, ``milp.py``), the scenario model and the heuristics read
this; the validator does not (it re-derives everything from the raw instance). Every scaling of
real data to integers (CP-SAT) is here — see "Integer scaling" in
``formulations/moe_placement.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from schedopt.core.errors import ModelTooLargeError
from schedopt.core.stopping import Deadline, Ticker, too_slow_to_build

from .budget import BudgetTable, ReplicaSplit, greedy_curve, lagrangian_bound
from .instance import LayerWithin, MoePlacementInstance
from .solution import MoePlacementSolution

#: CP-SAT token shares are integers q in 0..SHARE_RESOLUTION: a share is resolved to 1/1000.
SHARE_RESOLUTION = 1000
#: CP-SAT load coefficients: the largest full-share load of any (layer, expert, GPU) becomes
#: this many integer units (relative rounding of a coefficient <= 0.5 / LOAD_RESOLUTION).
LOAD_RESOLUTION = 100_000
#: The same for the communication coefficients.
COMM_RESOLUTION = 10_000
#: Relative tolerance with which a continuous level is fixed before the next one is solved
#: (the "How the order is kept" section): half the relative tolerance (1e-9) that
#: ``schedopt.core.result.lex_better`` uses to compare objective vectors.
LEX_REL_TOL = 5e-10
#: Conservative model-building cost per decision variable, measured on the 64-GPU benchmark
#: (PuLP ≈ 20 µs, CP-SAT ≈ 12 µs per variable, with the constraints that go with it).
BUILD_S_PER_VARIABLE = 4e-5
#: Refuse to build exact models with more decision variables than this.
MAX_MODEL_VARIABLES = 2_000_000
#: Every method's bound splits the replica slots exactly over the layers when the table has
#: at most this many cells (about 0.05 s); ``decomp:layer`` allows more.
CHEAP_SPLIT_CELLS = 10_000_000
#: Shares below this are dropped when a model's answer becomes a solution (then renormalised).
SHARE_EPS = 1e-9


@dataclass
class Plan:
    """A method's decision: ``x[l][e, g]`` replica on GPU g, ``f[l][e, g]`` its token share."""

    x: list[np.ndarray]
    f: list[np.ndarray]

    def copy(self) -> Plan:
        return Plan([a.copy() for a in self.x], [a.copy() for a in self.f])


@dataclass(frozen=True)
class ModelData:
    instance: MoePlacementInstance
    gpu_ids: tuple[str, ...]
    cap: np.ndarray  # (G,) GiB for experts per GPU: memory_gib - dense_memory_gib, >= 0
    speed: np.ndarray  # (G,)
    host: np.ndarray  # (G,) host index
    group: np.ndarray  # (G,) C7 group index (0 for every GPU when layer_within is none)
    n_groups: int
    mem: tuple[np.ndarray, ...]  # per layer (E_l,) GiB
    pop: tuple[np.ndarray, ...]  # per layer (E_l,) tokens per batch (point estimate)
    cpt: tuple[np.ndarray, ...]  # per layer (E_l,) µs per token on a speed-1 GPU
    comm: np.ndarray  # (G,) µs of transfer time per token sent to GPU g and back (κ_g)
    eligible: tuple[np.ndarray, ...]  # per layer (E_l, G) bool: the expert fits the GPU alone
    current: tuple[np.ndarray, ...] | None  # per layer (E_l, G) bool: held now
    replica_cap: int  # R: replicas per expert (C5)
    extra_memory_gib: float  # X (C6), inf when uncapped
    hierarchical: bool
    weights: tuple[float, float, float, float] | None  # weighted mode: (load, comm, gpus, moved)
    #: C10 may order interchangeable GPUs: eligibility follows capacity (False for a model
    #: over a given set of replicas, ``decompose.py``'s first stage).
    symmetric: bool = True

    # --- sizes ---------------------------------------------------------------------------
    @property
    def L(self) -> int:
        return len(self.mem)

    @property
    def G(self) -> int:
        return len(self.gpu_ids)

    def work(self, layer: int, pop: np.ndarray | None = None) -> np.ndarray:
        """w_le = popularity × compute per token: µs of expert e on a speed-1 GPU."""
        return (self.pop[layer] if pop is None else pop) * self.cpt[layer]

    @cached_property
    def num_variables(self) -> int:
        x = sum(int(e.sum()) for e in self.eligible)
        return 2 * x + self.L + self.G + (self.L * self.n_groups if self.hierarchical else 0)

    def too_big_for(self, seconds: float, factor: float = 1.0) -> str | None:
        """Why building the exact model would not fit in ``seconds`` (None: it fits)."""
        return too_slow_to_build(self.num_variables, BUILD_S_PER_VARIABLE, seconds, factor)

    # --- objective levels of a plan (the models' view; the validator recomputes them) -----
    def layer_loads(self, plan: Plan, layer: int, pop: np.ndarray | None = None) -> np.ndarray:
        """(G,) µs of layer ``layer`` on each GPU: Σ_e w_le f_leg / s_g."""
        return (self.work(layer, pop) @ plan.f[layer]) / self.speed

    def levels(self, plan: Plan) -> tuple[float, float, float, float]:
        """(L1 Σ_l max_g load, L2 transfer µs, L3 GPUs used, L4 replicas moved)."""
        l1 = sum(float(self.layer_loads(plan, i).max()) for i in range(self.L))
        l2 = sum(float(self.pop[i] @ plan.f[i] @ self.comm) for i in range(self.L))
        used = np.zeros(self.G, dtype=bool)
        for x in plan.x:
            used |= x.any(axis=0)
        moved = 0
        if self.current is not None:
            moved = sum(int((x & ~c).sum()) for x, c in zip(plan.x, self.current, strict=True))
        return (l1, l2, float(used.sum()), float(moved))

    def objectives(self, plan: Plan) -> tuple[float, float, float, float]:
        """The objective vector as the Result reports it (first level weighted in that mode)."""
        lv = self.levels(plan)
        if self.weights is None:
            return lv
        return (sum(w * v for w, v in zip(self.weights, lv, strict=True)), lv[1], lv[2], lv[3])

    def lower_bound(self) -> float:
        """A valid bound on the first level, from a relaxation (see "Bounds" in the
        formulation): each layer's max load is at least its work over the speed of its best
        group, and at least max_e w_le / (r_le · s_max) for replica counts r_le >= 1 whose
        memory (at the layer's smallest expert size) fits the memory left after one copy of
        everything; the replica budget is priced by a Lagrange multiplier (weak duality)."""
        lb1 = self._replica_bound()
        if self.weights is None:
            return lb1
        lb2 = sum(
            float(self.pop[i] @ np.where(self.eligible[i], self.comm, np.inf).min(axis=1))
            for i in range(self.L)
        )
        need = sum(float(m.sum()) for m in self.mem)
        lb3 = max(1, math.ceil(need / float(self.cap.max()) - 1e-9))
        w = self.weights
        return w[0] * lb1 + w[1] * lb2 + w[2] * lb3

    def replica_budget_gib(self) -> float:
        """GiB left for replicas beyond one copy of every expert (C1 summed, and C6)."""
        single = sum(float(m.sum()) for m in self.mem)
        return min(float(self.cap.sum()) - single, self.extra_memory_gib)

    def replica_curves(self) -> list[np.ndarray]:
        """Per layer, ``curve[k]``: a lower bound on the layer's max load when it has ``k``
        replicas beyond one copy of each expert ("Bounds" in the formulation): the larger of
        its work over the speed of its best group and ``max_e w_le / (r_le s_max)`` for the
        best counts ``r`` (greedy is optimal for this min-max allocation), capped at ``R``
        replicas per expert and at the replica budget."""
        budget = self.replica_budget_gib()
        s_max = float(self.speed.max())
        curves = []
        for i in range(self.L):
            w = self.work(i)
            floor_i = 0.0
            for k in range(self.n_groups):
                in_k = self.group == k
                if self.eligible[i][:, in_k].any(axis=1).all():
                    sp = float(self.speed[in_k & self.eligible[i].any(axis=0)].sum())
                    value = float(w.sum()) / sp if sp > 0 else math.inf
                    floor_i = value if floor_i == 0.0 else min(floor_i, value)
            cap_k = int(
                min(len(w) * (self.replica_cap - 1), max(budget, 0) / float(self.mem[i].min()))
            )
            curve = greedy_curve(w, floor_i, self.replica_cap, cap_k, s_max)
            curves.append(curve)
        return curves

    def replica_slots(self) -> int | None:
        """Equal expert sizes ``m``: the most replicas beyond one copy of each expert that fit,
        ``Σ_g ⌊M_g / m⌋ − Σ_l |E_l|`` (and ``⌊X / m⌋``, C6); None when sizes differ."""
        size = float(self.mem[0][0])
        if not all(np.allclose(m, size) for m in self.mem):
            return None
        slots = int(np.floor(self.cap / size + 1e-9).sum()) - sum(len(m) for m in self.mem)
        if np.isfinite(self.extra_memory_gib):
            slots = min(slots, int(np.floor(self.extra_memory_gib / size + 1e-9)))
        return slots

    @cached_property
    def layer_curves(self) -> list[np.ndarray]:
        """:meth:`replica_curves`, computed once."""
        return self.replica_curves()

    @cached_property
    def split(self) -> ReplicaSplit | None:
        """The exact split of the replica slots over the layers, or None where there is none
        (expert sizes differ, or one copy of everything does not fit)."""
        slots = self.replica_slots()
        return None if slots is None or slots < 0 else ReplicaSplit(self.layer_curves, slots)

    def split_cells(self) -> int | None:
        """The size of the exact split's table (budgets × drop points of the curves)."""
        return None if self.split is None else self.split.cells

    def build_split(self, stop: Deadline) -> BudgetTable | None:
        """The exact split's table, built once, or None if ``stop`` passed first (checked
        between layers; a later call starts again)."""
        return None if self.split is None else self.split.table(stop)

    def budget_table(self, max_cells: int = CHEAP_SPLIT_CELLS) -> BudgetTable | None:
        """Equal expert sizes: the exact split of the replica slots over the layers' curves
        (``budget.py``, built once), or None (sizes differ, no room, or over ``max_cells``)."""
        split = self.split
        return None if split is None or split.cells > max_cells else split.table()

    def split_bound(self, max_cells: int = CHEAP_SPLIT_CELLS) -> float:
        """The bound with the replica slots split exactly over the layers, when the table
        fits ``max_cells``; else -inf."""
        table = self.budget_table(max_cells)
        return -math.inf if table is None else float(table.value[-1])

    def _replica_bound(self) -> float:
        budget = self.replica_budget_gib()
        return max(self.split_bound(), self._lagrangian_bound(budget, self.layer_curves))

    def _lagrangian_bound(self, budget: float, curves: list[np.ndarray]) -> float:
        return lagrangian_bound(curves, [float(m.min()) for m in self.mem], budget)

    # --- plans and solutions --------------------------------------------------------------
    def empty_plan(self) -> Plan:
        return Plan(
            [np.zeros((len(m), self.G), dtype=bool) for m in self.mem],
            [np.zeros((len(m), self.G)) for m in self.mem],
        )

    def to_solution(self, plan: Plan) -> MoePlacementSolution:
        """Replicas where x is set; shares clipped to [0, 1] and renormalised to sum to 1."""
        layers = []
        for x, f in zip(plan.x, plan.f, strict=True):
            experts = []
            for e in range(x.shape[0]):
                on = np.flatnonzero(x[e])
                share = np.clip(f[e, on], 0.0, 1.0)
                share[share < SHARE_EPS] = 0.0
                total = share.sum()
                share = share / total if total > 0 else np.full(len(on), 1.0 / max(len(on), 1))
                replicas = [
                    {"gpu": self.gpu_ids[g], "share": float(s)}
                    for g, s in zip(on, share, strict=True)
                ]
                experts.append({"replicas": replicas})
            layers.append({"experts": experts})
        # One validation of the whole tree in pydantic's core: 110k Replica() calls on the
        # DeepSeek-V3 shape cost 1.4 s, more than the time limits schedulers use there.
        return MoePlacementSolution.model_validate({"layers": layers})

    def plan_from_solution(self, sol: MoePlacementSolution) -> Plan | None:
        """A solution (e.g. a hint) as a plan; None when its shape does not fit the instance."""
        if len(sol.layers) != self.L:
            return None
        index = {g: i for i, g in enumerate(self.gpu_ids)}
        plan = self.empty_plan()
        for i, layer in enumerate(sol.layers):
            if len(layer.experts) != len(self.mem[i]):
                return None
            for e, ex in enumerate(layer.experts):
                for r in ex.replicas:
                    g = index.get(r.gpu)
                    if g is None:
                        return None
                    plan.x[i][e, g] = True
                    plan.f[i][e, g] = r.share
        return plan

    # --- CP-SAT integer data (the one place reals become integers) ------------------------
    @cached_property
    def load_unit_us(self) -> float:
        """µs of one integer load unit at full share (see LOAD_RESOLUTION)."""
        top = max(float((self.work(i)[:, None] / self.speed[None, :]).max()) for i in range(self.L))
        return top / LOAD_RESOLUTION if top > 0 else 1.0

    def int_load(self, layer: int) -> np.ndarray:
        """(E_l, G) integer A_leg ≈ (w_le / s_g) / load_unit_us; load ≈ Σ A q · unit / Q µs."""
        a = self.work(layer)[:, None] / self.speed[None, :]
        return np.rint(a / self.load_unit_us).astype(np.int64)

    @cached_property
    def comm_unit_us(self) -> float:
        top = max(float(self.pop[i].max()) for i in range(self.L)) * float(self.comm.max())
        return top / COMM_RESOLUTION if top > 0 else 1.0

    def int_comm(self, layer: int) -> np.ndarray:
        """(E_l, G) integer C_leg ≈ p_le κ_g / comm_unit_us (transfer µs at full share)."""
        c = self.pop[layer][:, None] * self.comm[None, :]
        return np.rint(c / self.comm_unit_us).astype(np.int64)

    @cached_property
    def cpsat_tolerance_us(self) -> float:
        """δ: the CP-SAT optimum's L1 exceeds the continuous optimum by at most this (µs).

        Grid: rounding optimal shares to multiples of 1/Q moves each by < 1/Q, so a GPU's
        load by < Σ_e a_leg / Q; coefficient rounding adds <= unit/2 per expert on a GPU, twice
        (to the grid model's optimum and back to real units)."""
        total = 0.0
        for i in range(self.L):
            a = self.work(i)[:, None] / self.speed[None, :]
            total += float(a.sum(axis=0).max()) / SHARE_RESOLUTION
            total += self.load_unit_us * len(self.mem[i])
        return total


#: Seconds per (layer, expert) that ``solve()`` keeps back for validating and evaluating an
#: answer (measured 0.14 s of CPU on the DeepSeek-V3 shape, 58 × 256; benchmarks/RESULTS.md).
FINISH_S_PER_EXPERT = 2.0e-5


def finish_reserve_s(inst: MoePlacementInstance) -> float:
    return 0.05 + FINISH_S_PER_EXPERT * sum(len(layer.experts) for layer in inst.layers)


def build_data(
    inst: MoePlacementInstance, *, check_size: bool = True, deadline: Deadline | None = None
) -> ModelData:
    """The instance as arrays; ``deadline``: building stops there (DeadlineReached), as the
    all-pairs bandwidths of a 256-GPU cluster take 0.5 s quiet and more on a busy machine."""
    tick = Ticker(deadline, "building the MoE data", every=1)  # a widest-path tree per tick
    gpu_ids = inst.cluster.gpus()
    index = {g: i for i, g in enumerate(gpu_ids)}
    specs = [inst.cluster.gpu(g) for g in gpu_ids]
    cap = np.array([max(0.0, s.memory_gib - inst.dense_memory_gib) for s in specs])
    speed = np.array([s.speed for s in specs])
    hosts = {h: k for k, h in enumerate(inst.cluster.hosts())}
    host = np.array([hosts[s.host] for s in specs])
    group = np.zeros(len(gpu_ids), dtype=np.int64)
    for k, grp in enumerate(inst.groups):
        for g in grp:
            group[index[g]] = k
    mem = tuple(np.array([e.memory_gib for e in layer.experts]) for layer in inst.layers)
    cpt = tuple(np.array([e.compute_us_per_token for e in layer.experts]) for layer in inst.layers)
    pop = tuple(np.array(inst.point_popularity(i)) for i in range(len(inst.layers)))
    eligible = tuple(m[:, None] <= cap[None, :] + 1e-9 for m in mem)
    current: tuple[np.ndarray, ...] | None = None
    if inst.current_placement is not None:
        held = []
        for i, row in enumerate(inst.current_placement):
            c = np.zeros((len(mem[i]), len(gpu_ids)), dtype=bool)
            for e, gs in enumerate(row):
                for g in gs:
                    c[e, index[g]] = True
            held.append(c)
        current = tuple(held)
    R = len(gpu_ids) if inst.max_replicas_per_expert is None else inst.max_replicas_per_expert
    w = inst.objective.weights
    data = ModelData(
        instance=inst,
        gpu_ids=gpu_ids,
        cap=cap,
        speed=speed,
        host=host,
        group=group,
        n_groups=len(inst.groups),
        mem=mem,
        pop=pop,
        cpt=cpt,
        comm=np.array(inst.transfer_costs(tick)),
        eligible=eligible,
        current=current,
        replica_cap=min(R, len(gpu_ids)),
        extra_memory_gib=math.inf
        if inst.max_extra_memory_gib is None
        else inst.max_extra_memory_gib,
        hierarchical=inst.layer_within is not LayerWithin.NONE,
        weights=(w.load, w.comm, w.gpus, w.moved) if inst.objective.mode == "weighted" else None,
    )
    if check_size and data.num_variables > MAX_MODEL_VARIABLES:
        raise ModelTooLargeError(
            "layers",
            f"the exact model would have about {data.num_variables:,} variables "
            f"(limit {MAX_MODEL_VARIABLES:,}); use method='heuristic:eplb' or "
            "'heuristic:local-search'",
        )
    return data
