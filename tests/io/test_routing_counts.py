"""Routing-count loaders: the documented layer,expert,count[,batch] CSV and the OLMoE file."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedopt.core.errors import InvalidInstanceError
from schedopt.io.traces.routing_counts import (
    RoutingCount,
    load_olmoe_counts,
    load_routing_counts,
)

OLMOE = (
    Path(__file__).resolve().parents[3] / "shared" / "data" / "olmoe-routing" / "expert_counts.csv"
)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "counts.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_counts_without_batches(tmp_path: Path) -> None:
    load = load_routing_counts(_write(tmp_path, "layer,expert,count\n0,0,5\n0,1,7\n1,0,2\n0,0,1\n"))
    assert load.layers() == (0, 1)
    assert load.batches() == ()
    assert load.matrix() == [[6, 7], [2, 0]]  # repeated rows summed, missing experts are 0
    assert load.matrix(layers=[1], experts=3) == [[2, 0, 0]]


def test_counts_with_batches(tmp_path: Path) -> None:
    text = "layer,expert,count,batch\n0,0,5,0\n0,1,1,0\n0,0,3,1\n0,1,9,1\n"
    load = load_routing_counts(_write(tmp_path, text))
    assert load.batches() == (0, 1)
    assert load.select(batch=1).matrix() == [[3, 9]]
    assert load.matrix() == [[8, 10]]
    assert RoutingCount(layer=0, expert=1, count=9, batch=1) in load.records


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("layer,expert\n0,0\n", "counts.csv:line 1"),
        ("layer,expert,count\n0,0,-3\n", "counts.csv:line 2.count"),
        ("layer,expert,count\n0,x,3\n", "counts.csv:line 2.expert"),
        ("layer,expert,count\n0,0,2.5\n", "counts.csv:line 2.count"),
        ("layer,expert,count,batch\n0,0,1,0\n1,0,1,-1\n", "counts.csv:line 3.batch"),
    ],
)
def test_malformed_rows_name_file_line_and_column(tmp_path: Path, text: str, where: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        load_routing_counts(_write(tmp_path, text))
    assert err.value.path == where


def test_loader_does_not_import_problem_packages() -> None:
    import ast

    import schedopt.io.traces.routing_counts as mod

    tree = ast.parse(Path(mod.__file__).read_text())
    names = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not any("problems" in n for n in names)


@pytest.mark.skipif(not OLMOE.exists(), reason="shared OLMoE routing data not present")
def test_real_olmoe_counts() -> None:
    load = load_olmoe_counts(OLMOE)
    olmoe = load.select(model="olmoe", variant="expert_counts")
    assert olmoe.layers() == (0, 7, 15)
    m = olmoe.select(domain="arxiv").matrix()
    assert len(m) == 3 and all(len(row) == 64 for row in m)
    busiest = max(m[0]) / (sum(m[0]) / 64)
    assert 2.0 < busiest < 10.0  # the README: busiest/mean 2.5–7.8× on OLMoE
    mixtral = load.select(model="mistral", variant="expert_counts").matrix()
    assert all(len(row) == 8 for row in mixtral)


@pytest.mark.skipif(not OLMOE.exists(), reason="shared OLMoE routing data not present")
def test_real_counts_build_an_instance() -> None:
    from schedopt.problems.moe_placement import from_counts
    from schedopt.topology import Cluster

    counts = load_olmoe_counts(OLMOE).select(model="olmoe", variant="expert_counts", domain="c4")
    inst = from_counts(counts.matrix(), shape="olmoe-1b-7b", cluster=Cluster.dgx(nodes=1))
    assert len(inst.layers) == 3 and inst.has_routing_counts
