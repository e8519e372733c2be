"""Fair-share trace loaders: Astraea tenant shares (Gavel's files: test_traces_gavel.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedopt.core.errors import InvalidInstanceError
from schedopt.io.traces.astraea import TenantShare, load_astraea_shares

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
ASTRAEA = DATA / "astraea" / "share-production.csv"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


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
