"""Water filling through Gavel's interface (issue #19): Gavel's names and signature, the
leximin levels of tests/timeshare/reference.py, failures not silent."""

from __future__ import annotations

import numpy as np
import pytest

from schedopt.core.errors import InvalidInstanceError
from schedopt.integrations.gavel import (
    MaxMinFairnessWaterFilling,
    MaxMinFairnessWaterFillingPerf,
    MaxMinFairnessWaterFillingPolicyWithPerf,
    RoundFailed,
)
from schedopt.problems.timeshare.data import build_data
from tests.timeshare import reference
from tests.timeshare.test_waterfill import _round


@pytest.mark.parametrize("cls", [MaxMinFairnessWaterFillingPerf, MaxMinFairnessWaterFilling])
@pytest.mark.parametrize("seed", range(4))
def test_gavel_dicts_give_the_leximin_levels(cls, seed: int) -> None:
    inst = _round(seed, cls.policy.value)
    thr = {i: dict(j.throughput) for i, j in enumerate(inst.jobs)}
    sf = {i: j.scale_factor for i, j in enumerate(inst.jobs)}
    pw = {i: j.priority_weight for i, j in enumerate(inst.jobs)}
    policy = cls()
    out = policy.get_allocation(thr, sf, pw, dict(inst.workers))
    weights = build_data(inst).weights()
    blind = cls is MaxMinFairnessWaterFilling
    rho = np.array(
        [
            sum(x * (1.0 if blind and thr[i][w] > 0 else thr[i][w]) for w, x in out[i].items())
            for i in thr
        ]
    )
    assert np.sort(weights * rho) == pytest.approx(reference.leximin(inst, weights), rel=1e-6)


def test_names_constructor_and_failures() -> None:
    assert MaxMinFairnessWaterFillingPolicyWithPerf().name == "MaxMinFairnessWaterFilling_Perf"
    assert MaxMinFairnessWaterFilling().name == "MaxMinFairnessWaterFilling"
    with pytest.raises(InvalidInstanceError, match="priority_reweighting_policies"):
        MaxMinFairnessWaterFillingPerf({"entity0": "fairness"})
    thr = {i: {"v100": 1.0 + i, "k80": 0.5} for i in range(300)}
    ones = {i: 1 for i in thr}
    with pytest.raises(RoundFailed):
        MaxMinFairnessWaterFillingPerf(time_limit_s=1e-6).get_allocation(
            thr, ones, {i: 1.0 for i in thr}, {"v100": 4, "k80": 4}
        )
