"""Fair-share trace loaders: Gavel throughputs and Astraea tenant shares."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedopt.core.errors import InvalidInstanceError
from schedopt.io.traces.astraea import TenantShare, load_astraea_shares
from schedopt.io.traces.gavel import GavelJobType, load_gavel_throughputs, parse_job_key

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
GAVEL = DATA / "gavel" / "simulation_throughputs.json"
ASTRAEA = DATA / "astraea" / "share-production.csv"

SAMPLE = {
    "k80": {
        "('ResNet-18 (batch size 16)', 1)": {"null": 4.5, "('A3C', 1)": [1.0, 2.0]},
        "('Transformer (batch size 64)', 2)": {"null": 1.25},
    },
    "v100": {"('ResNet-18 (batch size 16)', 1)": {"null": 20.0}},
    "v100_unconsolidated": {"('ResNet-18 (batch size 16)', 1)": {"null": 18.0}},
}


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_gavel_records(tmp_path: Path) -> None:
    path = _write(tmp_path, "t.json", json.dumps(SAMPLE))
    jobs = load_gavel_throughputs(path)
    assert jobs == [
        GavelJobType("ResNet-18 (batch size 16)", 1, {"k80": 4.5, "v100": 20.0}),
        GavelJobType("Transformer (batch size 64)", 2, {"k80": 1.25}),
    ]
    unc = load_gavel_throughputs(path, unconsolidated=True)
    assert unc == [GavelJobType("ResNet-18 (batch size 16)", 1, {"v100": 18.0})]
    assert parse_job_key("('A3C', 4)") == ("A3C", 4)


@pytest.mark.parametrize(
    "doc, where",
    [
        ({"k80": {"ResNet": {"null": 1.0}}}, "t.json:k80.ResNet"),
        ({"k80": {"('A', 1)": {"x": 1.0}}}, "t.json:k80.('A', 1)"),
        ({"k80": {"('A', 1)": {"null": -1.0}}}, "t.json:k80.('A', 1)"),
        ({"k80": {"('A', 0)": {"null": 1.0}}}, "t.json:k80.('A', 0)"),
        ({"k80": []}, "t.json:k80"),
    ],
)
def test_gavel_malformed_entries_name_the_key(tmp_path: Path, doc, where: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        load_gavel_throughputs(_write(tmp_path, "t.json", json.dumps(doc)))
    assert err.value.path == where


def test_gavel_not_json(tmp_path: Path) -> None:
    with pytest.raises(InvalidInstanceError):
        load_gavel_throughputs(_write(tmp_path, "t.json", "{oops"))
    with pytest.raises(InvalidInstanceError):
        load_gavel_throughputs(_write(tmp_path, "t.json", "[1, 2]"))


@pytest.mark.skipif(not GAVEL.exists(), reason="shared Gavel data not present")
def test_gavel_real_file() -> None:
    jobs = load_gavel_throughputs(GAVEL)
    assert len(jobs) == 83
    assert {g for j in jobs for g in j.throughput} == {"k80", "p100", "v100"}
    assert {j.scale_factor for j in jobs} <= {1, 2, 4, 8}
    faster = [j for j in jobs if {"k80", "v100"} <= set(j.throughput) and j.throughput["k80"] > 0]
    assert sum(j.throughput["v100"] >= j.throughput["k80"] for j in faster) > 0.9 * len(faster)


def test_astraea_shares(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.csv", "name,share\nabc,30\ndef,10\n")
    assert load_astraea_shares(path) == [TenantShare("abc", 30.0), TenantShare("def", 10.0)]
    norm = load_astraea_shares(path, normalise=True)
    assert [t.share for t in norm] == pytest.approx([0.75, 0.25])


@pytest.mark.parametrize(
    "text, where",
    [
        ("name,share\nabc,0\n", "s.csv:line 2.share"),
        ("name,share\nabc,x\n", "s.csv:line 2.share"),
        ("name,share\nabc,1\nabc,2\n", "s.csv:line 3.name"),
        ("name\nabc\n", "s.csv:line 1"),
        ("name,share\n", "s.csv:line 2"),
    ],
)
def test_astraea_malformed(tmp_path: Path, text: str, where: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        load_astraea_shares(_write(tmp_path, "s.csv", text))
    assert err.value.path == where


@pytest.mark.skipif(not ASTRAEA.exists(), reason="shared Astraea data not present")
def test_astraea_real_file() -> None:
    shares = load_astraea_shares(ASTRAEA)
    assert len(shares) == 15
    assert max(t.share for t in shares) / min(t.share for t in shares) > 50  # heavily skewed
