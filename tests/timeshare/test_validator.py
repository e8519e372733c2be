"""The validator catches a violation of each constraint (V1–V4, formulations/timeshare.md),
and accepts the boundary."""

from __future__ import annotations

import pytest

from schedopt.problems.timeshare import Share, TimeshareInstance, TimeshareSolution
from schedopt.problems.timeshare.validate import evaluate, validate

INST = TimeshareInstance.model_validate(
    {
        "policy": "max_min_fairness_perf",
        "workers": {"v100": 2, "k80": 2, "p100": 1},
        "jobs": [
            {"id": "a", "throughput": {"v100": 2.0, "k80": 1.0, "p100": 1.5}, "scale_factor": 2},
            {"id": "b", "throughput": {"v100": 1.0, "k80": 0.0}, "scale_factor": 2},
        ],
        "pairs": [{"jobs": ["a", "b"], "throughput": {"v100": [1.0, 0.5]}}],
    }
)


def ids(shares: list[Share]) -> list[str]:
    return [v.constraint_id for v in validate(INST, TimeshareSolution(shares=tuple(shares)))]


def test_a_feasible_boundary_allocation_passes() -> None:
    # a all round on both K80s; b half the round on both V100s.
    ok = [
        Share(job="a", worker_type="k80", fraction=1.0),
        Share(job="b", worker_type="v100", fraction=0.5),
    ]
    assert ids(ok) == []
    assert evaluate(INST, TimeshareSolution(shares=tuple(ok)))[0] > 0


def test_v1_unknown_job_type_or_pair() -> None:
    assert ids([Share(job="zz", worker_type="v100", fraction=0.1)]) == ["V1"]
    assert ids([Share(job="a", worker_type="h100", fraction=0.1)]) == ["V1"]
    assert ids([Share(job="a", with_job="a", worker_type="v100", fraction=0.1)]) == ["V1"]


def test_v2_a_job_runs_at_most_the_round() -> None:
    over = [
        Share(job="a", worker_type="k80", fraction=0.6),
        Share(job="a", worker_type="v100", fraction=0.3),
        Share(job="a", with_job="b", worker_type="v100", fraction=0.2),
    ]
    assert ids(over) == ["V2"]
    assert ids(over[:2]) == []


def test_v3_gpus_per_type() -> None:
    # 2-GPU gangs on 2 V100s: b 0.6 and the pair 0.4 fill them; a's 0.2 is one too many
    over = [
        Share(job="b", worker_type="v100", fraction=0.6),
        Share(job="a", with_job="b", worker_type="v100", fraction=0.4),
        Share(job="a", worker_type="v100", fraction=0.2),
    ]
    assert ids(over) == ["V3"]
    assert ids(over[:2]) == []


def test_v4_no_time_where_a_member_cannot_run_or_does_not_fit() -> None:
    assert ids([Share(job="b", worker_type="k80", fraction=0.1)]) == ["V4"]  # T = 0
    assert ids([Share(job="a", with_job="b", worker_type="k80", fraction=0.1)]) == ["V4"]
    assert ids([Share(job="a", worker_type="p100", fraction=0.1)]) == ["V4"]  # 2 GPUs > 1


@pytest.mark.parametrize("fraction", [1.0, 0.0])
def test_fraction_range_is_the_models(fraction: float) -> None:
    assert ids([Share(job="a", worker_type="k80", fraction=fraction)]) == []


def test_a_solvers_point_over_a_row_by_its_tolerance_is_scaled_into_it() -> None:
    """CBC's solution (8 significant digits through PuLP) ran two jobs of a pair round
    1.6e-6 over the round, which the validator rejects (fuzz, benchmarks/fuzz_inputs.py):
    codec.within_rows shrinks such columns into C1 and C2 before a solution is made."""
    import numpy as np

    from schedopt.problems.timeshare.codec import shares_of
    from schedopt.problems.timeshare.columns import Columns
    from schedopt.problems.timeshare.data import build_data

    data = build_data(INST)
    columns = Columns.concat([data.singles, data.pair_columns()])
    x = np.zeros(len(columns))
    alone_a = np.flatnonzero((columns.first == 0) & (columns.second < 0))[0]
    pair = np.flatnonzero(columns.second >= 0)[0]
    x[alone_a], x[pair] = 0.6, 0.4000016  # a runs 1.0000016 of the round
    sol = shares_of(data, columns, x)
    assert validate(INST, sol) == []
    assert sum(s.fraction for s in sol.shares if "a" in s.members) <= 1.0


TYPED = TimeshareInstance.model_validate(
    {
        "policy": "max_min_fairness_perf",
        "workers": {"v100": 2, "k80": 2},
        "jobs": [
            {"id": "a", "throughput": {"v100": 2.0, "k80": 1.0}, "job_type": "x"},
            {"id": "b", "throughput": {"v100": 2.0, "k80": 1.0}, "job_type": "x"},
            {"id": "c", "throughput": {"v100": 1.0, "k80": 1.0}, "job_type": "y"},
            {"id": "d", "throughput": {"v100": 1.0}},
        ],
        # x with itself: the earlier job (a) takes 1.5, the later 0.5; x with y on v100 only
        "colocation": [
            {"job_types": ["x", "x"], "throughput": {"v100": [1.5, 0.5], "k80": [0.7, 0.7]}},
            {"job_types": ["y", "x"], "throughput": {"v100": [0.9, 1.2], "k80": [0.0, 1.0]}},
        ],
    }
)


def typed_ids(shares: list[Share]) -> list[str]:
    return [v.constraint_id for v in validate(TYPED, TimeshareSolution(shares=tuple(shares)))]


def test_colocation_pairs_are_the_type_pairs_with_an_entry() -> None:
    assert typed_ids([Share(job="b", with_job="a", worker_type="v100", fraction=0.5)]) == []
    assert typed_ids([Share(job="a", with_job="c", worker_type="v100", fraction=0.5)]) == []
    # d has no type; c with c is no pair of two jobs
    assert typed_ids([Share(job="a", with_job="d", worker_type="v100", fraction=0.1)]) == ["V1"]
    assert typed_ids([Share(job="c", with_job="c", worker_type="v100", fraction=0.1)]) == ["V1"]
    # V4: c cannot run beside an x job on k80 (its rate there is 0)
    assert typed_ids([Share(job="c", with_job="b", worker_type="k80", fraction=0.1)]) == ["V4"]
    # the same pair twice, named either way round
    twice = [
        Share(job="a", with_job="b", worker_type="v100", fraction=0.1),
        Share(job="b", with_job="a", worker_type="v100", fraction=0.1),
    ]
    assert typed_ids(twice) == ["V1"]


def test_colocation_rates_go_to_the_members_by_type_and_order() -> None:
    from schedopt.problems.timeshare.validate import job_throughputs

    for share in (
        Share(job="b", with_job="a", worker_type="v100", fraction=0.5),
        Share(job="a", with_job="b", worker_type="v100", fraction=0.5),
    ):
        rho = job_throughputs(TYPED, TimeshareSolution(shares=(share,)))
        assert (rho["a"], rho["b"]) == (0.75, 0.25)  # a is listed first: it takes 1.5
    rho = job_throughputs(
        TYPED,
        TimeshareSolution(shares=(Share(job="b", with_job="c", worker_type="v100", fraction=1.0),)),
    )
    assert (rho["b"], rho["c"]) == (1.2, 0.9)  # the entry names y first
