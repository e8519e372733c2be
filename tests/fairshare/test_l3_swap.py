"""The swap step (``l3_swap.py``): restarting jobs returned by swaps with one other job each;
the plan is kept only where it stays valid, its L1 and L2 do not fall and its L3 falls; on a
plan the return step has already worked on, it keeps running jobs that need another job
moved, and ``decomp`` runs it after the return step."""

from __future__ import annotations

import time
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

import schedopt
from schedopt.problems.fairshare import (
    FairshareInstance,
    generate_custom,
    join_levels,
    l3_pairs,
    l3_swap,
)
from schedopt.problems.fairshare.data import build_data
from schedopt.problems.fairshare.heuristics import AstraeaParams, run_astraea
from schedopt.problems.fairshare.l2_repair import RepairStats
from schedopt.problems.fairshare.l3_bound import arrays, need_gpus
from schedopt.problems.fairshare.l3_idle import idle_legs
from schedopt.problems.fairshare.l3_swap import swap_returns
from schedopt.problems.fairshare.strategies import instances
from schedopt.problems.fairshare.validate import evaluate, validate
from schedopt.topology import Cluster

from .steps import STEP_SETTINGS, check_step

SETTINGS = STEP_SETTINGS


def _check(inst, returned: bool) -> RepairStats:
    out, before, after, _, _ = check_step(
        inst, lambda state, o: swap_returns(state, 30.0, o), returned=returned
    )
    assert (out.improved > 0) == (after[2] < before[2])
    return out


@SETTINGS
@given(inst=instances(max_jobs=8, max_hosts=4))
def test_the_swap_step_never_makes_the_plan_worse(inst) -> None:
    _check(inst, returned=False)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_swap_step_keeps_jobs_the_return_step_does_not(seed: int) -> None:
    # after the restore and the return step: what is left needs another job to leave the
    # type (or take the GPUs the returning job gives back)
    inst = generate_custom(gpus=512, tenants=10, jobs=600, seed=seed)
    out = _check(inst, returned=True)
    assert out.improved > 0
    assert out.saved_l3 > 500


def _pair(back: dict[str, float], other: dict[str, float]) -> FairshareInstance:
    """One H100 host (h0) and one A100 host (h1) of one GPU each; job ``back`` ran on h0
    (restart cost 100 s), job ``other`` is new; rates on each type as given."""
    return FairshareInstance.model_validate(
        {
            "cluster": Cluster.heterogeneous([("H100", 1, 1), ("A100", 1, 1)]).to_dict(),
            "round_s": 100.0,
            "tenants": [{"id": "t", "weight": 1.0, "deserved_gpu_s": 100.0, "used_gpu_s": 0.0}],
            "jobs": [
                {
                    "id": id_,
                    "tenant": "t",
                    "throughput": {g: {1: rate} for g, rate in rates.items()},
                    "remaining_iterations": 1e6,
                    "restart_cost_s": 100.0 if id_ == "back" else 0.0,
                    **(
                        {"previous": {"gpu_type": "H100", "hosts": {"h0": 1}}}
                        if id_ == "back"
                        else {}
                    ),
                }
                for id_, rates in (("back", back), ("other", other))
            ],
        }
    )


def _placed(inst: FairshareInstance, on: dict[str, str]):
    """A plan of ``inst`` with only the jobs ``on`` names running, each on one GPU of the type
    it names (Astraea's state emptied first)."""
    data = build_data(inst, check_size=False)
    state = run_astraea(data, AstraeaParams(keep_running=0))[0]
    for job in data.jobs:
        state.unset(job)
    jobs = {j.id: j for j in data.jobs}
    for id_, gpu in on.items():
        assert state.place(
            jobs[id_], next(k for k, o in enumerate(jobs[id_].options) if o.gpu_type == gpu)
        )
    return state


def _swapped(inst: FairshareInstance, state):
    """The swap step on ``state`` (L3 100 before it, one restart): the plan after it (valid, L1
    not lower), the L2 it gained, its L3 and the L3 the step says it saved."""
    l1, l2, l3 = evaluate(inst, state.solution())
    assert l3 == 100.0
    out = swap_returns(state, 30.0, RepairStats())
    after = state.solution()
    assert validate(inst, after) == []
    n1, n2, n3 = evaluate(inst, after)
    assert n1 >= l1
    return after, n2 - l2, n3, out.saved_l3


@pytest.mark.parametrize(
    ("back", "other", "swapped"),
    [
        # back on A100 at half its H100 rate, other on H100 at half its A100 rate: the swap
        # raises L2 by 1 and saves 100 s
        ({"H100": 2.0, "A100": 1.0}, {"H100": 1.0, "A100": 2.0}, True),
        # back best on A100, other best on H100: the swap would lower L2 by 1 (L2 first)
        ({"H100": 1.0, "A100": 2.0}, {"H100": 2.0, "A100": 1.0}, False),
    ],
)
def test_a_swap_is_made_only_where_l2_does_not_fall(back, other, swapped: bool) -> None:
    inst = _pair(back, other)
    state = _placed(inst, {"back": "A100", "other": "H100"})
    l1, l2, l3 = evaluate(inst, state.solution())
    assert l3 == 100.0
    out = swap_returns(state, 30.0, RepairStats())
    n1, n2, n3 = evaluate(inst, state.solution())
    assert n1 == l1
    if swapped:
        assert (n2, n3, out.saved_l3) == (pytest.approx(l2 + 1.0), 0.0, 100.0)
    else:
        assert (n2, n3, out.improved) == (l2, l3, 0)


def _with_idle() -> FairshareInstance:
    """``_pair``'s round with a V100 host (h2) of one GPU: job ``low`` runs there at half its
    A100 rate, job ``idle`` runs only on V100."""
    doc = _pair({"H100": 1.0, "A100": 1.0}, {"H100": 1.0, "A100": 0.9}).model_dump(mode="json")
    doc["cluster"] = Cluster.heterogeneous([("H100", 1, 1), ("A100", 1, 1), ("V100", 1, 1)])
    doc["cluster"] = doc["cluster"].to_dict()
    for id_, rates in (("low", {"V100": 1.0, "A100": 2.0}), ("idle", {"V100": 1.0})):
        doc["jobs"].append(
            {
                "id": id_,
                "tenant": "t",
                "throughput": {g: {1: rate} for g, rate in rates.items()},
                "remaining_iterations": 1e6,
            }
        )
    return FairshareInstance.model_validate(doc)


def test_an_idle_job_pays_for_a_swap_that_lowers_l2() -> None:
    # back (H100 before, on A100 now, as fast on both) and other (on H100, 0.9 of it on
    # A100): their swap lowers L2 by 0.1, and no other pair raises it; idle taking low's
    # V100 GPU raises L2 by 0.5, which pays for the swap (L3 100 -> 0)
    inst = _with_idle()
    state = _placed(inst, {"back": "A100", "other": "H100", "low": "V100"})
    after, l2_gain, n3, saved = _swapped(inst, state)
    assert (l2_gain, n3, saved) == (pytest.approx(0.4), 0.0, 100.0)
    assert after.allocation("idle").hosts == {"h2": 1}
    assert not after.allocation("low").hosts
    assert after.allocation("back").hosts == {"h0": 1}


def _chain() -> FairshareInstance:
    """Tenants u and w (one unit each), hosts H100 h0, A100 h1 and h2, V100 h3: u's job
    ``back`` ran on h0 (restart cost 100 s), as fast on A100; u's ``other`` (0.9 of its
    H100 rate on A100), ``e`` (0.3 of its best on one A100 GPU) and ``c`` (V100 only); w's
    ``b``, 0.2 of its A100 rate on V100."""
    jobs = [
        ("back", "u", {"H100": {1: 1.0}, "A100": {1: 1.0}}),
        ("other", "u", {"H100": {1: 1.0}, "A100": {1: 0.9}}),
        ("e", "u", {"A100": {1: 0.3, 2: 1.0}}),
        ("c", "u", {"V100": {1: 1.0}}),
        ("b", "w", {"V100": {1: 0.2}, "A100": {1: 1.0}}),
    ]
    cluster = Cluster.heterogeneous([("H100", 1, 1), ("A100", 2, 1), ("V100", 1, 1)])
    return FairshareInstance.model_validate(
        {
            "cluster": cluster.to_dict(),
            "round_s": 100.0,
            "tenants": [
                {"id": t, "weight": 1.0, "deserved_gpu_s": 100.0, "used_gpu_s": 0.0}
                for t in ("u", "w")
            ],
            "jobs": [
                {
                    "id": id_,
                    "tenant": tenant,
                    "throughput": rates,
                    "remaining_iterations": 1e6,
                    "restart_cost_s": 100.0 if id_ == "back" else 0.0,
                    **(
                        {"previous": {"gpu_type": "H100", "hosts": {"h0": 1}}}
                        if id_ == "back"
                        else {}
                    ),
                }
                for id_, tenant, rates in jobs
            ],
        }
    )


def test_a_chain_pays_for_a_swap_where_the_idle_job_s_leg_alone_may_not_be_made() -> None:
    # back on A100 and other on H100 (their swap lowers L2 by 0.1, no other pair raises it);
    # c idle could take b's V100 GPU (+0.8) but w (b's unit) is at m_v(t̂) = 1 GPU: the leg
    # alone is not made. As a chain, b takes e's A100 GPU and e goes idle (w keeps its GPU,
    # u gives one and gets one): L2 +1.5, which pays for the swap (L3 100 -> 0)
    inst = _chain()
    state = _placed(inst, {"back": "A100", "other": "H100", "e": "A100", "b": "V100"})
    data = state.data
    jobs = {j.id: j for j in data.jobs}
    t_hat = data.min_share([float(g) for g in state.unit_gpus])
    w = jobs["b"].unit
    assert state.unit_gpus[w] == need_gpus(data, t_hat)[w] == 1  # no GPU to spare
    after, l2_gain, n3, saved = _swapped(inst, state)
    assert (l2_gain, n3, saved) == (pytest.approx(1.4), 0.0, 100.0)
    assert after.allocation("back").hosts == {"h0": 1}
    assert after.allocation("c").hosts == {"h3": 1}
    assert not after.allocation("e").hosts
    assert after.allocation("b").hosts in ({"h1": 1}, {"h2": 1})


@SETTINGS
@given(
    inst=instances(max_jobs=8, max_hosts=4, options=False),
    pick=st.lists(st.integers(0, 2), min_size=8, max_size=8),
)
def test_idle_legs_never_make_the_plan_worse(inst, pick: list[int]) -> None:
    # a drawn plan (job i on its option pick[i] where it fits, else idle; an option past the
    # last: idle), so idle jobs sit beside poorer jobs that may move: each idle leg checked
    # on the board as the step checks it (the bank at 0), then the step
    data = build_data(inst, check_size=False)
    state, problem = run_astraea(data, AstraeaParams(keep_running=0))
    if problem:
        return
    for job in data.jobs:
        state.unset(job)
    for job, k in zip(data.jobs, pick, strict=False):
        if k < len(job.options):
            state.place(job, k)
    assert validate(inst, state.solution()) == []
    l1, l2, l3 = evaluate(inst, state.solution())
    kept = {i for i, r in enumerate(state.raw) if r.keep}
    tables = l3_pairs.Tables(data, arrays(data))
    by_kind = l3_pairs.pools(state)
    legs = idle_legs(state, *tables.columns, by_kind, ())
    assert all(gain > 0 for gain, _ in legs)
    in_legs = [i for _, moves in legs for i, _ in moves]
    assert len(set(in_legs)) == len(in_legs)
    # none left out: an idle job that gains on a movable job's kind, of its unit (no GPUs
    # change units), has it or itself in a leg
    idle = [j.index for j in data.jobs if j.options and state.raw[j.index].option is None]
    for kind, pool in by_kind.items():
        e = tables.eff[:, tables.kix[kind]]
        for b in pool.tolist():
            for c in idle:
                if tables.unit[b] == tables.unit[c] and e[c] > e[b] + 1e-6:
                    assert {b, c} & set(in_legs)
    on_host: dict[str, set[int]] = {}
    for i, hosts in enumerate(state.hosts):
        for h in hosts:
            on_host.setdefault(h, set()).add(i)
    t_hat = data.min_share([float(g) for g in state.unit_gpus])
    gained = saved = 0.0
    for gain, moves in legs:
        # a leg (B idle, C on B's kind) or a chain of two (E idle, D on E's kind; D may be
        # B): every kind a job leaves is the kind another takes, and the estimate is the e
        # the moves change
        assert len(moves) in (2, 3, 4)
        freed, taken, d_e = Counter(), Counter(), 0.0
        for i, o in moves:
            job, now = data.jobs[i], state.raw[i].option
            if now is not None:
                freed[job.options[now].gpu_type, job.options[now].n] += 1
                d_e -= job.options[now].eff
            if o is not None:
                assert isinstance(o, int)
                taken[job.options[o].gpu_type, job.options[o].n] += 1
                d_e += job.options[o].eff
        assert freed == taken
        assert gain == pytest.approx(d_e)
        got = l3_swap._try(state, moves, t_hat, 0.0, on_host)
        if got is not None:
            assert got[2] == pytest.approx(gain) and got[3] >= -1e-9
            gained, saved = gained + got[2], saved + got[3]
    out = swap_returns(state, 30.0, RepairStats())
    after = state.solution()
    assert validate(inst, after) == []
    n1, n2, n3 = evaluate(inst, after)
    assert n1 >= l1 - 1e-12
    assert n2 >= l2 + gained - 1e-9 * max(1.0, abs(l2))
    assert n3 == pytest.approx(l3 - saved - out.saved_l3, abs=1e-6)
    assert n3 <= l3 + 1e-9
    assert kept <= {i for i, r in enumerate(state.raw) if r.keep}


def test_the_swap_step_is_not_started_without_time() -> None:
    inst = generate_custom(gpus=256, tenants=8, jobs=300, seed=1)
    data = build_data(inst, check_size=False)
    state, _ = run_astraea(data, AstraeaParams(keep_running=0))
    before = state.solution()
    started = time.perf_counter()
    out = swap_returns(state, 0.99 * l3_swap.MIN_S, RepairStats())
    assert time.perf_counter() - started < l3_swap.MIN_S
    assert out.neighbourhoods == 0
    assert state.solution() == before


def test_decomp_runs_the_swap_step_after_the_return_step(monkeypatch) -> None:
    seen: list[tuple[float, float]] = []

    def recorded(state, seconds, out, a=None, wall=None):
        inst = state.data.instance
        before = evaluate(inst, state.solution())[2]
        swap_returns(state, 30.0, out, a)
        seen.append((before, evaluate(inst, state.solution())[2]))
        return out

    monkeypatch.setattr(join_levels, "swap_returns", recorded)
    inst = generate_custom(gpus=1024, tenants=20, jobs=1500, seed=0)
    got = schedopt.solve(inst, "decomp", time_limit_s=30, params={"parts": 2})
    assert len(seen) == 1
    before, after = seen[0]
    assert after < before
    assert got.stats["l3_swap_saved"] == pytest.approx(before - after, abs=1e-3)
    assert got.objectives[2] <= after + 1e-9  # the steps after it only lower it
    assert got.stats["L3_bound"] <= got.objectives[2]


def test_decomp_gives_the_swap_step_the_time_left(monkeypatch) -> None:
    # the step ends at its last pair, so it has the time left to the L3 steps, CPU and wall:
    # a fixed 0.25 CPU s cut it at 16,384 GPUs in half the runs with 3-5 s of 10 unused
    seen: list[tuple[float, float | None, float]] = []

    def recorded(state, seconds, out, a=None, wall=None):
        seen.append((seconds, wall, time.perf_counter()))
        return swap_returns(state, seconds, out, a, wall)

    monkeypatch.setattr(join_levels, "swap_returns", recorded)
    inst = generate_custom(gpus=1024, tenants=20, jobs=1500, seed=0)
    started = time.perf_counter()
    got = schedopt.solve(inst, "decomp", time_limit_s=30, params={"parts": 2})
    assert len(seen) == 1
    seconds, wall, at = seen[0]
    assert wall == seconds
    # (what the join keeps for the finish and the solution is well under half of it)
    assert seconds >= 0.5 * (30 - (at - started))
    assert got.wall_s < 30


class _Clock:
    """``time`` for ``l3_swap`` with the process's CPU time ``rate`` times as fast (a
    process that gets ``1/rate`` of a core counts the same work ``rate`` times slower)."""

    def __init__(self, rate: float):
        self.rate = rate

    def perf_counter(self) -> float:
        return time.perf_counter()

    def process_time(self) -> float:
        return self.rate * time.process_time()


@pytest.mark.parametrize("rate", [1.0, 1000.0])
def test_the_swap_step_counts_its_seconds_as_cpu_time(monkeypatch, rate: float) -> None:
    # one second of CPU and 30 of wall: with the process's clock 1000 times as fast (1 ms of
    # CPU is a second) the step stops before its first pair; with the real clock it saves
    inst = generate_custom(gpus=512, tenants=10, jobs=600, seed=0)
    monkeypatch.setattr(l3_swap, "time", _Clock(rate))

    def step(state, out):
        return swap_returns(state, 1.0, out, wall=30.0)

    out, *_ = check_step(inst, step, returned=True)
    assert (out.saved_l3 > 0) == (rate == 1.0)
