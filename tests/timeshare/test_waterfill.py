"""Water filling (issue #19): the leximin allocation by duals equals reference.leximin, which
tests every job with its own LP (scipy's linprog), on rounds built to have several levels."""

from __future__ import annotations

import numpy as np
import pytest

from schedopt.problems.timeshare import TimeshareInstance
from schedopt.problems.timeshare.codec import shares_of, throughputs
from schedopt.problems.timeshare.data import build_data
from schedopt.problems.timeshare.validate import validate
from schedopt.problems.timeshare.waterfill import water_fill

from . import reference


def _round(seed: int, policy: str = "max_min_fairness_perf") -> TimeshareInstance:
    rng = np.random.default_rng(seed)
    jobs = []
    for i in range(int(rng.integers(3, 9))):
        # some jobs run on one type only: they saturate it and leave the rest to the others
        only = rng.random() < 0.4
        jobs.append(
            {
                "id": f"j{i}",
                "throughput": {
                    "v100": float(rng.uniform(1, 10)),
                    "p100": 0.0 if only else float(rng.uniform(0.5, 5)),
                    "k80": 0.0 if only else float(rng.choice([0.0, rng.uniform(0.2, 2)])),
                },
                "scale_factor": int(rng.choice([1, 1, 2])),
                "priority_weight": float(rng.choice([1.0, 2.0])),
            }
        )
    workers = {"v100": int(rng.integers(2, 5)), "p100": int(rng.integers(2, 6)), "k80": 3}
    return TimeshareInstance.model_validate({"policy": policy, "workers": workers, "jobs": jobs})


@pytest.mark.parametrize("policy", ["max_min_fairness_perf", "max_min_fairness"])
@pytest.mark.parametrize("seed", range(10))
def test_water_filling_is_the_leximin_of_the_reference(seed: int, policy: str) -> None:
    inst = _round(seed, policy)
    data = build_data(inst)
    found = water_fill(data, lambda: 60.0)
    assert found.x is not None and found.levels is not None
    rho = throughputs(data.singles, found.x, data.num_jobs)
    got = np.sort(data.weights() * rho)
    want = reference.leximin(inst, data.weights())
    assert got == pytest.approx(want, rel=1e-6)
    assert np.sort(found.levels) == pytest.approx(want, rel=1e-6)
    assert not validate(inst, shares_of(data, data.singles, found.x))


def test_several_levels_occur() -> None:
    """The rounds above are not all one level (else the test could not tell leximin from
    max-min)."""
    levels = [
        len(np.unique(np.round(reference.leximin(inst, build_data(inst).weights()), 6)))
        for inst in map(_round, range(10))
    ]
    assert max(levels) >= 3
