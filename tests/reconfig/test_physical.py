"""The physical plan space (#17 item 3): brute force over every plan V1–V5 and max_stages allow
on tiny instances. The proven physical bound (formulations/reconfig.md, P1–P6) is never above
the physical optimum, says INFEASIBLE only when no physical plan exists, and the validator
accepts the physical plans, including those outside the template space. Results say over which
space their status holds (#16 item 7)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import schedopt
from schedopt.cli.report import result_json
from schedopt.core.status import Status
from schedopt.problems.reconfig import price_bound
from schedopt.problems.reconfig.dw_prices import RULED_OUT, dw_prices
from schedopt.problems.reconfig.generate import generate_custom, model_config
from schedopt.problems.reconfig.instance import Pipeline, ReconfigInstance, SlowGpu, Stage
from schedopt.problems.reconfig.price_bound import (
    Gathered,
    priced_bound_us,
    priced_out,
    supply_value,
)
from schedopt.problems.reconfig.pricing import least_per_count
from schedopt.problems.reconfig.solution import ReconfigSolution
from schedopt.problems.reconfig.stage_bound import stage_bound_us, stage_data
from schedopt.problems.reconfig.strategies import instance_dicts
from schedopt.problems.reconfig.validate import evaluate, physical_bound_us, validate
from schedopt.topology import Cluster

from .bruteforce import best_iteration_us, physical_best, physical_plan


def _no_plan(doc: dict) -> ReconfigInstance:
    doc = {**doc, "global_batch": min(doc["global_batch"], 3 * doc["micro_batch"])}
    doc.pop("current_plan", None)
    doc.pop("failure_rate_per_hour", None)
    return ReconfigInstance.model_validate(doc)


def _brute_forced(doc: dict) -> tuple[ReconfigInstance, tuple[int, list] | None]:
    """The instance (no current plan, at most 5 surviving GPUs: brute force's reach) and its
    physical optimum by enumeration (None: no physical plan)."""
    inst = _no_plan(doc)
    assume(len(inst.cluster.gpus()) - len(inst.failed_gpus) <= 5)
    return inst, physical_best(inst)


@settings(derandomize=True, deadline=None, max_examples=40, suppress_health_check=list(HealthCheck))
@given(doc=instance_dicts(max_hosts=2, max_layers=4))
def test_the_physical_bound_is_below_the_physical_optimum(doc: dict) -> None:
    inst, found = _brute_forced(doc)
    bound = physical_bound_us(inst)
    template = best_iteration_us(inst)
    if found is None:
        assert template is None  # the template space is inside the physical one
        return
    best, plan = found
    sol = physical_plan(inst, plan)
    assert validate(inst, sol) == []  # the validator accepts physical plans
    assert round(evaluate(inst, sol)[0] * 1e6) == best
    assert bound is not None, "physical INFEASIBLE on an instance with a physical plan"
    assert bound <= best, (bound, best)
    assert template is None or template >= best


def _two_slow_in_one_group() -> ReconfigInstance:
    # TP 4 only, two slow GPUs in the one host: no template group holds two slow GPUs
    return ReconfigInstance(
        cluster=Cluster.dgx(nodes=1, gpus_per_node=4, memory_gib=80),
        model=model_config("toy"),
        global_batch=4,
        tp_sizes=(4,),
        slow_gpus=tuple(SlowGpu(gpu=f"h0/g{i}", speed_factor=0.5) for i in range(2)),
    )


@pytest.mark.parametrize("method", ["cpsat", "milp:highs", "auto"])
def test_infeasible_over_the_template_space_says_so(method: str) -> None:
    inst = _two_slow_in_one_group()
    whole = ReconfigSolution(
        pipelines=(
            Pipeline(
                stages=(Stage(layer_start=0, layer_end=4, gpus=tuple(inst.cluster.gpus())),),
                micro_batches=4,
            ),
        )
    )
    assert validate(inst, whole) == []  # a physical plan exists
    result = schedopt.solve(inst, method, time_limit_s=20)
    assert result.status is Status.INFEASIBLE
    assert result.stats["proven_over"] == "template plan space"
    assert "infeasible over the template plan space" in (result.explanation or "")
    assert "INFEASIBLE (over the template plan space)" in result.summary()
    doc = result_json(result)
    assert doc["stats"]["proven_over"] == "template plan space"
    bound = result.stats["physical_bound_s"]
    assert bound <= evaluate(inst, whole)[0]


def test_infeasible_over_the_physical_space_when_nothing_fits() -> None:
    inst = ReconfigInstance(
        cluster=Cluster.dgx(nodes=1, gpus_per_node=2, memory_gib=1),
        model=model_config("llama2-7b"),
        global_batch=2,
        memory_reserve_gib=0.5,
    )
    assert physical_bound_us(inst) is None
    result = schedopt.solve(inst, "milp:highs", time_limit_s=20)
    assert result.status is Status.INFEASIBLE
    assert result.stats["proven_over"] == "physical plan space"


def test_every_answer_has_a_physical_bound_and_gap() -> None:
    inst = schedopt.load("instances/reconfig/toy-3x4-f2-s2.json")
    for method in ("heuristic:oobleck", "milp:highs"):
        result = schedopt.solve(inst, method, time_limit_s=20)
        assert result.objectives is not None
        bound, gap = result.metrics["physical_bound_s"], result.metrics["physical_gap"]
        assert 0 < bound <= result.objectives[0]
        assert gap == pytest.approx((result.objectives[0] - bound) / result.objectives[0])


@settings(derandomize=True, deadline=None, max_examples=40, suppress_health_check=list(HealthCheck))
@given(doc=instance_dicts(max_hosts=2, max_layers=4))
def test_the_stage_position_bound_is_below_the_physical_optimum(doc: dict) -> None:
    # Q1-Q6 (formulations/reconfig.md): every probe it rules out is below the physical optimum;
    # no deadline (a proof must not depend on speed), up to the optimum itself as the cap
    inst, found = _brute_forced(doc)
    for exact in (True, False):
        bound, _ = stage_bound_us(inst, None, exact_speeds=exact, rel_tol=1e-4)
        if found is None:
            assert bound is None or physical_bound_us(inst) is not None
            continue
        assert bound is not None
        assert physical_bound_us(inst) <= bound <= found[0], (bound, found[0])


@settings(derandomize=True, deadline=None, max_examples=40, suppress_health_check=list(HealthCheck))
@given(doc=instance_dicts(max_hosts=2, max_layers=4))
def test_the_priced_bound_is_below_the_physical_optimum(doc: dict) -> None:
    # Q7-Q9: prices (Q8' then Q8), then every probe they rule out is below the optimum
    inst, found = _brute_forced(doc)
    bound, _ = priced_bound_us(inst, None, rel_tol=1e-4)
    if found is None:
        assert bound is None or physical_bound_us(inst) is not None
        return
    assert bound is not None
    assert physical_bound_us(inst) <= bound <= found[0], (bound, found[0])


@settings(derandomize=True, deadline=None, max_examples=40, suppress_health_check=list(HealthCheck))
@given(doc=instance_dicts(max_hosts=2, max_layers=4))
def test_the_bound_at_the_mean_of_its_prices_is_below_the_physical_optimum(doc: dict) -> None:
    # Q8'': Q7/Q9's test at the mean of the rounds' prices, bisected from the bound reached
    # (from one round on here: tiny instances converge in few), never above the optimum
    inst, found = _brute_forced(doc)
    gathered = Gathered()
    bound, _ = priced_bound_us(inst, None, gathered=gathered)
    assume(bound is not None and found is not None and gathered.prices)
    assert bound is not None and found is not None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(price_bound, "MEAN_ROUNDS", 1)
        mean = price_bound.mean_bound_us(inst, gathered, bound, None, None, {}, rel_tol=1e-4)
    assert bound <= mean <= found[0], (bound, mean, found[0])


@settings(derandomize=True, deadline=None, max_examples=40, suppress_health_check=list(HealthCheck))
@given(doc=instance_dicts(max_hosts=2, max_layers=4), seed=st.integers(0, 2**31))
def test_integer_pipeline_counts_never_rule_out_the_physical_optimum(doc: dict, seed: int) -> None:
    # Q9 at any prices μ ≥ 0: at Λ = the brute-force physical optimum, some number of pipelines
    # is not ruled out (the optimum's own); and wherever Q7 rules a probe out, Q9 does too
    inst, found = _brute_forced(doc)
    sd = stage_data(inst)
    assume(found is not None and sd is not None)
    assert sd is not None and found is not None
    rng = np.random.default_rng(seed)
    k_max = min(sd.M, (len(inst.cluster.gpus()) - len(inst.failed_gpus)) // sd.g_mem)
    assert len(found[1]) <= k_max  # P2: the optimum's pipeline count is covered
    for _ in range(5):
        mu = rng.exponential(1.0, len(sd.types)) * rng.integers(0, 2, len(sd.types))
        supply = supply_value(sd, mu)
        assert not priced_out(sd, found[0], mu, supply, k_max)
        for lam in (found[0] - 1, int(found[0] * 0.9), int(found[0] * 0.7)):
            if priced_out(sd, lam, mu, supply):
                assert priced_out(sd, lam, mu, supply, k_max)


@settings(derandomize=True, deadline=None, max_examples=30, suppress_health_check=list(HealthCheck))
@given(doc=instance_dicts(max_hosts=2, max_layers=4))
def test_the_master_solved_at_a_probe_never_rules_out_the_physical_optimum(doc: dict) -> None:
    # Q10: at Λ = the brute-force physical optimum the master's rounds never claim L1 > Λ, and
    # the prices it returns never do either; one below, what it rules out its prices rule out
    inst, found = _brute_forced(doc)
    sd = stage_data(inst)
    assume(found is not None and sd is not None)
    assert sd is not None and found is not None
    k_max = min(sd.M, (len(inst.cluster.gpus()) - len(inst.failed_gpus)) // sd.g_mem)
    for lam in (found[0], found[0] - 1, int(found[0] * 0.95)):
        mu, ended = dw_prices(sd, lam, None, {}, k_max)
        if lam == found[0]:
            assert ended != RULED_OUT
        if mu is not None:
            supply = supply_value(sd, mu)
            assert not priced_out(sd, found[0], mu, supply, k_max)
            if ended == RULED_OUT:
                assert priced_out(sd, lam, mu, supply, k_max)


def test_the_master_solved_at_the_probe_raises_the_bound() -> None:
    # Q10 on 4 hosts of Llama-2 70B (2 + 2 failures): Q8′'s prices and their bisection stopped
    # at 12.052 s (no deadline); the master solved at probes near it, every m priced, 12.173 s
    # (fails on the search without Q10); below every plan found
    inst = generate_custom(4, 8, "llama2-70b", 64, 2, 2, seed=0)
    bound, stats = priced_bound_us(inst, None)
    assert bound is not None and bound >= 12_172_765, bound
    assert stats["q_lps"] >= 2
    for method in ("heuristic:oobleck", "decomp:physical"):  # any plan found is above it
        plan = schedopt.solve(inst, method, time_limit_s=10)
        if plan.solution is not None:
            assert bound <= round(evaluate(inst, plan.solution)[0] * 1e6), method


@settings(derandomize=True, deadline=None, max_examples=20, suppress_health_check=list(HealthCheck))
@given(doc=instance_dicts(max_hosts=2, max_layers=4), seed=st.integers(0, 2**31))
def test_a_bisection_s_memo_prices_every_row_as_without_it(doc: dict, seed: int) -> None:
    # the bisection's probes share one memo of Q7's row prices at one μ: C* is the same as
    # priced afresh, at every probe and in any order
    inst = _no_plan(doc)
    sd = stage_data(inst)
    assume(sd is not None)
    assert sd is not None
    rng = np.random.default_rng(seed)
    mu = rng.exponential(1.0, len(sd.types)) * rng.integers(0, 2, len(sd.types))
    base = physical_bound_us(inst)
    assert base is not None
    memo: dict[tuple[int, bytes], float] = {}
    for lam in rng.integers(base, 3 * base + 2, 6):
        fresh = least_per_count(sd, int(lam), mu)
        assert np.array_equal(fresh, least_per_count(sd, int(lam), mu, memo))


def test_no_lp_is_built_for_prices_once_the_deadline_has_passed(monkeypatch) -> None:
    # the master's prices out of time used to fall back to Q4's LP past the deadline (0.06 s
    # over it at 1,024 GPUs, 2026-12-05); the bound is what the probes proved until then
    import time

    from schedopt.core.stopping import Deadline
    from schedopt.problems.reconfig import price_bound

    def out_of_time(sd, lam, deadline, pool):
        while not deadline.expired():
            time.sleep(0.01)
        return None

    def no_lp(*args):
        raise AssertionError("Q4's LP built past the deadline")

    monkeypatch.setattr(price_bound, "column_prices", out_of_time)
    monkeypatch.setattr(price_bound, "lp_prices", no_lp)
    inst = generate_custom(4, 8, "llama2-70b", 64, 2, 2, seed=0)
    bound, _ = priced_bound_us(inst, 13_000_000, Deadline.after(0.5))
    assert bound == physical_bound_us(inst)  # (P1–P6 alone: no prices in time)


def test_the_rounds_the_bound_priced_are_in_the_answer_and_the_bench_row() -> None:
    # how many rounds of prices decomp:physical's bound priced (W8 and Q8″ need 3 of them at
    # 10 s): in the answer's stats and kept in a bench row (#17; at 10 s beside a CPU burner it
    # priced 1, RESULTS.md)
    from schedopt.bench.runner import _stats
    from schedopt.problems.reconfig.decomp import BOUND_FIRST_S, TEMPLATE_SHARE

    inst = generate_custom(8, 8, "llama2-70b", 128, 2, 2, seed=0)  # (at 64 GPUs: infeasible)
    limit = 2 * BOUND_FIRST_S / (1 - TEMPLATE_SHARE)  # time enough for the bound first
    result = schedopt.solve(inst, "decomp:physical", time_limit_s=limit)
    rounds = result.stats["bound_rounds"]
    assert isinstance(rounds, float) and rounds >= 1
    assert _stats(result.stats)["bound_rounds"] == rounds
