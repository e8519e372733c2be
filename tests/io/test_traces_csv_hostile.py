"""CSV trace loaders under hostile files: each ends in ``InvalidInstanceError`` naming the file
(or row), never another exception or a hang. Before, the CSV loaders read without a cap
(``/dev/zero`` never returned) and let ``csv.Error`` (a NUL byte, a field over the csv
module's limit) and ``UnicodeDecodeError`` through."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from schedopt.core.errors import InvalidInstanceError
from schedopt.io.traces import _files, load_elasticflow, load_philly_chronus
from schedopt.topology import alibaba
from schedopt.topology.alibaba import alibaba_nodes_spec

from .test_traces import PHILLY_HEADER, PHILLY_ROWS
from .threads import in_thread

ALIBABA = "sn,cpu_milli,memory_mib,gpu,model\nnode-1,96000,786432,8,V100M32\n"
PHILLY = "\n".join([PHILLY_HEADER, *PHILLY_ROWS]) + "\n"


@pytest.fixture
def small_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_files, "MAX_TRACE_BYTES", 1 << 20)
    monkeypatch.setattr(alibaba, "MAX_NODE_LIST_BYTES", 1 << 20)


LOADERS = {
    "philly": load_philly_chronus,
    "elasticflow": load_elasticflow,
    "alibaba": alibaba_nodes_spec,
}


@pytest.mark.parametrize("name", sorted(LOADERS))
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_dev_zero_is_refused(small_caps: None, name: str) -> None:
    box = in_thread(lambda: LOADERS[name]("/dev/zero"))
    assert isinstance(box.get("error"), InvalidInstanceError), box
    assert "character device" in box["error"].reason


def test_a_field_over_the_csv_limit_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text(PHILLY.replace("vgg16", "v" * 200_000), encoding="utf-8")
    with pytest.raises(InvalidInstanceError, match="field larger than field limit") as err:
        load_philly_chronus(path)
    assert err.value.path == "p.csv:line 2"


@pytest.mark.parametrize(
    "text", [PHILLY.replace("vgg16", "vgg\x0016"), PHILLY.replace("vgg16", '"vgg16')]
)
def test_nul_bytes_and_unclosed_quotes_load_or_are_refused(tmp_path: Path, text: str) -> None:
    """A NUL byte (accepted by csv since Python 3.11) or a quote that never closes (one long
    field to the end): either the rows parse and are checked as data, or the file is refused;
    no other exception."""
    path = tmp_path / "p.csv"
    path.write_text(text, encoding="utf-8")
    try:
        load_philly_chronus(path)
    except InvalidInstanceError as err:
        assert err.path.startswith("p.csv")


@pytest.mark.parametrize("name", ["philly", "alibaba"])
def test_bytes_that_are_not_utf8_and_absent_files(tmp_path: Path, name: str) -> None:
    good = PHILLY if name == "philly" else ALIBABA
    path = tmp_path / "f.csv"
    path.write_bytes(good.encode().replace(b"8", b"\xff", 1))
    for target in (path, tmp_path / "absent.csv", tmp_path):
        with pytest.raises(InvalidInstanceError):
            LOADERS[name](target)


def test_alibaba_rows_that_csv_refuses_or_absurd_gpu_counts(tmp_path: Path) -> None:
    path = tmp_path / "nodes.csv"
    path.write_text(ALIBABA.replace("node-1", "n" * 200_000), encoding="utf-8")
    with pytest.raises(InvalidInstanceError, match="field larger than field limit") as err:
        alibaba_nodes_spec(path)
    assert err.value.path == "rows[0]"
    path.write_text(ALIBABA.replace(",8,", ",1000000000000,"), encoding="utf-8")
    box = in_thread(lambda: alibaba_nodes_spec(path))  # a trillion GPUs: refused, not built
    assert isinstance(box.get("error"), InvalidInstanceError), box
    assert box["error"].path == "rows[0].gpu"
