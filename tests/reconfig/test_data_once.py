"""One ``solve`` builds reconfig's data once: ``auto``'s heuristics, the exact model and a
decomposition's hand-over share them (each built them anew: up to five builds of 0.5-1 s at
256 GPUs, #17), and nothing is kept after the call returns."""

from __future__ import annotations

import gc
import weakref

import pytest

import schedopt
from schedopt.core.options import SolveOptions
from schedopt.core.stopping import Deadline
from schedopt.problems.reconfig import SPEC, data, generate_custom, heuristics


def test_auto_builds_the_data_once_and_keeps_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    refs: list[weakref.ref[data.ModelData]] = []

    class Counted(data.ModelData):  # each build's data, counted and watched
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            refs.append(weakref.ref(self))

    inst = generate_custom(8, 8, "llama2-70b", 128, 2, 2, seed=0)  # (its plan built from data)
    monkeypatch.setattr(data, "ModelData", Counted)
    result = schedopt.solve(inst, "auto", time_limit_s=3)
    assert result.solution is not None and not SPEC.validate(inst, result.solution)
    assert len(refs) == 1  # (before: each heuristic, then the decomposition)
    gc.collect()
    assert refs[0]() is None  # dropped when the call returned
    schedopt.solve(inst, "heuristic:megatron", time_limit_s=3)
    assert len(refs) == 2  # the next call builds its own
    # a method called outside solve (a worker, a test) builds every time
    for _ in range(2):
        heuristics.solve_megatron(inst, SolveOptions(), Deadline.after(60))
    assert len(refs) == 4


def test_the_stage_data_are_built_once_per_solve_too() -> None:
    # the bound over the physical space and widening's W7 each built them (0.13 CPU s at 256
    # GPUs): in one solve call they share them, per exact_speeds
    from schedopt.core.memo import solve_scope
    from schedopt.problems.reconfig.stage_bound import stage_data

    inst = generate_custom(8, 8, "llama2-70b", 128, 2, 2, seed=0)
    with solve_scope():
        exact = stage_data(inst)
        assert exact is not None and stage_data(inst, True) is exact
        relaxed = stage_data(inst, False)
        assert relaxed is not None and relaxed is not exact and stage_data(inst, False) is relaxed
    assert stage_data(inst) is not stage_data(inst)  # outside a solve: built every time
