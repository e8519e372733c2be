"""Constructors for common cluster shapes.

Every builder returns a validated :class:`~schedopt.topology.spec.ClusterSpec` (the class methods
of :class:`~schedopt.topology.cluster.Cluster` of the same names, without ``_spec``, and the
functions :func:`schedopt.topology.dgx` ... wrap it into a ``Cluster``) and uses the same
id scheme and the same two-level network:

* hosts ``h0``, ``h1``, ... (the Alibaba loader uses the trace's ``sn`` instead); GPUs
  ``<host>/g0``, ``<host>/g1``, ...; the NVSwitch of a host ``<host>/nvs``;
* inside a host, every GPU has a ``pcie`` link to the host and, on NVLink parts, an ``nvlink`` link
  to the host's NVSwitch (so all GPUs of a host form one NVLink domain). A host with a single
  GPU gets no NVSwitch;
* every host has one link (``ib`` or ``ethernet``) of ``host_link_gbps`` to its leaf switch
  ``leaf0``, ``leaf1``, ... . There is always at least one leaf, even for one host, so that
  :meth:`~schedopt.topology.cluster.Cluster.leaf_of` is always defined;
* when there is more than one leaf, every leaf links to one spine ``spine0`` with
  ``host_link_gbps * hosts_per_leaf / 2`` Gbps: a 2:1 oversubscribed fabric. ``hosts_per_leaf``
  is the leaf's capacity (``leaf_size``), not how many hosts the last, partly filled leaf has.

The named shapes are here (:func:`dgx_spec`, :func:`leaf_spine_spec`, :func:`heterogeneous_spec`);
the Alibaba node-list loader is :func:`~schedopt.topology.alibaba.alibaba_nodes_spec` (also
importable from here), the GPU-type defaults are in :mod:`schedopt.topology.gpu_types` and the
shared layout helpers in :mod:`schedopt.topology.spec_builder`.

Invalid arguments raise :class:`~schedopt.core.errors.InvalidInstanceError` (a ``ValueError``)
whose ``path`` is the argument's name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from schedopt.core.errors import InvalidInstanceError
from schedopt.topology.alibaba import ALIBABA_GPU_TYPES, ALIBABA_UNKNOWN_TYPE, alibaba_nodes_spec
from schedopt.topology.gpu_types import GPU_TYPES, GpuTypeInfo
from schedopt.topology.spec import ClusterSpec
from schedopt.topology.spec_builder import (
    _check_count,
    _check_positive,
    _chunks,
    _SpecBuilder,
    _type_info,
)

__all__ = [
    "ALIBABA_GPU_TYPES",
    "ALIBABA_UNKNOWN_TYPE",
    "GPU_TYPES",
    "GpuTypeInfo",
    "alibaba_nodes_spec",
    "dgx_spec",
    "heterogeneous_spec",
    "leaf_spine_spec",
]


def dgx_spec(
    nodes: int = 1,
    gpus_per_node: int = 8,
    gpu_type: str = "H100",
    memory_gib: float | None = None,
    nvlink_gbps: float | None = None,
    host_link_gbps: float = 3200.0,
    leaf_size: int | None = None,
    name: str | None = None,
    *,
    pcie_gbps: float = 512.0,
    speed: float | None = None,
) -> ClusterSpec:
    """``nodes`` DGX/HGX-style servers of ``gpus_per_node`` NVSwitch-connected GPUs.

    Hosts ``h0..h{nodes-1}``; per host an NVSwitch ``h{i}/nvs`` with one ``nvlink`` of
    ``nvlink_gbps`` to each GPU and one ``pcie`` link of ``pcie_gbps`` from each GPU to the host;
    hosts linked by ``ib`` of ``host_link_gbps`` (the server's summed NIC bandwidth: 8 x 400 Gbps
    for a DGX H100) to leaves of ``leaf_size`` hosts (default: all hosts under ``leaf0``); leaves
    to ``spine0`` at ``host_link_gbps * leaf_size / 2`` (2:1 oversubscription).

    ``memory_gib``, ``nvlink_gbps`` and ``speed`` default from :data:`GPU_TYPES`; for another
    ``gpu_type`` the first two are required. Name defaults to ``f"dgx-{nodes}x{gpus_per_node}"``.
    """
    _check_count("nodes", nodes)
    _check_count("gpus_per_node", gpus_per_node)
    _check_count("leaf_size", nodes if leaf_size is None else leaf_size)
    _check_positive("host_link_gbps", host_link_gbps)
    _check_positive("pcie_gbps", pcie_gbps)
    info = _type_info(gpu_type, memory_gib, nvlink_gbps, speed)
    size = nodes if leaf_size is None else leaf_size
    builder = _SpecBuilder(name or f"dgx-{nodes}x{gpus_per_node}")
    host_ids = [f"h{i}" for i in range(nodes)]
    for host_id in host_ids:
        builder.add_server(host_id, gpus_per_node, gpu_type, info, pcie_gbps)
    leaves = _chunks(host_ids, size)
    builder.add_fabric(leaves, "ib", host_link_gbps, [host_link_gbps * size / 2] * len(leaves))
    return builder.build()


def leaf_spine_spec(
    racks: int,
    nodes_per_rack: int,
    gpus_per_node: int = 8,
    gpu_type: str = "H100",
    memory_gib: float | None = None,
    nvlink_gbps: float | None = None,
    host_link_gbps: float = 3200.0,
    name: str | None = None,
    *,
    pcie_gbps: float = 512.0,
    speed: float | None = None,
) -> ClusterSpec:
    """``racks`` racks of ``nodes_per_rack`` servers: one leaf per rack, all leaves to one spine.

    The same as ``dgx_spec(racks * nodes_per_rack, ..., leaf_size=nodes_per_rack)``; the default
    name is ``f"leafspine-{racks}x{nodes_per_rack}x{gpus_per_node}"``.
    """
    _check_count("racks", racks)
    _check_count("nodes_per_rack", nodes_per_rack)
    return dgx_spec(
        racks * nodes_per_rack,
        gpus_per_node,
        gpu_type,
        memory_gib,
        nvlink_gbps,
        host_link_gbps,
        leaf_size=nodes_per_rack,
        name=name or f"leafspine-{racks}x{nodes_per_rack}x{gpus_per_node}",
        pcie_gbps=pcie_gbps,
        speed=speed,
    )


def heterogeneous_spec(
    pools: Sequence[tuple[str, int, int]],
    host_link_gbps: float = 3200.0,
    name: str | None = None,
    *,
    pcie_gbps: float = 512.0,
    gpu_types: Mapping[str, GpuTypeInfo] | None = None,
) -> ClusterSpec:
    """Several pools of servers, each pool ``(gpu_type, nodes, gpus_per_node)`` under its own leaf.

    Hosts are numbered across pools (``h0..`` for the first pool, continuing in the next); every
    pool's leaf ``leaf{k}`` links to ``spine0`` (when there are two pools or more) at
    ``host_link_gbps * nodes / 2``. GPU types come from :data:`GPU_TYPES`, extended or overridden
    by ``gpu_types``. The default name is like ``"hetero-2xH100x8+4xA100x4"``.
    """
    _check_positive("host_link_gbps", host_link_gbps)
    _check_positive("pcie_gbps", pcie_gbps)
    table = {**GPU_TYPES, **(gpu_types or {})}
    if not pools:
        raise InvalidInstanceError("pools", "at least one pool is required")
    parsed: list[tuple[str, int, int, GpuTypeInfo]] = []
    for k, pool in enumerate(pools):
        if len(pool) != 3:
            raise InvalidInstanceError(
                f"pools[{k}]", f"must be (gpu_type, nodes, gpus_per_node), got {pool!r}"
            )
        gpu_type, nodes, per_node = pool
        _check_count(f"pools[{k}].nodes", nodes)
        _check_count(f"pools[{k}].gpus_per_node", per_node)
        if gpu_type not in table:
            raise InvalidInstanceError(
                f"pools[{k}].gpu_type",
                f"unknown GPU type {gpu_type!r}; pass its defaults in gpu_types= "
                f"(known: {', '.join(sorted(table))})",
            )
        parsed.append((gpu_type, nodes, per_node, table[gpu_type]))
    default_name = "hetero-" + "+".join(f"{n}x{t}x{g}" for t, n, g, _ in parsed)
    builder = _SpecBuilder(name or default_name)
    leaves: list[list[str]] = []
    next_host = 0
    for gpu_type, nodes, per_node, info in parsed:
        leaves.append([f"h{i}" for i in range(next_host, next_host + nodes)])
        next_host += nodes
        for host_id in leaves[-1]:
            builder.add_server(host_id, per_node, gpu_type, info, pcie_gbps)
    uplinks = [host_link_gbps * len(hosts) / 2 for hosts in leaves]
    builder.add_fabric(leaves, "ib", host_link_gbps, uplinks)
    return builder.build()
