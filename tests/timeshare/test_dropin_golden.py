"""Golden rounds of the drop-in-only policies (instances/timeshare/dropin, made by
benchmarks/make_golden_dropin.py; formulations/timeshare.md, "Drop-in only policies").

Each recorded value is checked apart from schedopt's code: the strategy-proof policy by a
closed form on one GPU type and otherwise by scipy (SLSQP below, a Lagrangian dual above, for the
whole program and each program without a job), water filling by tests/timeshare/reference.py's
process (scipy's LPs, a job frozen when its own LP cannot lift it). Then every back-end that
solves the policy must reach it: schedopt's drop-in, and Gavel's own class when GAVEL_SRC is
set (its strategy-proof policy on cvxpy + ECOS; its water filling asks cvxpy for GLPK_MI).
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from schedopt.core.status import Status
from schedopt.integrations import gavel
from schedopt.problems.timeshare import Policy, TimeshareInstance
from schedopt.problems.timeshare.validate import validate
from tests.timing import PROOF_LIMIT_S

from . import reference

FOLDER = Path(__file__).resolve().parents[2] / "instances" / "timeshare" / "dropin"
GOLDEN: dict[str, dict[str, Any]] = json.loads((FOLDER / "golden.json").read_text())
STRATEGY_PROOF = "MaxMinFairnessStrategyProofPolicyWithPerf"
BLIND = "MaxMinFairnessWaterFillingPolicy"
#: the programs' gap on the geometric mean at schedopt's default tolerance (1e-6) bounds the
#: discounted rates' error in log by |J| times that (formulations/timeshare.md)
RATES_REL = 1e-5


def _doc(name: str) -> dict[str, Any]:
    return json.loads((FOLDER / name).read_text())  # type: ignore[no-any-return]


def _instance(doc: dict[str, Any], without: str | None = None) -> TimeshareInstance:
    """The round as a timeshare instance (jobs in sorted order), for the references."""
    policy = Policy.MAX_MIN_FAIRNESS if doc["policy"] == BLIND else Policy.MAX_MIN_FAIRNESS_PERF
    jobs = [
        {
            "id": j,
            "throughput": doc["throughputs"][j],
            "scale_factor": doc["scale_factors"][j],
            "priority_weight": doc["priority_weights"][j],
        }
        for j in sorted(doc["throughputs"])
        if j != without
    ]
    pairs = [p for p in doc.get("pair_throughputs", ()) if without not in p["jobs"]]
    return TimeshareInstance.model_validate(
        {"policy": policy.value, "workers": doc["cluster_spec"], "jobs": jobs, "pairs": pairs}
    )


def _weights(inst: TimeshareInstance) -> np.ndarray:
    """a_j, from the instance's fields (Gavel's normalisation)."""
    s_over_pi = np.array([j.scale_factor / j.priority_weight for j in inst.jobs])
    if inst.policy is Policy.MAX_MIN_FAIRNESS:
        return s_over_pi
    return s_over_pi / reference.equal_split(inst)


def _run(doc: dict[str, Any], policy: Any) -> dict[Any, dict[str, float]]:
    """``get_allocation`` on the round (a pair's key: the tuple of its ids, as Gavel's)."""
    pairs = {tuple(p["jobs"]): p["throughput"] for p in doc.get("pair_throughputs", ())}
    thr = {**doc["throughputs"], **pairs}
    args = (thr, doc["scale_factors"], doc["priority_weights"], doc["cluster_spec"])
    if doc["policy"] == STRATEGY_PROOF:
        return policy.get_allocation(*args)[0]  # type: ignore[no-any-return]
    entities = {}
    if "priority_reweighting_policies" in doc:
        entities = {
            "entity_weights": doc["entity_weights"],
            "entity_to_job_mapping": doc["entity_to_job_mapping"],
        }
    return policy.get_allocation(*args, **entities)  # type: ignore[no-any-return]


def _rates(doc: dict[str, Any], allocation: dict[Any, dict[str, float]]) -> dict[str, float]:
    """ρ_j in steps/s: alone, and in each pair at the pair's rate."""
    thr = doc["throughputs"]
    out = {j: sum(x * thr[j][w] for w, x in allocation[j].items()) for j in thr}
    for pair in doc.get("pair_throughputs", ()):
        for k, j in enumerate(pair["jobs"]):
            shares = allocation[tuple(pair["jobs"])]
            out[j] += sum(x * pair["throughput"][w][k] for w, x in shares.items())
    return out


def _levels(
    doc: dict[str, Any], allocation: dict[Any, dict[str, float]], *, gavels: bool = False
) -> dict[str, float]:
    """a_j ρ_j (the blind policy: ρ_j is the time where the job runs; Gavel's own blind class
    counts time on every type, where the job's throughput is 0 too, as it sets every throughput
    to 1.0: docs/from-your-scheduler.md, so its levels are read its way)."""
    inst = _instance(doc)
    a = dict(zip((j.id for j in inst.jobs), _weights(inst).tolist(), strict=True))
    thr = doc["throughputs"]
    if doc["policy"] == BLIND:
        rho = {j: sum(x for w, x in allocation[j].items() if gavels or thr[j][w] > 0) for j in thr}
    else:
        rho = _rates(doc, allocation)
    return {j: a[j] * rho[j] for j in thr}


# --- the recorded values, apart from schedopt ----------------------------------------------


def _one_type(inst: TimeshareInstance) -> tuple[float, dict[str, float]]:
    """Nash welfare on one GPU type in closed form: max Σ log(s_j x_j / π_j) s.t. x_j ≤ 1,
    Σ s_j x_j ≤ N has x_j = min(1, 1/(λ s_j)) (KKT), λ the smallest with Σ min(s_j, 1/λ) ≤ N.
    The geometric mean and each job's discounted rate d_i T_i x_i, d_i = Π_{k≠i} x_k/x^{−i}_k."""
    (w,) = inst.workers
    n_gpus = inst.workers[w]

    def shares(s: np.ndarray) -> np.ndarray:
        if s.sum() <= n_gpus:
            return np.ones(len(s))
        # 1/λ = c: Σ min(s_j, c) = N, piecewise linear and increasing in c
        for k, c in enumerate(np.sort(s)):
            big = np.sort(s)[k:]
            level = (n_gpus - np.sort(s)[:k].sum()) / len(big)
            if level <= c:
                return np.minimum(1.0, level / s)
        raise AssertionError("unreachable")

    s = np.array([float(j.scale_factor) for j in inst.jobs])
    pi = np.array([j.priority_weight for j in inst.jobs])
    x = shares(s)
    geo = math.exp(float(np.mean(np.log(s * x / pi))))
    rates = {}
    for i, job in enumerate(inst.jobs):
        rest = np.arange(len(s)) != i
        d = float(np.prod(x[rest] / shares(s[rest])))
        rates[job.id] = d * job.throughput[w] * x[i]
    return geo, rates


def _nash_optimum(inst: TimeshareInstance) -> float:
    """Σ log u at the optimum, between SLSQP's allocation and the dual bound at its u, which
    must meet within 1e-7 for the check to prove anything."""
    low, u = reference.nash_slsqp(inst)
    high = reference.nash_dual_bound(inst, u)
    assert low <= high + 1e-9 and high - low <= 1e-7, (low, high)
    return high


@pytest.mark.parametrize("name", sorted(GOLDEN), ids=lambda n: Path(n).stem)
def test_the_golden_value_is_what_an_independent_method_finds(name: str) -> None:
    doc, golden = _doc(name), GOLDEN[name]
    assert golden["status"] == Status.OPTIMAL.value
    inst = _instance(doc)
    ids = [j.id for j in inst.jobs]
    if doc["policy"] == STRATEGY_PROOF:
        if len(inst.workers) == 1:
            geo, rates = _one_type(inst)
        else:
            whole = _nash_optimum(inst)
            geo = math.exp(whole / len(ids))
            a = dict(zip(ids, _weights(inst).tolist(), strict=True))
            # d_i u_i = exp(NW* − NW*_{−i}): the discounted rate is d_i u_i / a_i
            rates = {j: math.exp(whole - _nash_optimum(_instance(doc, j))) / a[j] for j in ids}
        assert golden["geometric_mean"] == pytest.approx(geo, rel=1e-7)
        assert [golden["rates"][j] for j in ids] == pytest.approx([rates[j] for j in ids], rel=1e-6)
        return
    weights = _weights(inst)
    if "priority_reweighting_policies" in doc:
        want = reference.reweighted_fill(inst, weights, _entity_priorities(doc, inst))
        assert [golden["levels"][j] for j in ids] == pytest.approx(want.tolist(), rel=1e-6)
    else:
        want = reference.leximin(inst, weights)
        assert sorted(golden["levels"].values()) == pytest.approx(want.tolist(), rel=1e-6)


def _entity_priorities(doc: dict[str, Any], inst: TimeshareInstance):
    """Gavel's reweighting from the round's arguments: ``fairness`` splits E_e over the
    entity's jobs not frozen by priority, ``fifo`` gives it to the first of them by id."""
    ids = [j.id for j in inst.jobs]
    pi = {j.id: j.priority_weight for j in inst.jobs}

    def priorities(frozen: np.ndarray) -> np.ndarray:
        out = dict.fromkeys(ids, 0.0)
        for e, members in doc["entity_to_job_mapping"].items():
            live = sorted(j for j in members if not frozen[ids.index(j)])
            if not live:
                continue
            weight = doc["entity_weights"][e]
            if doc["priority_reweighting_policies"][e] == "fifo":
                out[live[0]] = weight
            else:
                total = sum(pi[j] for j in live)
                out.update({j: weight * pi[j] / total for j in live})
        return np.array([out[j] for j in ids])

    return priorities


def test_the_rounds_exercise_what_they_are_for() -> None:
    """Every drop-in-only policy and rule has a round; the water-filling rounds have more than
    one level, one of them three (else leximin could not be told from max-min)."""
    docs = {name: _doc(name) for name in GOLDEN}
    policies = {d["policy"] for d in docs.values()}
    assert policies == {
        STRATEGY_PROOF,
        BLIND,
        "MaxMinFairnessWaterFillingPolicyWithPerf",
        "MaxMinFairnessWaterFillingPolicyWithPacking",
    }
    rules = {r for d in docs.values() for r in d.get("priority_reweighting_policies", {}).values()}
    assert rules == {"fairness", "fifo"}
    assert any(len(d["cluster_spec"]) == 1 for d in docs.values())  # the closed form's case
    counts = {
        name: len({round(v, 6) for v in GOLDEN[name]["levels"].values()})
        for name, d in docs.items()
        if d["policy"] != STRATEGY_PROOF
    }
    assert min(counts.values()) >= 2 and max(counts.values()) >= 3, counts


# --- every back-end reaches it ---------------------------------------------------------------


def _gavel_class(policy: str):
    src = os.environ.get("GAVEL_SRC")
    if not src or not os.path.isdir(os.path.join(src, "scheduler", "policies")):
        pytest.skip("GAVEL_SRC (a checkout of stanford-futuredata/gavel) is not set")
    cp = pytest.importorskip("cvxpy")
    if policy == STRATEGY_PROOF:
        pytest.importorskip("ecos")
        sys.path.insert(0, os.path.join(src, "scheduler"))
        from policies import max_min_fairness_strategy_proof as module  # type: ignore[import-not-found]

        return lambda doc: module.MaxMinFairnessStrategyProofPolicyWithPerf("ECOS")
    if "GLPK_MI" not in cp.installed_solvers():
        pytest.skip("Gavel's water filling asks cvxpy for GLPK_MI, not installed here")
    sys.path.insert(0, os.path.join(src, "scheduler"))
    from job_id_pair import JobIdPair  # type: ignore[import-not-found]
    from policies import max_min_fairness_water_filling as module  # type: ignore[import-not-found]

    cls = getattr(module, policy)
    return lambda doc: _GavelKeys(cls(doc.get("priority_reweighting_policies")), JobIdPair)


class _GavelKeys:
    """A Gavel policy called as Gavel's scheduler calls it: jobs and pairs keyed by Gavel's
    ``JobIdPair`` (its water filling sorts the keys, so a pair's tuple beside the jobs' names
    cannot be sorted), the allocation keyed back by name and by a pair's tuple of names."""

    def __init__(self, policy: Any, job_id_pair: Any) -> None:
        self._policy, self._pair = policy, job_id_pair

    def get_allocation(self, thr, scale, priority, cluster, **entities):
        names = sorted(k for k in thr if isinstance(k, str))
        pairs = [k for k in thr if not isinstance(k, str)]
        if pairs and len(pairs) < len(names) * (len(names) - 1) // 2:
            # Gavel's scheduler offers every pair; its constraints reshape x to one row per job
            # (policy.get_base_constraints), which fails when jobs are in different numbers
            pytest.skip(
                f"Gavel's packing classes take every pair of jobs; this round has {len(pairs)}"
            )
        one = {n: self._pair(i, None) for i, n in enumerate(names)}

        def key(k: Any) -> Any:
            return one[k] if isinstance(k, str) else self._pair(*(names.index(n) for n in k))

        back = {key(k): k for k in thr}
        if entities:
            mapping = entities["entity_to_job_mapping"]
            entities = {
                **entities,
                "entity_to_job_mapping": {e: [one[j] for j in js] for e, js in mapping.items()},
            }
        got = self._policy.get_allocation(
            {key(k): v for k, v in thr.items()},
            {one[j]: v for j, v in scale.items()},
            {one[j]: v for j, v in priority.items()},
            cluster,
            **entities,
        )
        return {back[k]: v for k, v in got.items()}


def _schedopt(doc: dict[str, Any]) -> Any:
    cls = getattr(gavel, doc["policy"])
    if doc["policy"] == STRATEGY_PROOF:
        return cls(time_limit_s=PROOF_LIMIT_S)
    return cls(doc.get("priority_reweighting_policies"), time_limit_s=PROOF_LIMIT_S)


@pytest.mark.parametrize("backend", ["schedopt", "gavel"])
@pytest.mark.parametrize("name", sorted(GOLDEN), ids=lambda n: Path(n).stem)
def test_every_backend_reaches_the_golden_value(name: str, backend: str) -> None:
    doc, golden = _doc(name), GOLDEN[name]
    policy = _schedopt(doc) if backend == "schedopt" else _gavel_class(doc["policy"])(doc)
    allocation = _run(doc, policy)
    if backend == "schedopt":
        result = policy.last_result
        assert result.status is Status.OPTIMAL, result.explanation
        assert validate(policy.last_instance, result.solution) == []
    if doc["policy"] == STRATEGY_PROOF:
        rates = _rates(doc, allocation)
        ids = sorted(rates)
        assert [rates[j] for j in ids] == pytest.approx(
            [golden["rates"][j] for j in ids], rel=RATES_REL
        )
        if backend == "schedopt":
            geo = golden["geometric_mean"]
            assert result.objective == pytest.approx(geo, rel=1e-6)
            assert result.objective <= geo * (1 + 1e-9) <= result.bound * (1 + 2e-9)
        return
    levels = _levels(doc, allocation, gavels=backend == "gavel")
    assert [levels[j] for j in sorted(levels)] == pytest.approx(
        [golden["levels"][j] for j in sorted(levels)], rel=1e-6
    )
