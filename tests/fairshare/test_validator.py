"""The independent validator catches every kind of broken solution (one test per V id)."""

from __future__ import annotations

from pathlib import Path

import pytest

import schedopt
from schedopt.problems.fairshare import SPEC, Allocation, FairshareSolution

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "instances" / "fairshare"


def _solve(name: str):
    inst = schedopt.load(GOLDEN_DIR / name)
    return inst, schedopt.solve(inst, "milp:highs", time_limit_s=30).solution


@pytest.fixture(scope="module")
def multi():
    return _solve("32gpu-20j-s0.json")


@pytest.fixture(scope="module")
def onehost():
    return _solve("32gpu-20j-onehost-s1.json")


@pytest.fixture(scope="module")
def hard():
    return _solve("32gpu-24j-hard-cap-s2.json")


def ids(inst, sol) -> set[str]:
    return {v.constraint_id for v in SPEC.validate(inst, sol)}


def _replace(sol: FairshareSolution, job_id: str, **changes) -> FairshareSolution:
    allocs = tuple(
        Allocation(**{**a.model_dump(), **changes}) if a.job_id == job_id else a
        for a in sol.allocations
    )
    return FairshareSolution(allocations=allocs)


def _running(sol, n_min: int = 1) -> Allocation:
    return next(a for a in sol.allocations if a.count >= n_min)


def test_untouched_solutions_are_valid(multi, onehost, hard) -> None:
    for inst, sol in (multi, onehost, hard):
        assert SPEC.validate(inst, sol) == []


def test_missing_or_duplicate_allocation_V1(multi) -> None:
    inst, sol = multi
    assert "V1" in ids(inst, FairshareSolution(allocations=sol.allocations[1:]))
    dup = FairshareSolution(allocations=(*sol.allocations, sol.allocations[0]))
    assert "V1" in ids(inst, dup)
    a = _running(sol)
    assert "V1" in ids(inst, _replace(sol, a.job_id, gpu_type=None))


def test_disallowed_gang_size_V2(multi) -> None:
    inst, sol = multi
    a = _running(sol)
    h = next(iter(a.hosts))
    bad = _replace(sol, a.job_id, hosts={h: 3})  # no job of the generator allows 3 GPUs
    assert "V2" in ids(inst, bad)


def test_wrong_host_type_or_over_capacity_V3(multi) -> None:
    inst, sol = multi
    a = _running(sol)
    other = next(h for h, g in inst.host_type.items() if g != a.gpu_type)
    assert "V3" in ids(inst, _replace(sol, a.job_id, hosts={other: a.count}))
    # every running job of that type piled onto one host
    h = next(iter(a.hosts))
    piled = FairshareSolution(
        allocations=tuple(
            Allocation(job_id=x.job_id, gpu_type=x.gpu_type, hosts={h: x.count})
            if x.gpu_type == a.gpu_type and x.hosts
            else x
            for x in sol.allocations
        )
    )
    assert "V3" in ids(inst, piled)
    assert "V3" in ids(inst, _replace(sol, a.job_id, hosts={"nowhere": a.count}))


def test_split_across_hosts_in_one_host_mode_V4(onehost) -> None:
    inst, sol = onehost
    pools = {g for g in inst.host_type.values() if list(inst.host_type.values()).count(g) > 1}
    a = next(x for x in sol.allocations if x.count >= 2 and x.gpu_type in pools)
    h = next(iter(a.hosts))
    other = next(x for x, g in inst.host_type.items() if g == a.gpu_type and x != h)
    split = {h: a.count - 1, other: 1}
    assert "V4" in ids(inst, _replace(sol, a.job_id, hosts=split))


def test_guarantee_broken_V5(hard) -> None:
    inst, sol = hard
    assert inst.guarantees_hard
    tenant = max(inst.tenants, key=lambda t: t.weight).id
    idle = FairshareSolution(
        allocations=tuple(
            Allocation(job_id=a.job_id)
            if inst.jobs[inst.job_index[a.job_id]].tenant == tenant
            else a
            for a in sol.allocations
        )
    )
    assert "V5" in ids(inst, idle)


def test_preemption_cap_V6(hard) -> None:
    inst, sol = hard
    assert inst.max_preemptions is not None
    idle = FairshareSolution(
        allocations=tuple(Allocation(job_id=a.job_id) for a in sol.allocations)
    )
    running = sum(1 for j in inst.jobs if j.previous is not None)
    assert running > inst.max_preemptions
    assert "V6" in ids(inst, idle)


def test_preemption_cap_is_exact_V6(hard) -> None:
    """Exactly max_preemptions changes pass, one more fails (issue 7, item 14: an off-by-one
    in the cap survived the suite)."""
    inst, _ = hard
    cap = inst.max_preemptions
    previous = [j for j in inst.jobs if j.previous is not None]
    assert cap is not None and len(previous) > cap + 1

    def preempting(k: int) -> FairshareSolution:
        """Every job where it ran before, except the first ``k`` of them, idled."""
        allocs = [Allocation(job_id=j.id) for j in inst.jobs if j.previous is None]
        for i, j in enumerate(previous):
            p = j.previous
            kept = Allocation(job_id=j.id, gpu_type=p.gpu_type, hosts=dict(p.hosts))
            allocs.append(Allocation(job_id=j.id) if i < k else kept)
        return FairshareSolution(allocations=tuple(allocs))

    def v6(k: int) -> list[str]:
        return [v.message for v in SPEC.validate(inst, preempting(k)) if v.constraint_id == "V6"]

    assert v6(0) == [] and v6(cap) == []
    assert v6(cap + 1) == [f"{cap + 1} preemptions > max_preemptions {cap}"]


def test_metrics_report_shares_and_fairness(multi) -> None:
    inst, sol = multi
    m = SPEC.metrics(inst, sol)
    shares = [v for k, v in m.items() if k.startswith("share[")]
    assert shares and min(shares) == pytest.approx(m["min_share"])
    assert 0 < m["jain_index"] <= 1 + 1e-12
    assert m["max_min_share_ratio"] == pytest.approx(max(shares) / min(shares))
    assert m["min_share"] == pytest.approx(SPEC.evaluate(inst, sol)[0])


def _per_job(inst, **changes):
    """``inst`` in per-job mode (job weights 1, 2, 1, …), with ``changes`` to the document."""
    doc = inst.model_dump(mode="json")
    doc["fairness_unit"] = "job"
    for i, job in enumerate(doc["jobs"]):
        job["weight"] = 2.0 if i % 2 else 1.0
    doc.update(changes)
    return type(inst).model_validate(doc)


def test_per_job_l1_is_re_derived_from_the_jobs(multi) -> None:
    """F1–F3 by hand: d_j = min(δ_j, C·w_j/Σw), D'_j = D_j + L·d_j, share (U_j + L·g_j)/D'_j;
    the tenants' accounts do not enter."""
    base, sol = multi
    inst = _per_job(base)
    C = inst.free_gpus
    biggest = {j.id: max(n for t in j.throughput.values() for n in t) for j in inst.jobs}
    total = sum(j.unit_weight for j in inst.jobs)  # every job here has an option
    shares = {}
    for j in inst.jobs:
        d = min(biggest[j.id], C * j.unit_weight / total)
        after = j.deserved_gpu_s + inst.round_s * d
        shares[j.id] = (j.used_gpu_s + inst.round_s * sol.allocation(j.id).count) / after
    assert SPEC.validate(inst, sol) == []
    assert SPEC.evaluate(inst, sol)[0] == pytest.approx(min(shares.values()))
    m = SPEC.metrics(inst, sol)
    assert m["units_counted"] == len(inst.jobs) and m["units_not_counted"] == 0
    assert {k: v for k, v in m.items() if k.startswith("share[")} == pytest.approx(
        {f"share[{k}]": v for k, v in shares.items()}
    )
    rich = [t.model_copy(update={"used_gpu_s": 1e9}) for t in inst.tenants]
    assert SPEC.evaluate(inst.model_copy(update={"tenants": tuple(rich)}), sol)[0] == (
        pytest.approx(min(shares.values()))
    )


def test_guarantees_stay_per_tenant_in_per_job_mode_V5(hard) -> None:
    base, sol = hard
    inst = _per_job(base, max_preemptions=None)
    assert SPEC.validate(inst, sol) == []
    tenant = max(inst.tenants, key=lambda t: t.weight).id
    idle = FairshareSolution(
        allocations=tuple(
            Allocation(job_id=a.job_id)
            if inst.jobs[inst.job_index[a.job_id]].tenant == tenant
            else a
            for a in sol.allocations
        )
    )
    assert "V5" in ids(inst, idle)


def test_metrics_count_tenants_whose_quota_rounds_to_zero(multi) -> None:
    inst, sol = multi
    doc = inst.model_dump(mode="json")
    doc["tenants"].append({"id": "tiny", "weight": 1e-6})
    doc["jobs"][0]["tenant"] = "tiny"
    tiny = type(inst).model_validate(doc)
    m = SPEC.metrics(tiny, sol)
    assert m["units_not_counted"] == 1 and "share[tiny]" not in m
    assert m["units_counted"] == len(inst.tenants)


def test_what_the_validator_derives_once_follows_the_instance(multi) -> None:
    """validate/evaluate/metrics derive the cluster and demands once per instance (issue #17):
    another instance, even one alike but for its failed GPUs, is derived afresh, and what was
    derived goes with its instance (``FrozenModel.derived``)."""
    import gc
    import weakref

    inst, sol = multi
    a = _running(sol)
    host = next(iter(a.hosts))
    failed = {**inst.model_dump(), "unavailable_gpus": list(inst.cluster.gpus_on(host))}
    broken = type(inst).model_validate(failed)
    assert "V3" not in ids(inst, sol)
    assert "V3" in ids(broken, sol)  # the host has no free GPU there
    assert "V3" not in ids(inst, sol)
    # fewer GPUs: other quotas, so another L1 for the same allocations
    assert SPEC.evaluate(broken, sol)[0] != SPEC.evaluate(inst, sol)[0]
    assert "fairshare.validate" in broken.derived_views
    derived = broken.derived("fairshare.validate", lambda: None)
    assert derived is not None
    SPEC.evaluate(broken, sol)
    assert broken.derived("fairshare.validate", lambda: None) is derived  # made once
    gone = weakref.ref(derived)
    del broken, derived
    gc.collect()
    assert gone() is None


def test_evaluate_and_metrics_read_the_answer_they_are_given(multi) -> None:
    """The answer read last is kept with the instance: another answer in between gives its
    own values, and the first's come back unchanged."""
    inst, sol = multi
    idle = FairshareSolution(
        allocations=tuple(Allocation(job_id=a.job_id) for a in sol.allocations)
    )
    first, first_metrics = SPEC.evaluate(inst, sol), SPEC.metrics(inst, sol)
    assert SPEC.evaluate(inst, idle)[1] == 0.0
    assert SPEC.metrics(inst, idle)["gpus_allocated"] == 0.0
    assert first[1] > 0.0 and first_metrics["gpus_allocated"] > 0.0
    assert SPEC.evaluate(inst, sol) == first and SPEC.metrics(inst, sol) == first_metrics


# --- V1 checks no test reached (a mutation audit, #17): each broken alone, its own message ---


def _v1(inst, sol) -> list[str]:
    return [v.message for v in SPEC.validate(inst, sol) if v.constraint_id == "V1"]


def test_allocation_for_an_unknown_job_V1(multi) -> None:
    inst, sol = multi
    ghost = sol.allocations[0].model_copy(update={"job_id": "ghost"})
    bad = FairshareSolution(allocations=(*sol.allocations, ghost))
    assert _v1(inst, bad) == ["allocation for unknown job 'ghost'"]


def test_host_with_zero_gpus_V1(multi) -> None:
    inst, sol = multi
    a = _running(sol)
    zero = a.model_copy(update={"hosts": {**a.hosts, next(iter(a.hosts)): 0}})
    allocs = tuple(zero if x.job_id == a.job_id else x for x in sol.allocations)
    bad = FairshareSolution.model_construct(allocations=allocs)
    assert _v1(inst, bad) == [f"job {a.job_id!r}: host GPU counts must be >= 1"]
