"""The time limit holds while the data are built: templates for many stage counts and slow
factors, and the packings of a large host (the conformance suite's largest instance is small)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

import schedopt
from schedopt.core.status import Status
from schedopt.problems.reconfig import (
    SPEC,
    ReconfigInstance,
    SlowGpu,
    generate_custom,
    model_config,
)
from schedopt.topology import Cluster
from tests.timing import promised_s

pytestmark = pytest.mark.slow


def _many_templates() -> ReconfigInstance:
    # 128 stage counts × 5 factors × 4 TP degrees: about 20 s of template searches, unchecked
    return ReconfigInstance(
        cluster=Cluster.dgx(nodes=2, gpus_per_node=8),
        model=model_config("toy", layers=128),
        global_batch=8,
        max_stages=128,
        slow_gpus=tuple(SlowGpu(gpu=f"h0/g{i}", speed_factor=0.1 + 0.01 * i) for i in range(4)),
    )


def _big_host() -> ReconfigInstance:
    # a host of 64 GPUs, seven TP degrees: its packings once took minutes to enumerate
    return ReconfigInstance(
        cluster=Cluster.dgx(nodes=2, gpus_per_node=64),
        model=model_config("toy", heads=64, hidden=4096),
        global_batch=8,
        tp_sizes=(1, 2, 4, 8, 16, 32, 64),
    )


@pytest.mark.parametrize("method", [*SPEC.methods, "auto"])
@pytest.mark.parametrize("make", [_many_templates, _big_host])
def test_data_building_keeps_the_time_limit(
    make: Callable[[], ReconfigInstance], method: str
) -> None:
    inst = make()
    started = time.perf_counter()
    result = schedopt.solve(inst, method, time_limit_s=0.5)
    elapsed = time.perf_counter() - started
    assert elapsed <= promised_s(0.5), (elapsed, promised_s(0.5))
    if result.status is Status.NO_SOLUTION:
        assert result.explanation


@pytest.fixture(scope="module")
def largest() -> ReconfigInstance:
    # the benchmark's largest shape: 16,384 GPUs, 16 fail-stop and 16 fail-slow
    return generate_custom(2048, 8, "gpt3-175b", 8192, 16, 16, seed=0)


@pytest.mark.parametrize("method", ["auto", "cpsat", "decomp:rate"])
def test_the_largest_benchmark_keeps_the_time_limit(largest: ReconfigInstance, method: str) -> None:
    # validating, evaluating and measuring an answer once took 1.4 s here (pydantic equality of
    # every pipeline against every kept one), with 0.05 s kept back for it: auto took 2.2 s
    started = time.perf_counter()
    result = schedopt.solve(largest, method, time_limit_s=0.5)
    elapsed = time.perf_counter() - started
    assert elapsed <= promised_s(0.5), (elapsed, promised_s(0.5))
    if result.solution is None:  # 0.5 s is less than the data take here: an honest no
        assert result.status is Status.NO_SOLUTION and result.explanation


def test_a_template_step_starved_while_building_still_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # #17: at load 7.7 and 13, auto on 256 GPUs answered the Oobleck plan (27.16 s; the
    # template answer is 12.4-18.5 s) after 4.2 s of 10: decomp:physical's template share
    # passed while its data were built, and it answered nothing. A sleep in the data stands in
    # for the busy machine: longer than that share, well within the limit
    from schedopt.problems.reconfig import decomp

    built = decomp.data_of

    def slow(*args: object, **kwargs: object) -> object:
        time.sleep(3.0)
        return built(*args, **kwargs)

    monkeypatch.setattr(decomp, "data_of", slow)
    inst = generate_custom(32, 8, "llama2-70b", 512, 16, 16, seed=0)
    started = time.perf_counter()
    result = schedopt.solve(inst, "auto", time_limit_s=10)
    elapsed = time.perf_counter() - started
    assert elapsed <= promised_s(10), (elapsed, promised_s(10))
    assert result.method == f"auto({decomp.PHYSICAL})", (result.method, result.explanation)
    assert result.solution is not None and result.objectives is not None
    assert not SPEC.validate(inst, result.solution)
    for name in SPEC.auto_heuristics:  # never worse than a plan it was given or could make
        theirs = schedopt.solve(inst, name, time_limit_s=10)
        if theirs.objectives is not None:
            assert result.objectives[0] <= theirs.objectives[0] + 1e-9, name
