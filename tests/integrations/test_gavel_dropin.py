"""The Gavel drop-in in a scheduler's loop (issue #19): failed rounds are never silent, Gavel's
names and constructors, gangs that fit nowhere, the throughput-blind variants."""

from __future__ import annotations

import numpy as np
import pytest

from schedopt.core.status import Status
from schedopt.integrations import gavel
from schedopt.integrations.gavel import (
    FinishTimeFairness,
    FinishTimeFairnessBlind,
    MaxMinFairnessPacking,
    MaxMinFairnessPerf,
    MinTotalDuration,
    MinTotalDurationBlind,
    RoundFailed,
)

CLUSTER = {"v100": 36, "p100": 36, "k80": 36}

#: Gavel's ``self._name`` of each class (scheduler/policies/*.py), which its scheduler reads.
GAVEL_NAMES = {
    "MaxMinFairnessPolicy": "MaxMinFairness",
    "MaxMinFairnessPolicyWithPerf": "MaxMinFairness_Perf",
    "MaxMinFairnessPolicyWithPacking": "MaxMinFairness_Packing",
    "MinTotalDurationPolicy": "MinTotalDuration",
    "MinTotalDurationPolicyWithPerf": "MinTotalDuration_Perf",
    "MinTotalDurationPolicyWithPacking": "MinTotalDuration_Packing",
    "FinishTimeFairnessPolicy": "FinishTimeFairness",
    "FinishTimeFairnessPolicyWithPerf": "FinishTimeFairness_Perf",
    "FinishTimeFairnessPolicyWithPacking": "FinishTimeFairness_Packing",
}


def _round(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    thr = {
        i: {"v100": float(rng.uniform(2, 10)), "p100": float(rng.uniform(1, 5)), "k80": 1.0}
        for i in range(n)
    }
    ones = {i: 1 for i in thr}
    remaining = {i: float(rng.uniform(1e3, 1e5)) for i in thr}
    since = {i: float(rng.uniform(0, 1e4)) for i in thr}
    return thr, ones, {i: 1.0 for i in thr}, since, remaining


@pytest.mark.parametrize("gavel_name,name", sorted(GAVEL_NAMES.items()))
def test_gavel_class_names_and_policy_names(gavel_name: str, name: str) -> None:
    """Gavel's scheduler builds pairs only when 'Packing' is in ``policy.name``; its class
    takes the solver first."""
    cls = getattr(gavel, gavel_name)
    policy = cls("ECOS")
    assert policy.name == name
    assert ("Packing" in policy.name) == gavel_name.endswith("WithPacking")


def test_solver_first_as_in_gavel() -> None:
    thr, sf, pw, _, _ = _round(3)
    out = MaxMinFairnessPerf("ECOS").get_allocation(thr, sf, pw, CLUSTER)
    assert set(out) == set(thr)
    assert MaxMinFairnessPacking("GUROBI", time_limit_s=5).time_limit_s == 5


def test_a_round_out_of_time_raises() -> None:
    """300 jobs in 1 ms: no proven optimum, so no allocation (before #19 the isolated split
    came back as if it were the answer)."""
    thr, sf, pw, since, remaining = _round(300)
    policy = FinishTimeFairness(time_limit_s=0.001)
    with pytest.raises(RoundFailed) as failed:
        policy.get_allocation(thr, sf, pw, since, remaining, CLUSTER)
    assert failed.value.result.status is not Status.OPTIMAL


def test_a_round_out_of_time_can_keep_the_previous_allocation() -> None:
    thr, sf, pw, since, remaining = _round(300)
    policy = FinishTimeFairness(on_failure="previous")
    first = policy.get_allocation(thr, sf, pw, since, remaining, CLUSTER)
    assert policy.last_result.status is Status.OPTIMAL
    # a job leaves, one arrives, and the next round has no time at all
    for d in (thr, sf, pw, since, remaining):
        del d[0]
    thr[300], sf[300], pw[300] = {"v100": 3.0, "p100": 2.0, "k80": 1.0}, 1, 1.0
    since[300], remaining[300] = 0.0, 1e4
    policy.time_limit_s = 0.001
    second = policy.get_allocation(thr, sf, pw, since, remaining, CLUSTER)
    assert policy.last_result.status is not Status.OPTIMAL
    assert second[300] == {"v100": 0.0, "p100": 0.0, "k80": 0.0}
    assert all(second[k] == first[k] for k in range(1, 300))
    with pytest.raises(ValueError, match="on_failure"):
        MaxMinFairnessPerf(on_failure="zeros")  # type: ignore[arg-type]


def test_a_gang_that_fits_nowhere_gets_no_time() -> None:
    """A 4-GPU job on a 2:2:2 cluster: Gavel's LP gives it no time; the others share as if
    it were not there."""
    small = {"v100": 2, "p100": 2, "k80": 2}
    thr, sf, pw, _, _ = _round(3)
    big = dict(thr)
    big[9] = {"v100": 5.0, "p100": 3.0, "k80": 1.0}
    big[(0, 9)] = {"v100": [1.0, 1.0], "p100": [1.0, 1.0], "k80": [0.5, 0.5]}
    out = MaxMinFairnessPerf().get_allocation(big, {**sf, 9: 4}, {**pw, 9: 1.0}, small)
    assert out[9] == {"v100": 0.0, "p100": 0.0, "k80": 0.0}
    assert all(v == 0.0 for v in out[(0, 9)].values())
    alone = MaxMinFairnessPerf().get_allocation(thr, sf, pw, small)
    for k in thr:
        assert out[k] == pytest.approx(alone[k], abs=1e-9)
    # only that job: no time for anyone, not an exception
    only = MaxMinFairnessPerf().get_allocation({9: big[9]}, {9: 4}, {9: 1.0}, small)
    assert only == {9: {"v100": 0.0, "p100": 0.0, "k80": 0.0}}


def test_throughput_blind_makespan_and_ftf_take_every_type_at_the_v100_rate() -> None:
    """Gavel's ``MinTotalDurationPolicy`` and ``FinishTimeFairnessPolicy`` replace every rate
    by the job's V100 rate before solving the perf policy."""
    thr, sf, pw, since, remaining = _round(4, seed=3)
    blind = {k: dict.fromkeys(r, r["v100"]) for k, r in thr.items()}
    a = MinTotalDurationBlind().get_allocation(thr, sf, remaining, CLUSTER)
    b = MinTotalDuration().get_allocation(blind, sf, remaining, CLUSTER)
    assert a == b
    ftf_a = FinishTimeFairnessBlind().get_allocation(thr, sf, pw, since, remaining, CLUSTER)
    ftf_b = FinishTimeFairness().get_allocation(blind, sf, pw, since, remaining, CLUSTER)
    assert ftf_a == ftf_b


def test_the_docs_first_example_runs_as_pasted(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/from-your-scheduler.md §1 (it once failed: NameError, no ``throughputs``)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "from-your-scheduler.md").read_text()
    code = text.split("## 1.", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "from-your-scheduler.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "Status.OPTIMAL" in printed and "'v100'" in printed


@pytest.mark.parametrize("cls", [gavel.MinTotalDurationPacking, gavel.FinishTimeFairnessPacking])
def test_packed_makespan_and_ftf_reach_the_reference_with_pairs(cls) -> None:
    """Gavel's ``...WithPacking`` through the drop-in: pair keys reach the LP (the round is
    the instance the drop-in built, with its pairs), and the value is reference.py's."""
    from tests.timeshare import reference

    thr, sf, pw, since, remaining = _round(5, seed=7)
    for a in range(5):
        for b in range(a + 1, 5):
            thr[(a, b)] = {w: [0.7 * thr[a][w], 0.6 * thr[b][w]] for w in thr[a]}
    small = {"v100": 2, "p100": 1, "k80": 1}
    policy = cls()
    if cls is gavel.MinTotalDurationPacking:
        out = policy.get_allocation(thr, sf, remaining, small)
        value, key = policy.last_result.metrics["makespan_s"], "makespan"
    else:
        out = policy.get_allocation(thr, sf, pw, since, remaining, small)
        value, key = policy.last_result.metrics["max_finish_time_ratio"], "ftf"
    inst = policy.last_instance
    assert inst.pairs or inst.colocation, key
    assert value == pytest.approx(reference.policy_value(inst), rel=1e-6)
    assert sum(sum(out[k].values()) for k in out if isinstance(k, tuple)) > 0


def test_throughput_blind_max_min_gives_no_time_where_a_job_cannot_run() -> None:
    """formulations/timeshare.md's decision (#19 defect 6): job 0 runs on the V100 only. Three
    jobs on two GPUs: every job gets 2/3 of the round, job 0 all of it on the V100 (Gavel's
    blind LP, with every rate set to 1, may put job 0 on the K80, where it makes no
    progress)."""
    thr = {0: {"v100": 5.0, "k80": 0.0}, 1: {"v100": 3.0, "k80": 1.0}, 2: {"v100": 2.0, "k80": 1.0}}
    out = gavel.MaxMinFairness("ECOS").get_allocation(
        thr, {0: 1, 1: 1, 2: 1}, {0: 1.0, 1: 1.0, 2: 1.0}, {"v100": 1, "k80": 1}
    )
    assert out[0] == {"v100": pytest.approx(2 / 3), "k80": 0.0}
    for k in (1, 2):
        assert sum(out[k].values()) == pytest.approx(2 / 3)
