"""Water filling with Gavel's priority reweighting by entity (issue #19): every job's level
equals reference.reweighted_fill's (scipy's LPs, a bottleneck found by lifting each job with
its own LP), for the ``fairness`` and ``fifo`` rules, alone and through Gavel's interface; the
answer passes the validator; bad entity arguments name the argument."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedopt.core.errors import InvalidInstanceError
from schedopt.core.status import Status
from schedopt.integrations.gavel import (
    MaxMinFairnessWaterFillingPacking,
    MaxMinFairnessWaterFillingPerf,
)
from schedopt.integrations.gavel_entities import entities
from schedopt.problems.timeshare import Policy, TimeshareInstance, generate_custom
from schedopt.problems.timeshare.codec import shares_of, throughputs
from schedopt.problems.timeshare.data import build_data
from schedopt.problems.timeshare.exact import all_columns
from schedopt.problems.timeshare.strategies import instance_dicts
from schedopt.problems.timeshare.validate import validate
from schedopt.problems.timeshare.waterfill import water_fill
from schedopt.problems.timeshare.waterfill_entities import Entities, water_fill_entities

from . import reference
from .test_waterfill import _round

FOREVER = lambda: 60.0  # noqa: E731


def _entities(n: int, seed: int, rule: str | None = None) -> Entities:
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 4))
    entity_of = rng.integers(0, count, size=n)
    fifo = np.array([rng.random() < 0.5 if rule is None else rule == "fifo" for _ in range(count)])
    rank = np.argsort(rng.permutation(n))  # any order within an entity
    return Entities(entity_of, rng.integers(1, 6, size=count).astype(float), fifo, rank)


def gavel_weights(groups: Entities, priority: np.ndarray, frozen: np.ndarray) -> np.ndarray:
    """Gavel's ``_compute_priority_weights``, written out job by job apart from
    ``Entities.priorities``: ``fairness`` splits the entity's weight over its jobs not frozen
    in proportion to their priorities; ``fifo`` gives it to the first of them by rank."""
    out = np.zeros(len(priority))
    for e in range(len(groups.weight)):
        jobs = [j for j in range(len(priority)) if groups.entity_of[j] == e and not frozen[j]]
        if not jobs:
            continue
        if groups.fifo[e]:
            out[min(jobs, key=lambda j: groups.rank[j])] = groups.weight[e]
        else:
            total = sum(priority[j] for j in jobs)
            for j in jobs:
                out[j] = groups.weight[e] * priority[j] / total
    return out


def _levels(inst: TimeshareInstance, groups: Entities) -> tuple[np.ndarray, np.ndarray]:
    data = build_data(inst)
    found = water_fill_entities(data, groups, FOREVER)
    assert found.status is Status.OPTIMAL and found.x is not None and found.levels is not None
    assert not validate(inst, shares_of(data, data.singles, found.x))
    rho = throughputs(data.singles, found.x, data.num_jobs)
    want = reference.reweighted_fill(
        inst, data.weights(), lambda frozen: gavel_weights(groups, data.priority, frozen)
    )
    return data.weights() * rho, want


@pytest.mark.parametrize("rule", ["fairness", "fifo", None])
@pytest.mark.parametrize("seed", range(6))
def test_every_jobs_level_is_the_reference(seed: int, rule: str | None) -> None:
    inst = _round(seed)
    got, want = _levels(inst, _entities(len(inst.jobs), seed, rule))
    assert got == pytest.approx(want, rel=1e-6, abs=1e-7)


@pytest.mark.parametrize("seed", range(3))
def test_the_throughput_blind_policy_reweights_the_same_way(seed: int) -> None:
    inst = _round(seed, "max_min_fairness")
    got, want = _levels(inst, _entities(len(inst.jobs), seed))
    assert got == pytest.approx(want, rel=1e-6, abs=1e-7)


def test_one_entity_per_job_weighted_by_its_priority_is_plain_water_filling() -> None:
    """``fairness`` with every job its own entity of weight π_j reweights nothing: the levels
    are the leximin of waterfill.py."""
    for seed in range(4):
        inst = _round(seed)
        data = build_data(inst)
        n = data.num_jobs
        groups = Entities(np.arange(n), data.priority.copy(), np.zeros(n, dtype=bool), np.zeros(n))
        found = water_fill_entities(data, groups, FOREVER)
        plain = water_fill(data, FOREVER)
        assert found.levels is not None and plain.levels is not None
        assert found.levels == pytest.approx(plain.levels, rel=1e-7)


def test_reweighting_changes_the_answer() -> None:
    """The rules matter on these rounds (else the tests above could not tell them apart)."""
    changed = 0
    for seed in range(6):
        inst = _round(seed)
        data = build_data(inst)
        plain = water_fill(data, FOREVER).levels
        for rule in ("fairness", "fifo"):
            got = water_fill_entities(data, _entities(data.num_jobs, seed, rule), FOREVER).levels
            changed += not np.allclose(got, plain, rtol=1e-4)
    assert changed >= 6


@settings(
    max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    doc=instance_dicts(max_jobs=5, policy=Policy.MAX_MIN_FAIRNESS_PERF),
    seed=st.integers(0, 1000),
)
def test_hypothesis_every_answer_is_valid_and_the_reference(doc: dict, seed: int) -> None:
    inst = TimeshareInstance.model_validate(doc)
    data = build_data(inst)
    groups = _entities(data.num_jobs, seed)
    columns = all_columns(data)
    found = water_fill_entities(data, groups, FOREVER, columns)
    assert found.status is Status.OPTIMAL and found.x is not None
    assert not validate(inst, shares_of(data, columns, found.x))
    if not inst.pairs and not inst.colocation:
        got, want = _levels(inst, groups)
        assert got == pytest.approx(want, rel=1e-6, abs=1e-7)


def _gavel_round(seed: int, rules: dict):
    rng = np.random.default_rng(seed)
    mapping: dict[str, list[int]] = {e: [] for e in rules}
    thr, sf, pw = {}, {}, {}
    for i in range(8):
        rates = np.sort(rng.random(3))
        thr[i] = dict(zip(["k80", "p100", "v100"], rates.tolist(), strict=True))
        sf[i] = int(rng.choice([1, 2]))
        e = list(rules)[int(rng.integers(len(rules)))]
        pw[i] = float(rng.integers(1, 5))
        mapping[e].append(i)
    weights = {e: float(rng.integers(1, 5)) for e in rules}
    return thr, sf, pw, {"k80": 4, "p100": 4, "v100": 4}, weights, mapping


@pytest.mark.parametrize("seed", range(3))
def test_gavels_arguments_give_the_reference(seed: int) -> None:
    rules = {"a": "fairness", "b": "fifo", "c": "fairness"}
    thr, sf, pw, cluster, weights, mapping = _gavel_round(seed, rules)
    policy = MaxMinFairnessWaterFillingPerf(rules)
    out = policy.get_allocation(
        thr, sf, pw, cluster, entity_weights=weights, entity_to_job_mapping=mapping
    )
    inst = policy.last_instance
    assert inst is not None
    data = build_data(inst)
    row_of = {k: inst.job_index[v] for k, v in policy._ids.items()}
    groups = entities(rules, weights, mapping, row_of)
    want = reference.reweighted_fill(
        inst, data.weights(), lambda frozen: gavel_weights(groups, data.priority, frozen)
    )
    rho = np.zeros(len(thr))
    for k, row in out.items():
        rho[row_of[k]] = sum(x * thr[k][w] for w, x in row.items())
    assert data.weights() * rho == pytest.approx(want, rel=1e-6, abs=1e-7)
    # the packed class takes the same arguments
    packed = MaxMinFairnessWaterFillingPacking(rules)
    packed.get_allocation(
        thr, sf, pw, cluster, entity_weights=weights, entity_to_job_mapping=mapping
    )
    assert packed.last_result.status is Status.OPTIMAL


def test_bad_entity_arguments_name_the_argument() -> None:
    rules = {"a": "fairness", "b": "fifo"}
    thr, sf, pw, cluster, weights, mapping = _gavel_round(0, rules)
    policy = MaxMinFairnessWaterFillingPerf(rules)

    def call(**kw):
        args = {"entity_weights": weights, "entity_to_job_mapping": mapping, **kw}
        policy.get_allocation(thr, sf, pw, cluster, **args)

    with pytest.raises(InvalidInstanceError, match="entity_to_job_mapping"):
        call(entity_to_job_mapping=None)
    with pytest.raises(InvalidInstanceError, match=r"entity_weights\['a'\]"):
        call(entity_weights={"a": -1.0, "b": 1.0})
    with pytest.raises(InvalidInstanceError, match=r"entity_weights\['b'\]"):
        call(entity_weights={"a": 1.0})
    with pytest.raises(InvalidInstanceError, match="in no entity"):
        call(entity_to_job_mapping={"a": [0], "b": [1]})
    with pytest.raises(InvalidInstanceError, match="in two entities"):
        call(entity_to_job_mapping={"a": list(thr), "b": [0]})
    with pytest.raises(InvalidInstanceError, match="has no rule"):
        call(entity_to_job_mapping={**mapping, "z": []})
    # without rules Gavel ignores the entity arguments; so does the drop-in
    plain = MaxMinFairnessWaterFillingPerf()
    plain.get_allocation(thr, sf, pw, cluster, entity_weights=None, entity_to_job_mapping=None)
    assert plain.last_result.status is Status.OPTIMAL


def _gavel_water_filling():
    src = os.environ.get("GAVEL_SRC")
    if not src or not os.path.isdir(os.path.join(src, "scheduler", "policies")):
        pytest.skip("GAVEL_SRC (a checkout of stanford-futuredata/gavel) is not set")
    cp = pytest.importorskip("cvxpy")
    if "HIGHS" not in cp.installed_solvers():
        pytest.skip("cvxpy has no HiGHS for Gavel's bottleneck MILP (Gavel asks for GLPK_MI)")
    sys.path.insert(0, os.path.join(src, "scheduler"))
    from policies import max_min_fairness_water_filling  # type: ignore[import-not-found]

    return cp, max_min_fairness_water_filling.MaxMinFairnessWaterFillingPolicyWithPerf


def test_the_same_as_gavels_on_fairness_entities(monkeypatch) -> None:
    """Gavel's own class, its bottleneck MILP on HiGHS instead of GLPK_MI (not installed) and
    rounded to integers as GLPK's, gives the same rates to Gavel's slack (1e-4) on every
    round where that MILP solves.
    Where it fails (an exception Gavel catches), Gavel freezes every job still rising and
    returns the last LP's point, short of the water level: those rounds differ, and
    reference.reweighted_fill (test_gavels_arguments_give_the_reference) decides."""
    cp, gavel = _gavel_water_filling()
    solve = cp.Problem.solve

    def on_highs(self, *args, **kwargs):
        if kwargs.get("solver") == "GLPK_MI":
            kwargs["solver"] = "HIGHS"
        return solve(self, *args, **kwargs)

    monkeypatch.setattr(cp.Problem, "solve", on_highs)
    algorithm = sys.modules[gavel.__module__].WaterFillingAlgorithm
    bottlenecks = algorithm._get_bottleneck_jobs
    failed: list[Exception] = []

    def recorded(self, *args, **kwargs):
        try:  # GLPK_MI's z are exact 0/1; HiGHS's may be 1.8e-8, which Gavel reads as 1
            return np.round(bottlenecks(self, *args, **kwargs))
        except Exception as e:
            failed.append(e)
            raise

    monkeypatch.setattr(algorithm, "_get_bottleneck_jobs", recorded)
    rules = {"a": "fairness", "b": "fairness", "c": "fairness"}
    compared = 0
    for seed in range(6):
        thr, sf, pw, cluster, weights, mapping = _gavel_round(seed, rules)
        failed.clear()
        theirs = gavel(rules).get_allocation(
            thr,
            sf,
            pw,
            cluster,
            entity_weights=weights,
            entity_to_job_mapping={e: list(v) for e, v in mapping.items()},
        )
        if failed:
            continue
        ours = MaxMinFairnessWaterFillingPerf(rules).get_allocation(
            thr, sf, pw, cluster, entity_weights=weights, entity_to_job_mapping=mapping
        )

        def rates(a, thr=thr):
            return np.array([sum(x * thr[k][w] for w, x in a[k].items()) for k in sorted(thr)])

        assert rates(ours) == pytest.approx(rates(theirs), rel=1e-3), seed
        compared += 1
    assert compared >= 2


@pytest.mark.parametrize("seed", [8, 12, 20])
def test_rounds_with_pairs_and_levels_near_zero_are_solved(seed: int) -> None:
    """Rounds where phases once ended NO_SOLUTION: a job lifted by HiGHS's tolerance (t* of
    1e-7 where no job can rise) and frozen there made later phases infeasible, and HiGHS's
    presolve called a feasible phase infeasible. Every phase is now proven, and the answer
    valid."""
    inst = generate_custom(24, seed=seed, policy=Policy.MAX_MIN_FAIRNESS_PERF, pairs=True)
    data = build_data(inst)
    columns = all_columns(data)
    found = water_fill_entities(data, _entities(data.num_jobs, seed), FOREVER, columns)
    assert found.status is Status.OPTIMAL and found.x is not None
    assert not validate(inst, shares_of(data, columns, found.x))
