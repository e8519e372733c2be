"""Trace loaders: Philly (Chronus artifact) and ElasticFlow ITP CSVs."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedopt.core.errors import InvalidInstanceError
from schedopt.io.traces import TraceJob, load_elasticflow, load_philly_chronus

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"

PHILLY_HEADER = (
    "job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,"
    "expect_time_list,expect_value_list,best_effort,job_type"
)
PHILLY_ROWS = [
    "0,vc_a,1,8555,5049,vgg16,747,14,1105,10,0,strict",
    "1,vc_b,1,5601,5530,mobilenet_v2,96,5,159-189-229-289,10-8-5-2,0,soft",
    "2,vc_a,1,14341,3621,alexnet,30,17,14341,10,1,best",
    "3,vc_c,0,100,10,resnet50,5,5,20,10,0,strict",
    "4,vc_c,12,200,1200,resnet50,60,5,120,10,0,strict",
]


def _write(tmp_path: Path, name: str, header: str, rows: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def test_philly_fields_units_skips_and_adjustments(tmp_path: Path) -> None:
    load = load_philly_chronus(_write(tmp_path, "p.csv", PHILLY_HEADER, PHILLY_ROWS))
    assert [j.id for j in load] == ["0", "1", "2", "4"]
    strict, soft, best, wide = load.jobs
    assert strict == TraceJob(
        id="0",
        tenant="vc_a",
        submit_s=8555 * 60.0,
        num_gpus=1,
        iterations=5049,
        duration_s=747 * 60.0,
        kind="strict_slo",
        deadlines=((1105 * 60.0, 10.0),),
        model="vgg16",
    )
    assert soft.kind == "soft_slo"
    assert soft.deadlines == (
        (159 * 60.0, 10.0),
        (189 * 60.0, 8.0),
        (229 * 60.0, 5.0),
        (289 * 60.0, 2.0),
    )
    assert best.kind == "best_effort" and best.deadlines == () and not best.is_slo
    assert wide.num_gpus == 16  # 12 rounded up to a power of two; speed kept
    assert wide.rate == pytest.approx(1200 / 3600)
    assert load.skipped == {"num_gpu == 0": 1}
    assert load.adjusted == {"num_gpu rounded up to a power of two": 1}


def test_philly_limit_counts_loaded_jobs(tmp_path: Path) -> None:
    path = _write(tmp_path, "p.csv", PHILLY_HEADER, PHILLY_ROWS)
    assert [j.id for j in load_philly_chronus(path, limit=2)] == ["0", "1"]
    # the zero-GPU row is skipped, not counted against the limit
    assert [j.id for j in load_philly_chronus(path, limit=4)] == ["0", "1", "2", "4"]


@pytest.mark.parametrize(
    ("row", "column"),
    [
        ("9,vc,1,10,abc,m,5,5,20,10,0,strict", "iterations"),
        ("9,vc,1,10,100,m,0,5,20,10,0,strict", "duration"),
        ("9,vc,1.5,10,100,m,5,5,20,10,0,strict", "num_gpu"),
        ("9,vc,1,10,100,m,5,5,20,10,0,urgent", "job_type"),
        ("9,vc,1,10,100,m,5,5,20,10,1,strict", "best_effort"),
        ("9,vc,1,10,100,m,5,5,20-30,10-8,0,strict", "expect_time_list"),
        ("9,vc,1,10,100,m,5,5,20-30-40,10-8,0,soft", "expect_value_list"),
        ("9,vc,1,10,100,m,5,5,30-20,10-8,0,soft", "expect_time_list"),
        ("9,vc,1,10,100,m,5,5,20-30,8-10,0,soft", "expect_value_list"),
        ("9,vc,1,10,100,m,5,5,2x,10,0,strict", "expect_time_list"),
        ("9,vc,1,10", "iterations"),
    ],
)
def test_philly_malformed_row_names_line_and_column(tmp_path: Path, row: str, column: str) -> None:
    path = _write(tmp_path, "bad.csv", PHILLY_HEADER, [PHILLY_ROWS[0], row])
    with pytest.raises(InvalidInstanceError) as err:
        load_philly_chronus(path)
    assert err.value.path == f"bad.csv:line 3.{column}"


def test_philly_missing_column(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad.csv", "job_id,user,num_gpu", ["0,vc,1"])
    with pytest.raises(InvalidInstanceError, match="missing columns") as err:
        load_philly_chronus(path)
    assert err.value.path == "bad.csv:line 1"


EF_HEADER = "job_id,submission_time,duration,num_gpu"
EF_ROWS = ["a,100,1000,1", "b,200,500.5,12", "c,300,50,0", "d,400,2000,64"]


def test_elasticflow_fixed_slack(tmp_path: Path) -> None:
    load = load_elasticflow(_write(tmp_path, "c.csv", EF_HEADER, EF_ROWS), slack=2.0)
    assert [j.id for j in load] == ["a", "b", "d"]
    a, b, d = load.jobs
    assert (a.submit_s, a.duration_s, a.iterations, a.num_gpus) == (100.0, 1000.0, 1000, 1)
    assert a.kind == "strict_slo" and a.deadlines == ((2000.0, 10.0),)
    assert a.tenant == "default" and a.model == ""
    assert (b.num_gpus, b.iterations) == (16, 500)  # rounded up; 1 it/s at its own count
    assert d.deadlines[0][0] == pytest.approx(4000.0)
    assert load.skipped == {"num_gpu == 0": 1}
    assert load.adjusted == {"num_gpu rounded up to a power of two": 1}


def test_elasticflow_seeded_slack_is_reproducible(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.csv", EF_HEADER, EF_ROWS)
    first = load_elasticflow(path, seed=7)
    assert first.jobs == load_elasticflow(path, seed=7).jobs
    assert first.jobs != load_elasticflow(path, seed=8).jobs
    for job in first:
        lam = job.deadlines[0][0] / job.duration_s
        assert 0.75 <= lam <= 2.25
    assert load_elasticflow(path, limit=1, seed=7).jobs == first.jobs[:1]


def test_elasticflow_malformed_and_bad_slack(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.csv", EF_HEADER, ["a,100,1000,1", "b,x,5,1"])
    with pytest.raises(InvalidInstanceError) as err:
        load_elasticflow(path)
    assert err.value.path == "c.csv:line 3.submission_time"
    with pytest.raises(ValueError, match="slack"):
        load_elasticflow(path, slack=0)


def test_trace_job_checks_its_fields() -> None:
    with pytest.raises(ValueError, match="exactly one deadline"):
        TraceJob("x", "t", 0.0, 1, 10, 5.0, "strict_slo", ())
    with pytest.raises(ValueError, match="kind"):
        TraceJob("x", "t", 0.0, 1, 10, 5.0, "urgent", ())
    with pytest.raises(ValueError, match="increase"):
        TraceJob("x", "t", 0.0, 1, 10, 5.0, "soft_slo", ((20.0, 10.0), (10.0, 8.0)))


@pytest.mark.skipif(
    not (DATA / "philly-chronus" / "trace_job_Philly_MIX2.csv").exists(),
    reason="shared Philly-Chronus data not present",
)
def test_real_philly_mix2() -> None:
    load = load_philly_chronus(DATA / "philly-chronus" / "trace_job_Philly_MIX2.csv", limit=200)
    assert len(load) == 200
    assert {j.kind for j in load} == {"strict_slo", "soft_slo", "best_effort"}
    assert all(j.num_gpus & (j.num_gpus - 1) == 0 for j in load)
    assert all(len(j.deadlines) == 4 for j in load if j.kind == "soft_slo")


@pytest.mark.skipif(
    not (DATA / "elasticflow-itp" / "cluster01.csv").exists(),
    reason="shared ElasticFlow data not present",
)
def test_real_elasticflow_cluster01() -> None:
    load = load_elasticflow(DATA / "elasticflow-itp" / "cluster01.csv", limit=200, seed=0)
    assert len(load) == 200
    assert {j.kind for j in load} == {"strict_slo"}
    assert all(j.deadlines[0][0] > 0 for j in load)
    assert [j.submit_s for j in load] == sorted(j.submit_s for j in load)
