"""schedopt.integrations.gavel: Gavel's policy interface, hand-checked rounds and a replay."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from schedopt.core.errors import InvalidInstanceError
from schedopt.integrations.gavel import (
    FinishTimeFairness,
    MaxMinFairness,
    MaxMinFairnessPerf,
    MinTotalDuration,
)

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "gavel"


@dataclass(frozen=True, order=True)
class JobIdPair:
    """What Gavel's ``scheduler/job_id_pair.py`` offers the policies (not imported)."""

    a: int
    b: int | None = None

    def is_pair(self) -> bool:
        return self.b is not None

    def singletons(self) -> tuple[JobIdPair, JobIdPair]:
        assert self.b is not None
        return (JobIdPair(self.a), JobIdPair(self.b))


def test_priority_and_scale_factor_round_by_hand() -> None:
    """Both jobs run only on V100 (2 GPUs); b uses 2 GPUs and has priority 2. Equal normalised
    shares need x_a = x_b and x_a + 2 x_b ≤ 2: x = 2/3 each (formulations/timeshare.md)."""
    a, b = JobIdPair(0), JobIdPair(1)
    out = MaxMinFairnessPerf().get_allocation(
        {a: {"v100": 1.0, "k80": 0.0}, b: {"v100": 1.0, "k80": 0.0}},
        {a: 1, b: 2},
        {a: 1.0, b: 2.0},
        {"v100": 2, "k80": 2},
    )
    assert out is not None
    assert out[a]["v100"] == pytest.approx(2 / 3, abs=1e-7)
    assert out[b]["v100"] == pytest.approx(2 / 3, abs=1e-7)
    assert out[a]["k80"] == out[b]["k80"] == 0.0


def test_heterogeneity_aware_round_by_hand() -> None:
    """Job a is 10x faster on V100, b equally fast on both; one GPU of each. Equal split
    throughputs p_a = 5.5, p_b = 1. b can reach at most 1 (the whole round), so the optimum is
    1: b all round, and a at least 0.55 of the V100 (ρ_a ≥ 5.5). Level 1 alone (as Gavel) may
    stop anywhere there; with efficiency a gets the whole V100 (and b the K80)."""
    a, b = JobIdPair(0), JobIdPair(1)
    tput = {a: {"v100": 10.0, "k80": 1.0}, b: {"v100": 1.0, "k80": 1.0}}
    spec, sf, pw = {"v100": 1, "k80": 1}, {a: 1, b: 1}, {a: 1.0, b: 1.0}
    perf = MaxMinFairnessPerf().get_allocation(tput, sf, pw, spec)
    assert perf is not None
    assert sum(perf[b].values()) == pytest.approx(1.0, abs=1e-7)
    assert 10 * perf[a]["v100"] + perf[a]["k80"] >= 5.5 - 1e-6
    efficient = MaxMinFairnessPerf(efficiency=True).get_allocation(tput, sf, pw, spec)
    assert efficient is not None
    assert efficient[a]["v100"] == pytest.approx(1.0, abs=1e-7)
    assert efficient[b]["k80"] == pytest.approx(1.0, abs=1e-7)
    blind = MaxMinFairness().get_allocation(tput, sf, pw, spec)
    assert blind is not None
    assert sum(blind[a].values()) == pytest.approx(1.0, abs=1e-7)


def test_pairs_keyed_like_gavel_come_back_under_their_keys() -> None:
    """Two jobs on one V100 that run at 0.9 of their speed together: sharing all round gives
    each 0.9 of its throughput, better than 0.5 each alone."""
    a, b, ab = JobIdPair(0), JobIdPair(1), JobIdPair(0, 1)
    out = MaxMinFairnessPerf().get_allocation(
        {a: {"v100": 1.0}, b: {"v100": 2.0}, ab: {"v100": [0.9, 1.8]}},
        {a: 1, b: 1},
        {a: 1.0, b: 1.0},
        {"v100": 1},
    )
    assert out is not None
    assert out[ab]["v100"] == pytest.approx(1.0, abs=1e-7)
    assert set(out) == {a, b, ab}


def test_makespan_is_exact_not_a_five_percent_bisection() -> None:
    """One V100; a needs 100 steps at 1/s, b 300 steps at 1/s: every schedule ends at 400 s,
    and the optimum shares time 1:3 (Gavel's bisection stops within 5% of it)."""
    a, b = JobIdPair(0), JobIdPair(1)
    policy = MinTotalDuration()
    out = policy.get_allocation(
        {a: {"v100": 1.0}, b: {"v100": 1.0}}, {a: 1, b: 1}, {a: 100.0, b: 300.0}, {"v100": 1}
    )
    assert out is not None
    assert out[a]["v100"] == pytest.approx(0.25, abs=1e-7)
    assert policy.last_result.metrics["makespan_s"] == pytest.approx(400.0, rel=1e-7)


def test_bad_input_names_the_field() -> None:
    a = JobIdPair(0)
    with pytest.raises(InvalidInstanceError, match="throughput"):
        MaxMinFairnessPerf().get_allocation(
            {a: {"v100": float("nan")}}, {a: 1}, {a: 1.0}, {"v100": 1}
        )
    with pytest.raises(InvalidInstanceError, match="can run on no GPU type"):
        MaxMinFairnessPerf().get_allocation({a: {"v100": 0.0}}, {a: 1}, {a: 1.0}, {"v100": 1})


def test_empty_round_is_none_as_in_gavel() -> None:
    assert MaxMinFairnessPerf().get_allocation({}, {}, {}, {"v100": 1}) is None


@pytest.mark.skipif(not SHARED.exists(), reason="shared Gavel data not present")
@pytest.mark.parametrize("policy", ["perf", "ftf"])
def test_replay_of_gavel_jobs_in_our_own_driver(policy: str) -> None:
    """The first 24 single-GPU jobs of Gavel's msr trace with its measured throughputs, 6-minute
    rounds on 4 K80 / 4 P100 / 4 V100: every round's allocation fits (time ≤ 1 per job, GPUs per
    type), every job progresses, and finish-time fairness keeps Gavel's state across rounds."""
    from schedopt.io.traces import load_gavel_throughput_table, load_gavel_trace

    table = load_gavel_throughput_table(SHARED / "simulation_throughputs.json")
    trace = [j for j in load_gavel_trace(SHARED / "msr_seed0.trace") if j.scale_factor == 1]
    jobs = [j for j in trace if j.key in table.alone][:24]
    spec = {"k80": 4, "p100": 4, "v100": 4}
    remaining = {JobIdPair(i): float(min(j.total_steps, 20_000)) for i, j in enumerate(jobs)}
    since = dict.fromkeys(remaining, 0.0)
    engine = MaxMinFairnessPerf() if policy == "perf" else FinishTimeFairness()
    round_s = 360.0
    for _ in range(6):
        active = [k for k, r in remaining.items() if r > 0]
        if not active:
            break
        tput = {k: {w: table.alone[jobs[k.a].key][w] for w in spec} for k in active}
        sf = dict.fromkeys(active, 1)
        pw = dict.fromkeys(active, 1.0)
        if policy == "perf":
            out = engine.get_allocation(tput, sf, pw, spec)
        else:
            out = engine.get_allocation(
                tput, sf, pw, {k: since[k] for k in active}, {k: remaining[k] for k in active}, spec
            )
        assert out is not None
        for w, n in spec.items():
            assert sum(out[k][w] for k in active) <= n + 1e-6
        for k in active:
            assert sum(out[k].values()) <= 1 + 1e-6
            done = round_s * sum(out[k][w] * tput[k][w] for w in spec)
            assert done > 0  # max-min and finish-time fairness leave no job out
            remaining[k] = max(0.0, remaining[k] - done)
            since[k] += round_s


def test_bad_pair_rates_name_the_field() -> None:
    """Pairs take a vectorised check of their rates; a bad one goes to pydantic, which names it."""
    a, b, ab = JobIdPair(0), JobIdPair(1), JobIdPair(0, 1)
    for bad in (float("nan"), -1.0, 1e-9, 1e12):
        with pytest.raises(InvalidInstanceError, match="pairs"):
            MaxMinFairnessPerf().get_allocation(
                {a: {"v100": 1.0}, b: {"v100": 2.0}, ab: {"v100": [bad, 1.8]}},
                {a: 1, b: 1},
                {a: 1.0, b: 1.0},
                {"v100": 1},
            )


def test_finish_time_fairness_keeps_gavels_isolated_time() -> None:
    """Gavel's state: progress between rounds, in seconds at last round's isolated throughput.
    Two one-GPU jobs on one V100 and one K80: the isolated split gives each half of each type,
    i_a = (4 + 1)/2 = 2.5 steps/s; 500 steps done by a means 200 isolated seconds."""
    a, b = JobIdPair(0), JobIdPair(1)
    tput = {a: {"v100": 4.0, "k80": 1.0}, b: {"v100": 2.0, "k80": 2.0}}
    spec, sf, pw = {"v100": 1, "k80": 1}, {a: 1, b: 1}, {a: 1.0, b: 1.0}
    policy = FinishTimeFairness()
    policy.get_allocation(tput, sf, pw, {a: 0.0, b: 0.0}, {a: 10_000.0, b: 10_000.0}, spec)
    policy.get_allocation(tput, sf, pw, {a: 360.0, b: 360.0}, {a: 9_500.0, b: 9_800.0}, spec)
    jobs = {j.id: j for j in policy.last_instance.jobs}
    assert jobs["0"].isolated_time_s == pytest.approx(500 / 2.5)
    assert jobs["1"].isolated_time_s == pytest.approx(200 / 2.0)


#: Three job types' rates alone and, by type pair, while sharing (Gavel's oracle by job type).
ALONE = {
    "r": {"v100": 4.0, "k80": 1.0},
    "l": {"v100": 2.0, "k80": 1.5},
    "t": {"v100": 3.0, "k80": 0.0},
}
SHARED_RATES = {
    ("r", "r"): {"v100": [2.5, 2.5], "k80": [0.6, 0.6]},
    ("r", "l"): {"v100": [3.0, 1.2], "k80": [0.8, 1.0]},
    ("r", "t"): {"v100": [1.0, 2.5], "k80": [0.0, 0.0]},
    ("l", "l"): {"v100": [1.5, 1.5], "k80": [1.0, 1.0]},
    ("l", "t"): {"v100": [1.8, 1.9], "k80": [0.0, 0.0]},
    ("t", "t"): {"v100": [2.0, 2.0], "k80": [0.0, 0.0]},
}


def packed_round(jobs: int = 9):
    """Gavel's arguments for a packing round: every pair with its types' rates."""
    kinds = [("r", "l", "t")[i % 3] for i in range(jobs)]
    tput = {JobIdPair(i): dict(ALONE[kinds[i]]) for i in range(jobs)}
    for i in range(jobs):
        for j in range(i + 1, jobs):
            a, b = kinds[i], kinds[j]
            rates = SHARED_RATES.get((a, b))
            if rates is None:
                rates = {w: r[::-1] for w, r in SHARED_RATES[(b, a)].items()}
            tput[JobIdPair(i, j)] = {w: list(r) for w, r in rates.items()}
    ones = {JobIdPair(i): 1 for i in range(jobs)}
    return tput, ones, {k: 1.0 for k in ones}, {"v100": 3, "k80": 2}


def explicit_value(tput, spec) -> float:
    """The same round with every pair written out (no job types), solved directly."""
    import schedopt
    from schedopt.problems.timeshare import TimeshareInstance

    inst = TimeshareInstance.model_validate(
        {
            "workers": spec,
            "efficiency": False,  # level 1 only, as the adapter (level 2 may give up 1e-7)
            "jobs": [{"id": str(k.a), "throughput": t} for k, t in tput.items() if not k.is_pair()],
            "pairs": [
                {"jobs": [str(k.a), str(k.b)], "throughput": t}
                for k, t in tput.items()
                if k.is_pair()
            ],
        }
    )
    return schedopt.solve(inst, "milp:highs").objectives[0]


def test_gavels_pairs_become_a_colocation_table_with_the_same_optimum() -> None:
    """9 jobs of 3 types, 36 pairs: recognised as 6 table entries; the optimum is the one over
    the 36 pairs written out, and pair keys come back with their fractions."""
    tput, sf, pw, spec = packed_round()
    policy = MaxMinFairnessPerf()
    out = policy.get_allocation(tput, sf, pw, spec)
    inst = policy.last_instance
    assert len(inst.colocation) == 6 and not inst.pairs
    assert policy.last_result.objectives[0] == pytest.approx(explicit_value(tput, spec), rel=1e-9)
    assert set(out) == set(tput)
    assert any(v > 0 for k, alloc in out.items() if k.is_pair() for v in alloc.values())


@pytest.mark.parametrize("change", ["drop a pair", "other rates", "bad rate", "three rates"])
def test_pairs_that_are_no_table_go_one_by_one(change: str) -> None:
    """A missing pair, a pair of two types at its own rates, or a bad rate: no table (the
    pairs go one by one, and the optimum is still the one over the pairs given)."""
    tput, sf, pw, spec = packed_round()
    if change == "drop a pair":
        del tput[JobIdPair(0, 3)]
    elif change == "other rates":
        tput[JobIdPair(0, 3)] = {"v100": [2.4, 2.5], "k80": [0.6, 0.6]}
    else:
        bad = [-1.0, 2.5] if change == "bad rate" else [2.5, 2.5, 2.5]
        tput[JobIdPair(0, 3)] = {"v100": bad, "k80": [0.6, 0.6]}
        if change == "three rates":  # and one rate fewer elsewhere: the same count in all
            tput[JobIdPair(0, 6)] = {"v100": [2.5], "k80": [0.6, 0.6]}
        with pytest.raises(InvalidInstanceError, match="pairs"):
            MaxMinFairnessPerf().get_allocation(tput, sf, pw, spec)
        return
    policy = MaxMinFairnessPerf()
    policy.get_allocation(tput, sf, pw, spec)
    assert policy.last_instance.pairs and not policy.last_instance.colocation
    assert policy.last_result.objectives[0] == pytest.approx(explicit_value(tput, spec), rel=1e-9)
