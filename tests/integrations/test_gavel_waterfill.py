"""Water filling through Gavel's interface (issue #19): Gavel's names and signature, the
leximin levels of tests/timeshare/reference.py, failures not silent."""

from __future__ import annotations

import numpy as np
import pytest

from schedopt.core.errors import InvalidInstanceError
from schedopt.integrations.gavel import (
    MaxMinFairnessWaterFilling,
    MaxMinFairnessWaterFillingPacking,
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
    with pytest.raises(InvalidInstanceError, match=r"priority_reweighting_policies\['entity0'\]"):
        MaxMinFairnessWaterFillingPerf({"entity0": "lottery"})
    thr = {i: {"v100": 1.0 + i, "k80": 0.5} for i in range(300)}
    ones = {i: 1 for i in thr}
    with pytest.raises(RoundFailed):
        MaxMinFairnessWaterFillingPerf(time_limit_s=1e-6).get_allocation(
            thr, ones, {i: 1.0 for i in thr}, {"v100": 4, "k80": 4}
        )


@pytest.mark.parametrize("seed", range(4))
def test_packed_water_filling_is_the_leximin_over_the_pairs(seed: int) -> None:
    """``...WithPacking``: pair keys share GPUs; the levels are reference.leximin's over the
    instance the drop-in built (jobs alone and every pair)."""
    inst = _round(seed)
    thr = {i: dict(j.throughput) for i, j in enumerate(inst.jobs)}
    sf = {i: j.scale_factor for i, j in enumerate(inst.jobs)}
    pw = {i: j.priority_weight for i, j in enumerate(inst.jobs)}
    for a in list(sf):
        for b in list(sf):
            if a < b and sf[a] == sf[b]:
                thr[(a, b)] = {w: [0.7 * thr[a][w], 0.6 * thr[b][w]] for w in thr[a]}
    policy = MaxMinFairnessWaterFillingPacking()
    out = policy.get_allocation(thr, sf, pw, dict(inst.workers))
    built = policy.last_instance
    assert built.pairs or built.colocation
    weights = build_data(built).weights()
    rho = np.zeros(len(built.jobs))
    for k, row in out.items():
        for w, x in row.items():
            if isinstance(k, tuple):
                rho[k[0]] += x * thr[k][w][0]
                rho[k[1]] += x * thr[k][w][1]
            else:
                rho[k] += x * thr[k][w]
    assert np.sort(weights * rho) == pytest.approx(reference.leximin(built, weights), rel=1e-6)
    assert policy.name == "MaxMinFairnessWaterFilling_Packing"
