"""The trace suites (``<problem>-trace``): each recipe names its file and the file's SHA-256, is
skipped with the reason where the data is absent, and (where the data is on this machine)
builds the instance its checksum records. The builders' own rules are checked on hand-made
trace records, without the data."""

from __future__ import annotations

import pytest

from schedopt.bench import runner
from schedopt.bench.checksums import compute
from schedopt.bench.suite import data_folder
from schedopt.bench.suites import all_suites
from schedopt.executor import InlineExecutor
from schedopt.io.traces import Fault, TraceJob
from schedopt.problems.admission.driver import DriverConfig, batch_instance
from schedopt.problems.reconfig.generate import generate_custom as reconfig_custom
from schedopt.problems.reconfig.policy import fault_state, window_instance
from schedopt.topology import Cluster

TRACE_SUITES = [n for n in all_suites() if n.endswith("-trace")]


def test_every_problem_has_a_trace_suite_of_trace_recipes():
    problems = {all_suites()[n].problem for n in TRACE_SUITES}
    assert problems == {"admission", "fairshare", "timeshare", "moe_placement", "reconfig"}
    for name in TRACE_SUITES:
        for recipe in all_suites()[name].recipes:
            assert recipe.data and ":" in recipe.generator, (name, recipe.name)
            assert recipe.checksum and recipe.data_sha256, f"{name}/{recipe.name} not recorded"


def test_every_recipe_of_every_suite_has_a_recorded_checksum():
    missing = [
        f"{s.name}/{r.name}" for s in all_suites().values() for r in s.recipes if not r.checksum
    ]
    assert not missing, f"record them: schedopt bench SUITE --checksums --update: {missing}"


@pytest.mark.parametrize("name", TRACE_SUITES)
def test_trace_suite_skips_cleanly_without_the_data(name, tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDOPT_DATA", str(tmp_path))  # a data folder without the file
    suite = all_suites()[name]
    assert dict(compute(suite)) == {r.name: "" for r in suite.recipes}
    with InlineExecutor() as ex:
        rows = runner.run(runner.plan([suite], methods=["auto"]), ex, tmp_path / "rows.jsonl")
    assert len(rows) == len(suite.recipes)
    for row, recipe in zip(rows, suite.recipes, strict=True):
        assert row["status"] == runner.SKIPPED
        assert recipe.data in row["reason"] and "absent" in row["reason"]


@pytest.mark.parametrize("name", TRACE_SUITES)
def test_trace_suite_builds_its_recorded_instances(name):
    folder = data_folder()
    suite = all_suites()[name]
    if folder is None or not all((folder / r.data).is_file() for r in suite.recipes):
        pytest.skip("the public trace data (shared/data or $SCHEDOPT_DATA) is not here")
    found = dict(compute(suite))
    for recipe in suite.recipes:
        assert found[f"data:{recipe.name}"] == recipe.data_sha256, recipe.name
        assert found[recipe.name] == recipe.checksum, recipe.name


def _job(jid: str, kind: str, deadlines=(), gpus: int = 8, iterations: int = 6000) -> TraceJob:
    return TraceJob(jid, "t0", 100.0 * len(jid), gpus, iterations, 3600.0, kind, deadlines)


def test_batch_instance_keeps_deadlines_from_each_jobs_own_submission():
    cluster = Cluster.dgx(nodes=2, gpus_per_node=8)
    cfg = DriverConfig(slot_s=300.0, horizon_slots=12)
    jobs = [
        _job("a", "strict_slo", ((1800.0, 10.0),)),
        _job("bb", "soft_slo", ((900.0, 10.0), (2400.0, 8.0), (99999.0, 2.0))),
        _job("ccc", "best_effort"),
        _job("dddd", "strict_slo", ((100.0, 10.0),)),  # less than one slot: left out
        _job("eeeee", "best_effort", gpus=64),  # no GPU count the cluster hosts: left out
    ]
    inst = batch_instance(cluster, jobs, cfg)
    by_id = {j.id: j for j in inst.jobs}
    assert set(by_id) == {"a", "bb", "ccc"}
    assert [d.deadline_s for d in by_id["a"].deadlines] == [1800.0]
    # tiers as the job's own, the last clipped to the 12 x 300 s horizon
    assert [(d.deadline_s, d.value) for d in by_id["bb"].deadlines] == [
        (900.0, 10.0),
        (2400.0, 8.0),
        (3600.0, 2.0),
    ]
    assert by_id["ccc"].deadlines == () and not any(j.admitted for j in inst.jobs)
    assert all(j.remaining_iterations == 6000 for j in inst.jobs)


def _fault(node: str, kind: str, desc: str, start: float, end: float = 1e9) -> Fault:
    return Fault(node, start, end, "Hardware Failure", kind, desc)


def test_window_instance_opens_the_faults_that_start_in_the_window():
    faults = [
        _fault("n1", "GPU", "ECC", 1.0),  # first fault: host 0, fail-stop of its first GPU
        _fault("n2", "NIC", "down", 2.0),  # host 1 down
        _fault("n3", "GPU", "GPU Temperature High", 3.0),  # host 2, a slow GPU
        _fault("n4", "GPU", "ECC", 12.0),  # after the window
    ]
    inst = window_instance(faults, start_day=0.0, days=10.0, hosts=4)
    hosts = list(inst.cluster.hosts())
    gpus = {h: list(inst.cluster.gpus_on(h)) for h in hosts}
    assert set(inst.failed_gpus) == {gpus[hosts[0]][0], *gpus[hosts[1]]}
    assert [s.gpu for s in inst.slow_gpus] == [gpus[hosts[2]][1]]
    assert inst.current_plan  # the healthy plan is running
    assert not window_instance(faults, start_day=20.0, days=5.0, hosts=4).failed_gpus


def test_fault_state_closed_faults_and_a_slow_gpu_on_a_failed_host():
    cluster = reconfig_custom(2, 8, "llama2-70b", 512, 0, 0, seed=0).cluster
    h0, h1 = list(cluster.hosts())
    failed, slow = fault_state(cluster, {(h0, "host"): 1, (h0, "slow"): 1, (h1, "gpu"): 0})
    assert failed == sorted(cluster.gpus_on(h0)) and slow == []
