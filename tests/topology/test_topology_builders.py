"""Builders: shapes, ids, NVLink domains, bandwidths and hop distances of the generated clusters."""

from __future__ import annotations

import inspect

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedopt.core.errors import InvalidInstanceError
from schedopt.topology import (
    GPU_TYPES,
    Cluster,
    GpuTypeInfo,
    builders,
    dgx,
    heterogeneous,
    leaf_spine,
    nccl,
)

HYPOTHESIS = settings(derandomize=True, deadline=None, max_examples=50)


def test_dgx_shape_and_ids() -> None:
    c = dgx(nodes=2)
    assert c.name == "dgx-2x8"
    assert c.num_gpus == 16
    assert c.hosts() == ("h0", "h1")
    assert c.gpu_types() == ("H100",)
    assert c.gpus()[:3] == ("h0/g0", "h0/g1", "h0/g2")
    assert c.gpus_on("h1") == tuple(f"h1/g{i}" for i in range(8))
    assert c.host_of("h1/g3") == "h1"
    assert c.switches() == ("h0/nvs", "h1/nvs", "leaf0")  # one leaf, so no spine
    assert c.leaf_of("h0") == c.leaf_of("h1") == "leaf0"
    gpu = c.gpu("h0/g0")
    assert (gpu.memory_gib, gpu.speed, gpu.gpu_type) == (80.0, 1.0, "H100")


def test_dgx_nvlink_domains_are_the_hosts() -> None:
    c = dgx(nodes=3, gpus_per_node=4)
    assert c.nvlink_domains() == tuple(frozenset(c.gpus_on(h)) for h in c.hosts())


def test_dgx_bandwidths() -> None:
    c = dgx(nodes=2)
    assert c.bandwidth("h0/g0", "h0/g7") == GPU_TYPES["H100"].nvlink_gbps == 7200.0
    # Across hosts the path is GPU -pcie- host -ib- leaf -ib- host -pcie- GPU: PCIe is narrowest.
    assert c.bandwidth("h0/g0", "h1/g0") == 512.0
    # With a narrower host link, the host link is the bottleneck.
    thin = dgx(nodes=2, host_link_gbps=200.0)
    assert thin.bandwidth("h0/g0", "h1/g5") == 200.0
    assert thin.bandwidth("h0", "h1") == 200.0
    assert thin.bandwidth("h0/g0", "h0/g0") == float("inf")


def test_dgx_type_defaults_and_overrides() -> None:
    a100 = dgx(gpu_type="A100", gpus_per_node=2)
    assert a100.gpu("h0/g0").speed == 0.5
    assert a100.bandwidth("h0/g0", "h0/g1") == 4800.0
    v100 = dgx(gpu_type="V100", gpus_per_node=2, memory_gib=16)
    assert v100.gpu("h0/g1").memory_gib == 16.0
    assert v100.bandwidth("h0/g0", "h0/g1") == 2400.0
    custom = dgx(gpu_type="B200", memory_gib=192, nvlink_gbps=14400, gpus_per_node=2, speed=2.0)
    assert custom.gpu("h0/g0").gpu_type == "B200"
    assert custom.bandwidth("h0/g0", "h0/g1") == 14400.0
    assert dgx(name="mine").name == "mine"


def test_dgx_single_gpu_hosts_have_no_nvswitch() -> None:
    c = dgx(nodes=3, gpus_per_node=1)
    assert c.switches() == ("leaf0",)
    assert c.nvlink_domains() == tuple(frozenset({g}) for g in c.gpus())


def test_dgx_leaves_and_spine() -> None:
    c = dgx(nodes=5, gpus_per_node=2, leaf_size=2, host_link_gbps=300.0)
    assert [c.leaf_of(h) for h in c.hosts()] == ["leaf0", "leaf0", "leaf1", "leaf1", "leaf2"]
    assert "spine0" in c.switches()
    # Uplinks are host_link * leaf_size / 2 = 300: same as a host link, so it is not narrower.
    assert c.bandwidth("h0", "h4") == 300.0
    edges = c.graph.edges
    assert edges["leaf2", "spine0"]["bandwidth_gbps"] == 300.0  # capacity, not occupancy
    assert edges["leaf0", "spine0"]["kind"] == "ib"


@pytest.mark.parametrize(
    ("kwargs", "arg"),
    [
        ({"nodes": 0}, "nodes"),
        ({"gpus_per_node": 0}, "gpus_per_node"),
        ({"leaf_size": 0}, "leaf_size"),
        ({"host_link_gbps": 0.0}, "host_link_gbps"),
        ({"gpu_type": "MI300X"}, "memory_gib"),
        ({"gpu_type": "MI300X", "memory_gib": 192}, "nvlink_gbps"),
        ({"memory_gib": -1}, "memory_gib"),
        ({"nodes": True}, "nodes"),
        ({"nodes": 1.5}, "nodes"),
    ],
)
def test_dgx_rejects_bad_arguments(kwargs: dict[str, object], arg: str) -> None:
    with pytest.raises(ValueError, match=arg) as info:
        dgx(**kwargs)  # type: ignore[arg-type]
    assert isinstance(info.value, InvalidInstanceError)
    assert info.value.path == arg


def test_leaf_spine_bandwidth_limited_by_uplink() -> None:
    # One host per rack: the uplink is host_link * 1 / 2, narrower than the host link.
    c = leaf_spine(racks=3, nodes_per_rack=1, host_link_gbps=300.0)
    assert c.name == "leafspine-3x1x8"
    assert c.num_gpus == 24
    assert [c.leaf_of(h) for h in c.hosts()] == ["leaf0", "leaf1", "leaf2"]
    assert c.bandwidth("h0/g0", "h2/g0") == 150.0
    assert c.bandwidth("h0", "h1") == 150.0
    wide = leaf_spine(racks=2, nodes_per_rack=4, host_link_gbps=300.0)
    assert wide.bandwidth("h0/g0", "h1/g0") == 300.0  # same rack
    assert wide.bandwidth("h0/g0", "h7/g0") == 300.0  # uplink 600 is not the bottleneck


def test_hop_distances() -> None:
    c = leaf_spine(racks=2, nodes_per_rack=2, gpus_per_node=4)
    assert c.hop_distance("h0/g0", "h0/g0") == 0
    assert c.hop_distance("h0/g0", "h0/g3") == 2  # via the NVSwitch or the host
    assert c.hop_distance("h0/g0", "h0") == 1
    assert c.hop_distance("h0/g0", "h1/g0") == 4  # g-host-leaf-host-g
    assert c.hop_distance("h0/g0", "h3/g2") == 6  # g-host-leaf-spine-leaf-host-g
    assert c.hop_distance("h3/g2", "h0/g0") == 6


def test_heterogeneous_pools() -> None:
    c = heterogeneous([("H100", 2, 8), ("A100", 3, 4), ("V100", 1, 2)])
    assert c.name == "hetero-2xH100x8+3xA100x4+1xV100x2"
    assert c.hosts() == ("h0", "h1", "h2", "h3", "h4", "h5")
    assert c.num_gpus == 16 + 12 + 2
    assert c.gpu_types() == ("A100", "H100", "V100")
    assert len(c.gpus("A100")) == 12
    assert c.gpus("V100") == ("h5/g0", "h5/g1")
    assert [c.leaf_of(h) for h in c.hosts()] == ["leaf0"] * 2 + ["leaf1"] * 3 + ["leaf2"]
    assert c.gpu("h5/g0").memory_gib == 32.0
    assert len(c.nvlink_domains()) == 6
    # The V100 pool's uplink is 3200 * 1 / 2: the only link narrower than PCIe on the path.
    assert c.bandwidth("h0/g0", "h5/g0") == 512.0
    assert c.graph.edges["leaf2", "spine0"]["bandwidth_gbps"] == 1600.0
    assert c.bandwidth("h0", "h5") == 1600.0


def test_heterogeneous_custom_types_and_errors() -> None:
    extra = {"L4": GpuTypeInfo(memory_gib=24.0, nvlink_gbps=None, speed=0.2)}
    c = heterogeneous([("L4", 2, 4)], gpu_types=extra)
    assert c.switches() == ("leaf0",)  # no NVLink, one pool: no NVSwitch, no spine
    assert len(c.nvlink_domains()) == 8
    with pytest.raises(InvalidInstanceError) as info:
        heterogeneous([("L4", 2, 4)])
    assert info.value.path == "pools[0].gpu_type"
    with pytest.raises(InvalidInstanceError, match=r"pools\[1\]\.nodes"):
        heterogeneous([("H100", 1, 8), ("A100", 0, 8)])
    with pytest.raises(InvalidInstanceError, match="pools"):
        heterogeneous([])


@pytest.mark.parametrize(
    ("method", "function"),
    [
        (Cluster.dgx, builders.dgx_spec),
        (Cluster.leaf_spine, builders.leaf_spine_spec),
        (Cluster.heterogeneous, builders.heterogeneous_spec),
        (Cluster.from_alibaba_nodes, builders.alibaba_nodes_spec),
        (Cluster.from_nccl_xml, nccl.nccl_xml_spec),
    ],
)
def test_classmethods_mirror_the_builders(method: object, function: object) -> None:
    # The same arguments; the builder returns the spec that the class method wraps.
    assert inspect.signature(method).parameters == inspect.signature(function).parameters  # type: ignore[arg-type]


def test_classmethod_builds_the_same_cluster() -> None:
    assert Cluster.dgx(nodes=2, gpus_per_node=2) == dgx(nodes=2, gpus_per_node=2)
    assert Cluster.leaf_spine(2, 2, 2) == leaf_spine(2, 2, 2)


@HYPOTHESIS
@given(
    nodes=st.integers(1, 6),
    gpus_per_node=st.integers(1, 8),
    leaf_size=st.none() | st.integers(1, 4),
    gpu_type=st.sampled_from(sorted(GPU_TYPES)),
)
def test_dgx_shapes_round_trip(
    nodes: int, gpus_per_node: int, leaf_size: int | None, gpu_type: str
) -> None:
    c = dgx(nodes, gpus_per_node, gpu_type, leaf_size=leaf_size)
    assert len(c.gpus()) == nodes * gpus_per_node
    assert len(c.hosts()) == nodes
    assert Cluster.from_dict(c.to_dict()) == c
    assert len(c.nvlink_domains()) == (nodes if gpus_per_node > 1 else nodes * gpus_per_node)


@HYPOTHESIS
@given(
    pools=st.lists(
        st.tuples(st.sampled_from(sorted(GPU_TYPES)), st.integers(1, 3), st.integers(1, 4)),
        min_size=1,
        max_size=4,
    )
)
def test_heterogeneous_shapes_round_trip(pools: list[tuple[str, int, int]]) -> None:
    c = heterogeneous(pools)
    assert len(c.gpus()) == sum(n * g for _, n, g in pools)
    assert len(c.hosts()) == sum(n for _, n, _ in pools)
    assert set(c.gpu_types()) == {t for t, _, _ in pools}
    assert Cluster.from_dict(c.to_dict()) == c
