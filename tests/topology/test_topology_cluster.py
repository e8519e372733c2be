"""Cluster: identity, immutability, queries, failures, pydantic integration."""

from __future__ import annotations

import copy
import json
import pickle
import random

import networkx as nx
import pytest
from pydantic import BaseModel, ValidationError

from schedopt.core.errors import InvalidInstanceError
from schedopt.core.pydantic_errors import invalid_instance_error
from schedopt.topology import (
    Cluster,
    ClusterSpec,
    dgx,
    heterogeneous,
    leaf_spine,
)


def tiny_dict() -> dict[str, object]:
    """h0 with GPUs g0, g1 on NVLink; g2 reachable only through g1 (a deliberate bridge)."""
    return {
        "name": "tiny",
        "gpus": [
            {"id": "g0", "host": "h0", "gpu_type": "H100", "memory_gib": 80},
            {"id": "g1", "host": "h0", "gpu_type": "H100", "memory_gib": 80},
            {"id": "g2", "host": "h0", "gpu_type": "A100", "memory_gib": 40, "speed": 0.5},
        ],
        "hosts": [{"id": "h0"}],
        "links": [
            {"a": "g0", "b": "g1", "kind": "nvlink", "bandwidth_gbps": 7200},
            {"a": "g0", "b": "h0", "kind": "pcie", "bandwidth_gbps": 512},
            {"a": "g1", "b": "h0", "kind": "pcie", "bandwidth_gbps": 512},
            {"a": "g1", "b": "g2", "kind": "pcie", "bandwidth_gbps": 256},
        ],
    }


def test_repr_and_summary() -> None:
    c = dgx(nodes=2)
    assert repr(c) == "Cluster('dgx-2x8', 16 GPUs on 2 hosts, types H100)"
    assert repr(Cluster.from_dict(tiny_dict())) == (
        "Cluster('tiny', 3 GPUs on 1 host, types A100, H100)"
    )
    text = heterogeneous([("H100", 1, 8), ("A100", 2, 4)]).summary()
    assert "16 GPUs on 3 hosts" in text
    assert "8 x H100 (80 GiB, speed 1)" in text
    assert "8 x A100 (80 GiB, speed 0.5)" in text
    assert "NVLink domains: 3 (1 x 8 GPUs, 2 x 4 GPUs)" in text
    assert "switches: 2 leaf, 3 nvswitch, 1 spine" in text


def test_gpu_queries_and_natural_sorting() -> None:
    c = dgx(nodes=12, gpus_per_node=2)
    assert c.hosts() == tuple(f"h{i}" for i in range(12))  # h2 before h10
    assert c.gpus()[-2:] == ("h11/g0", "h11/g1")
    t = Cluster.from_dict(tiny_dict())
    assert t.gpus("A100") == ("g2",)
    assert t.gpus("nope") == ()
    assert t.gpu("g2").memory_gib == 40.0
    assert t.leaf_of("h0") is None
    assert t.num_gpus == 3


def test_unknown_ids_raise_invalid_instance() -> None:
    c = dgx(nodes=1, gpus_per_node=2)
    with pytest.raises(InvalidInstanceError) as info:
        c.gpu("h0/g9")
    assert info.value.path == "gpu_id"
    with pytest.raises(InvalidInstanceError, match="host_id"):
        c.gpus_on("h9")
    with pytest.raises(InvalidInstanceError, match="host_id"):
        c.leaf_of("h0/g0")  # a GPU, not a host
    with pytest.raises(InvalidInstanceError, match="unknown node 'zz'"):
        c.bandwidth("h0/g0", "zz")
    with pytest.raises(InvalidInstanceError, match="unknown node"):
        c.hop_distance("zz", "h0/g0")


def test_graph_attributes_and_read_only() -> None:
    c = dgx(nodes=1, gpus_per_node=2)
    g = c.graph
    assert nx.is_frozen(g)
    assert g.nodes["h0/g0"] == {
        "kind": "gpu",
        "gpu_type": "H100",
        "memory_gib": 80.0,
        "speed": 1.0,
        "host": "h0",
    }
    assert g.nodes["h0"]["kind"] == "host"
    assert g.nodes["h0/nvs"] == {"kind": "switch", "tier": "nvswitch"}
    assert g.edges["h0/g0", "h0/nvs"] == {"kind": "nvlink", "bandwidth_gbps": 7200.0}
    with pytest.raises(nx.NetworkXError):
        g.add_edge("h0", "x")
    g.edges["h0/g0", "h0/nvs"]["bandwidth_gbps"] = 1.0  # even this cannot reach the cluster
    assert c.bandwidth("h0/g0", "h0/g1") == 7200.0


def test_immutability() -> None:
    c = dgx()
    with pytest.raises(AttributeError):
        c.name = "x"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        c._spec = None  # type: ignore[assignment]
    with pytest.raises(ValidationError):
        c.to_spec().name = "x"  # type: ignore[misc]


def test_equality_ignores_order_and_orientation() -> None:
    d = tiny_dict()
    shuffled = copy.deepcopy(d)
    random.Random(0).shuffle(shuffled["links"])  # type: ignore[arg-type]
    shuffled["gpus"].reverse()  # type: ignore[attr-defined]
    for link in shuffled["links"]:  # type: ignore[attr-defined]
        link["a"], link["b"] = link["b"], link["a"]
    a, b = Cluster.from_dict(d), Cluster.from_dict(shuffled)
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b}) == 1
    renamed = {**d, "name": "other"}
    assert Cluster.from_dict(renamed) != a
    assert a != "tiny"


def test_round_trips() -> None:
    for c in (
        dgx(nodes=3, leaf_size=2),
        leaf_spine(2, 2, 4),
        heterogeneous([("H100", 1, 8), ("V100", 2, 4)]),
        Cluster.from_dict(tiny_dict()),
    ):
        assert Cluster.from_dict(c.to_dict()) == c
        assert Cluster.from_dict(json.loads(json.dumps(c.to_dict()))) == c
        assert Cluster.from_spec(c.to_spec()) == c
        assert pickle.loads(pickle.dumps(c)) == c
        assert copy.deepcopy(c) == c
    assert Cluster.from_dict(tiny_dict()).to_dict()["switches"] == []


def test_nvlink_domains_through_gpus_and_singletons() -> None:
    t = Cluster.from_dict(tiny_dict())
    assert t.nvlink_domains() == (frozenset({"g0", "g1"}), frozenset({"g2"}))


def test_bandwidth_and_cache_symmetry() -> None:
    t = Cluster.from_dict(tiny_dict())
    assert t.bandwidth("g0", "g1") == 7200.0
    assert t.bandwidth("g0", "g2") == 256.0
    assert t.bandwidth("g2", "g0") == 256.0
    assert t.bandwidth("h0", "g1") == 512.0
    c = dgx(nodes=3, gpus_per_node=2, host_link_gbps=100.0)
    pairs = [(a, b) for a in c.gpus() for b in c.gpus()]
    forward = [c.bandwidth(a, b) for a, b in pairs]
    assert forward == [c.bandwidth(b, a) for a, b in pairs]
    assert set(forward) == {7200.0, 100.0, float("inf")}


def test_bandwidth_cache_is_bounded_and_stays_correct(monkeypatch) -> None:
    import schedopt.topology.paths as paths_module

    monkeypatch.setattr(paths_module, "_MAX_CACHED_SOURCES", 128)  # smaller than the GPUs
    c = dgx(nodes=20, gpus_per_node=8, host_link_gbps=100.0)
    gpus = c.gpus()
    for a, b in zip(gpus, gpus[1:] + gpus[:1], strict=True):
        expected = 7200.0 if c.host_of(a) == c.host_of(b) else 100.0
        assert c.bandwidth(a, b) == expected
        assert c.hop_distance(a, b) == (2 if c.host_of(a) == c.host_of(b) else 4)
    assert len(c._widest) <= 128
    assert c.bandwidth(gpus[0], gpus[-1]) == 100.0


def test_without_removes_gpus_and_shrinks_domains() -> None:
    c = dgx(nodes=2, gpus_per_node=4)
    w = c.without(["h0/g1", "h1/g3", "h0/g1"])
    assert w.name == "dgx-2x4-minus2"
    assert w.num_gpus == 6
    assert "h0/g1" not in w.gpus()
    assert "h0/g1" not in w.graph
    assert w.gpus_on("h0") == ("h0/g0", "h0/g2", "h0/g3")
    assert [len(d) for d in w.nvlink_domains()] == [3, 3]
    assert w.bandwidth("h0/g0", "h0/g3") == 7200.0
    assert w.bandwidth("h0/g0", "h1/g0") == 512.0
    assert c.num_gpus == 8  # the original is unchanged
    assert w.without([]).num_gpus == 6
    assert c.without("h0/g0").gpus()[0] == "h0/g1"  # one id as a plain string


def test_without_a_whole_host() -> None:
    c = dgx(nodes=2, gpus_per_node=4)
    w = c.without(c.gpus_on("h0"))
    assert w.hosts() == ("h0", "h1")  # the host stays
    assert w.gpus_on("h0") == ()
    assert "h0/nvs" not in w.switches()  # its NVSwitch would be isolated
    assert w.nvlink_domains() == (frozenset(c.gpus_on("h1")),)
    assert Cluster.from_dict(w.to_dict()) == w


def test_without_errors() -> None:
    c = dgx(nodes=1, gpus_per_node=2)
    with pytest.raises(InvalidInstanceError) as info:
        c.without(["h0/g0", "h0/g7"])
    assert (info.value.path, info.value.reason) == ("failed", "unknown GPU 'h0/g7'")
    with pytest.raises(InvalidInstanceError, match="failed: unknown GPU 'h0'"):
        c.without(["h0"])  # a host is not a GPU
    with pytest.raises(InvalidInstanceError, match="no GPU would remain"):
        c.without(c.gpus())
    with pytest.raises(InvalidInstanceError, match="not connected") as info:
        Cluster.from_dict(tiny_dict()).without(["g1"])  # g2 hung off g1
    assert info.value.path == "failed"
    assert "'g2'" in info.value.reason


class Instance(BaseModel):
    cluster: Cluster
    horizon: int = 10


def test_pydantic_field_round_trip() -> None:
    c = leaf_spine(2, 1, 2)
    inst = Instance(cluster=c)
    assert inst.cluster is c
    dumped = inst.model_dump(mode="json")
    assert dumped["cluster"] == c.to_dict()
    assert inst.model_dump()["cluster"] == c.to_dict()
    assert Instance.model_validate(dumped).cluster == c
    again = Instance.model_validate_json(inst.model_dump_json())
    assert again == inst
    assert Instance(cluster=c.to_spec()).cluster == c


def test_pydantic_field_errors_keep_their_location() -> None:
    bad = dgx(nodes=1, gpus_per_node=2).to_dict()
    bad["links"][1]["bandwidth_gbps"] = 0
    with pytest.raises(ValidationError) as info:
        Instance(cluster=bad)
    assert info.value.errors()[0]["loc"] == ("cluster", "links", 1, "bandwidth_gbps")
    with pytest.raises(ValidationError) as info:
        Instance.model_validate_json(json.dumps({"cluster": bad}))
    assert info.value.errors()[0]["loc"] == ("cluster", "links", 1, "bandwidth_gbps")
    with pytest.raises(ValidationError):
        Instance(cluster=42)  # type: ignore[arg-type]


def test_nested_errors_convert_to_invalid_instance() -> None:
    bad = dgx(nodes=1, gpus_per_node=2).to_dict()
    bad["links"][1]["b"] = "zz"
    with pytest.raises(ValidationError) as info:
        Instance(cluster=bad)
    err = invalid_instance_error(info.value)
    assert (err.path, err.reason) == ("cluster.links[1].b", "unknown node 'zz'")


def test_pydantic_json_schema_is_the_spec_schema() -> None:
    schema = Instance.model_json_schema()
    ref = schema["properties"]["cluster"]["$ref"].rsplit("/", 1)[-1]
    assert ref == "ClusterSpec"
    spec_schema = schema["$defs"]["ClusterSpec"]
    assert set(spec_schema["required"]) == {"gpus", "hosts", "links"}
    assert spec_schema["additionalProperties"] is False
    assert ClusterSpec.model_json_schema()["properties"].keys() == spec_schema["properties"].keys()
    json.dumps(Instance.model_json_schema(mode="serialization"))


def test_host_views_for_schedulers() -> None:
    from schedopt.topology import heterogeneous

    c = heterogeneous([("H100", 2, 8), ("V100", 1, 4)])
    hosts = c.hosts()
    assert [c.host_type(h) for h in hosts] == ["H100", "H100", "V100"]
    assert c.max_gpus_per_host() == {"H100": 8, "V100": 4}
    out = [c.gpus_on(hosts[0])[0], c.gpus_on(hosts[2])[1]]
    assert c.free_gpus_by_host(out) == {hosts[0]: 7, hosts[1]: 8, hosts[2]: 3}
    assert c.free_gpus_by_host() == {hosts[0]: 8, hosts[1]: 8, hosts[2]: 4}


def test_bandwidths_from_agrees_with_bandwidth() -> None:
    c = dgx(nodes=3, gpus_per_node=4, host_link_gbps=100.0)
    a = c.gpus()[0]
    row = c.bandwidths_from(a)
    for b in c.gpus():
        assert row[b] == c.bandwidth(a, b)
    with pytest.raises(TypeError):
        row[a] = 0.0  # read-only: the cache cannot be corrupted from outside
