"""RoundSession: each round equals a cold solve of the same round, starts from the last basis,
and checks what changed as a file would be checked."""

from __future__ import annotations

import numpy as np
import pytest

import schedopt
from schedopt.core.errors import InvalidInstanceError
from schedopt.core.status import Status
from schedopt.problems.timeshare import Job, Policy, TimeshareInstance, generate_custom
from schedopt.problems.timeshare.rounds import RoundChange, RoundSession, apply_change


def _random_change(inst: TimeshareInstance, rng: np.random.Generator, k: int) -> RoundChange:
    ids = [j.id for j in inst.jobs]
    gone = tuple(rng.choice(ids, size=min(3, len(ids) - 1), replace=False).tolist())
    fresh = generate_custom(4, seed=100 + k, policy=inst.policy).jobs
    arrivals = tuple(j.model_copy(update={"id": f"r{k}-{j.id}"}) for j in fresh)
    kept = [i for i in ids if i not in gone]
    revised = {
        kept[0]: {w: r * 1.5 for w, r in inst.jobs[inst.job_index[kept[0]]].throughput.items()}
    }
    workers = {w: n + 1 for w, n in inst.workers.items()} if k == 2 else None
    return RoundChange(arrivals=arrivals, departures=gone, throughputs=revised, workers=workers)


@pytest.mark.parametrize("policy", [Policy.MAX_MIN_FAIRNESS_PERF, Policy.MIN_MAKESPAN])
@pytest.mark.parametrize("efficiency", [True, False])
def test_every_round_equals_a_cold_solve(policy: Policy, efficiency: bool) -> None:
    inst = generate_custom(40, seed=3, policy=policy).model_copy(update={"efficiency": efficiency})
    session = RoundSession(inst)
    session.solve()
    rng = np.random.default_rng(0)
    for k in range(4):
        result = session.step(_random_change(session.instance, rng, k))
        cold = schedopt.solve(
            TimeshareInstance.model_validate(session.instance.model_dump()), "milp:highs"
        )
        assert result.status is cold.status is Status.OPTIMAL
        assert result.objectives == pytest.approx(cold.objectives, rel=1e-7, abs=1e-9)
        assert result.stats["warm_start"] == "basis"
        assert result.stats["warm_levels"] == (2 if efficiency else 1)  # each level restarts
        assert session.timings[-1].warm


def test_the_changed_round_is_the_round_a_file_would_give() -> None:
    inst = generate_custom(12, seed=1)
    change = _random_change(inst, np.random.default_rng(1), 0)
    built = apply_change(inst, change)
    again = TimeshareInstance.model_validate(built.model_dump())
    assert built.model_dump() == again.model_dump()
    assert set(built.job_index) == {j.id for j in built.jobs}


def test_bad_changes_name_the_field() -> None:
    inst = generate_custom(6, seed=0)
    with pytest.raises(InvalidInstanceError, match="departures"):
        apply_change(inst, RoundChange(departures=("nobody",)))
    with pytest.raises(InvalidInstanceError, match="duplicate job id"):
        apply_change(inst, RoundChange(arrivals=(inst.jobs[0],)))
    with pytest.raises(InvalidInstanceError, match="throughput"):
        apply_change(inst, RoundChange(throughputs={inst.jobs[0].id: {"v100": float("nan")}}))
    with pytest.raises(InvalidInstanceError, match="workers"):
        apply_change(inst, RoundChange(workers={"k80": -1, "p100": 1, "v100": 1}))
    with pytest.raises(InvalidInstanceError, match="can run on no GPU type"):
        apply_change(inst, RoundChange(arrivals=(Job(id="x", throughput={"k80": 0.0}),)))


def test_a_basis_of_another_policy_is_not_used() -> None:
    first = schedopt.solve(generate_custom(20, seed=0), "milp:highs")
    other = generate_custom(20, seed=0, policy=Policy.MIN_MAKESPAN)
    result = schedopt.solve(other, "milp:highs", warm_start=first.warm_start)
    assert result.stats["warm_start"] == "cold"
    assert result.objectives == pytest.approx(schedopt.solve(other, "milp:highs").objectives)


def test_rounds_with_a_colocation_table_equal_cold_solves() -> None:
    """Jobs come and go under a co-location table by job type: every job of one type leaves
    (its entries then imply no pair), and new jobs of another type arrive."""
    inst = generate_custom(30, seed=4, pairs=True, job_types=4)
    assert inst.colocation and not inst.pairs
    session = RoundSession(inst)
    session.solve()
    gone = tuple(j.id for j in inst.jobs if j.job_type == "type0")
    model = next(j for j in inst.jobs if j.job_type == "type1")
    for k, change in enumerate(
        [
            RoundChange(departures=gone),
            RoundChange(arrivals=tuple(model.model_copy(update={"id": f"n{i}"}) for i in range(3))),
        ]
    ):
        result = session.step(change)
        cold = schedopt.solve(
            TimeshareInstance.model_validate(session.instance.model_dump()), "milp:highs"
        )
        assert result.status is cold.status is Status.OPTIMAL, k
        assert result.objectives == pytest.approx(cold.objectives, rel=1e-7, abs=1e-9)
        assert any(s.with_job is not None for s in result.solution.shares)
