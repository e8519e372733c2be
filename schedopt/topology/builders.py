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

Invalid arguments raise :class:`~schedopt.core.errors.InvalidInstanceError` (a ``ValueError``)
whose ``path`` is the argument's name.
"""

from __future__ import annotations

import csv
import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any

from schedopt.core.errors import InvalidInstanceError
from schedopt.topology.spec import ClusterSpec, LinkKind, SwitchTier

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


@dataclass(frozen=True)
class GpuTypeInfo:
    """Defaults for one GPU model.

    ``nvlink_gbps`` is the GPU's total NVLink bandwidth to its NVSwitch, counting both directions
    (NVIDIA's headline figure: 900 GB/s for an H100 SXM = 7200 Gbps); ``None`` for PCIe-only
    parts. ``speed`` is compute speed relative to an H100 (= 1.0), a rough training-throughput
    ratio meant for relative comparisons only.
    """

    memory_gib: float
    nvlink_gbps: float | None
    speed: float


GPU_TYPES: Mapping[str, GpuTypeInfo] = MappingProxyType(
    {
        "H100": GpuTypeInfo(memory_gib=80.0, nvlink_gbps=7200.0, speed=1.0),
        "A100": GpuTypeInfo(memory_gib=80.0, nvlink_gbps=4800.0, speed=0.5),
        "V100": GpuTypeInfo(memory_gib=32.0, nvlink_gbps=2400.0, speed=0.25),
    }
)
"""Defaults used by :func:`dgx_spec`, :func:`leaf_spine_spec`, :func:`heterogeneous_spec` and the
NCCL loader."""

ALIBABA_GPU_TYPES: Mapping[str, GpuTypeInfo] = MappingProxyType(
    {
        "P100": GpuTypeInfo(memory_gib=16.0, nvlink_gbps=None, speed=0.1),
        "T4": GpuTypeInfo(memory_gib=16.0, nvlink_gbps=None, speed=0.1),
        "A10": GpuTypeInfo(memory_gib=24.0, nvlink_gbps=None, speed=0.2),
        "V100M16": GpuTypeInfo(memory_gib=16.0, nvlink_gbps=2400.0, speed=0.25),
        "V100M32": GpuTypeInfo(memory_gib=32.0, nvlink_gbps=2400.0, speed=0.25),
    }
)
"""The models of the Alibaba cluster-trace-gpu-v2023 node list; only the V100s have NVLink."""

ALIBABA_UNKNOWN_TYPE = GpuTypeInfo(memory_gib=32.0, nvlink_gbps=None, speed=0.25)
"""Used for models not in :data:`ALIBABA_GPU_TYPES` (the trace's anonymised ``G2``, ``G3``)."""


class _SpecBuilder:
    """Accumulates the JSON form of a cluster; :meth:`build` validates it."""

    def __init__(self, name: str):
        self.name = name
        self.gpus: list[dict[str, Any]] = []
        self.hosts: dict[str, dict[str, Any]] = {}
        self.switches: list[dict[str, Any]] = []
        self.links: list[dict[str, Any]] = []

    def add_host(self, host_id: str) -> None:
        self.hosts[host_id] = {"id": host_id}

    def add_gpu(self, gpu_id: str, host_id: str, gpu_type: str, memory_gib: float, speed: float):
        self.gpus.append(
            {
                "id": gpu_id,
                "host": host_id,
                "gpu_type": gpu_type,
                "memory_gib": memory_gib,
                "speed": speed,
            }
        )

    def add_switch(self, switch_id: str, tier: SwitchTier) -> None:
        self.switches.append({"id": switch_id, "tier": tier})

    def link(self, a: str, b: str, kind: LinkKind, bandwidth_gbps: float) -> None:
        self.links.append({"a": a, "b": b, "kind": kind, "bandwidth_gbps": bandwidth_gbps})

    def add_server(
        self,
        host_id: str,
        n_gpus: int,
        gpu_type: str,
        info: GpuTypeInfo,
        pcie_gbps: float,
    ) -> None:
        """A host with ``n_gpus`` GPUs on PCIe and, if ``info.nvlink_gbps``, an NVSwitch."""
        self.add_host(host_id)
        nvswitch = f"{host_id}/nvs"
        if info.nvlink_gbps is not None and n_gpus > 1:
            self.add_switch(nvswitch, "nvswitch")
        for i in range(n_gpus):
            gpu_id = f"{host_id}/g{i}"
            self.add_gpu(gpu_id, host_id, gpu_type, info.memory_gib, info.speed)
            self.link(gpu_id, host_id, "pcie", pcie_gbps)
            if info.nvlink_gbps is not None and n_gpus > 1:
                self.link(gpu_id, nvswitch, "nvlink", info.nvlink_gbps)

    def add_fabric(
        self,
        leaves: Sequence[Sequence[str]],
        kind: LinkKind,
        host_link_gbps: float,
        uplink_gbps: Sequence[float],
    ) -> None:
        """Hosts to leaves ``leaf0..``, and (if more than one leaf) leaves to ``spine0``."""
        for i, hosts in enumerate(leaves):
            leaf = f"leaf{i}"
            self.add_switch(leaf, "leaf")
            for host_id in hosts:
                self.hosts[host_id]["leaf"] = leaf
                self.link(host_id, leaf, kind, host_link_gbps)
        if len(leaves) > 1:
            self.add_switch("spine0", "spine")
            for i, bandwidth in enumerate(uplink_gbps):
                self.link(f"leaf{i}", "spine0", kind, bandwidth)

    def build(self) -> ClusterSpec:
        return ClusterSpec.model_validate(
            {
                "name": self.name,
                "gpus": self.gpus,
                "hosts": list(self.hosts.values()),
                "switches": self.switches,
                "links": self.links,
            }
        )


def _check_count(arg: str, value: int, minimum: int = 1) -> None:
    """Accept an integer (anything with ``__index__``, e.g. numpy's, but not a bool)."""
    try:
        ok = not isinstance(value, bool) and operator.index(value) >= minimum
    except TypeError:
        ok = False
    if not ok:
        raise InvalidInstanceError(arg, f"must be an integer >= {minimum}, got {value!r}")


def _check_positive(arg: str, value: float) -> None:
    try:
        ok = not isinstance(value, bool | str) and 0 < float(value) < math.inf
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise InvalidInstanceError(arg, f"must be a positive finite number, got {value!r}")


def _chunks(items: Sequence[str], size: int) -> list[list[str]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def _type_info(
    gpu_type: str,
    memory_gib: float | None,
    nvlink_gbps: float | None,
    speed: float | None,
    table: Mapping[str, GpuTypeInfo] = GPU_TYPES,
) -> GpuTypeInfo:
    """The table's defaults for ``gpu_type``, overridden by whatever the caller gave."""
    known = table.get(gpu_type)
    if known is None:
        for arg, value in (("memory_gib", memory_gib), ("nvlink_gbps", nvlink_gbps)):
            if value is None:
                raise InvalidInstanceError(
                    arg,
                    f"required for GPU type {gpu_type!r}, which has no defaults "
                    f"(known types: {', '.join(sorted(table))})",
                )
        known = GpuTypeInfo(memory_gib=0.0, nvlink_gbps=None, speed=1.0)
    info = GpuTypeInfo(
        memory_gib=known.memory_gib if memory_gib is None else memory_gib,
        nvlink_gbps=known.nvlink_gbps if nvlink_gbps is None else nvlink_gbps,
        speed=known.speed if speed is None else speed,
    )
    _check_positive("memory_gib", info.memory_gib)
    _check_positive("speed", info.speed)
    if info.nvlink_gbps is not None:
        _check_positive("nvlink_gbps", info.nvlink_gbps)
    return info


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


_ALIBABA_COLUMNS = ("sn", "gpu", "model")


def alibaba_nodes_spec(
    csv_path: str | PathLike[str],
    limit: int | None = None,
    *,
    leaf_size: int = 32,
    host_link_gbps: float = 100.0,
    pcie_gbps: float = 128.0,
    name: str | None = None,
) -> ClusterSpec:
    """The node inventory of Alibaba's cluster-trace-gpu-v2023 (``openb_node_list_gpu_node.csv``).

    The file has columns ``sn,cpu_milli,memory_mib,gpu,model``; each of the first ``limit`` rows
    (all by default) becomes a host named by its ``sn``, with ``gpu`` GPUs of type ``model``.
    GPUs link to their host by ``pcie`` (``pcie_gbps``, default 128 = PCIe Gen3 x16, the era of
    these cards); V100 models get an NVSwitch-style ``nvlink`` domain per host (the real SXM2
    boards are a hybrid cube-mesh; this is an approximation). Memory, NVLink and speed come from
    :data:`ALIBABA_GPU_TYPES`, and :data:`ALIBABA_UNKNOWN_TYPE` (32 GiB, no NVLink, speed 0.25) for
    the anonymised models. Hosts sit in leaves of ``leaf_size`` with ``ethernet`` links of
    ``host_link_gbps``; leaves join ``spine0`` at ``host_link_gbps * leaf_size / 2``.
    The CPU and memory columns are not modelled. A row with 0 GPUs is a host without GPUs.

    Raises :class:`InvalidInstanceError` for a missing column (``path="csv"``) or a bad value
    (``path="rows[i].gpu"``, ``i`` counting data rows from 0).
    """
    if limit is not None:
        _check_count("limit", limit, minimum=0)
    _check_count("leaf_size", leaf_size)
    _check_positive("host_link_gbps", host_link_gbps)
    _check_positive("pcie_gbps", pcie_gbps)
    path = Path(csv_path)
    builder = _SpecBuilder(name or f"alibaba-{path.stem}")
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in _ALIBABA_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise InvalidInstanceError("csv", f"missing column(s) {', '.join(missing)}")
        for i, row in enumerate(reader):
            if limit is not None and i >= limit:
                break
            host_id, model, count = row["sn"], row["model"], row["gpu"]
            if not host_id:
                raise InvalidInstanceError(f"rows[{i}].sn", "empty node id")
            if host_id in builder.hosts:
                raise InvalidInstanceError(f"rows[{i}].sn", f"duplicate node id {host_id!r}")
            try:
                n_gpus = int(count)
            except (TypeError, ValueError):
                n_gpus = -1
            if n_gpus < 0:
                raise InvalidInstanceError(
                    f"rows[{i}].gpu", f"not a non-negative integer: {count!r}"
                )
            if n_gpus and not model:
                raise InvalidInstanceError(f"rows[{i}].model", "empty GPU model")
            info = ALIBABA_GPU_TYPES.get(model, ALIBABA_UNKNOWN_TYPE)
            builder.add_server(host_id, n_gpus, model, info, pcie_gbps)
    leaves = _chunks(list(builder.hosts), leaf_size)
    builder.add_fabric(
        leaves, "ethernet", host_link_gbps, [host_link_gbps * leaf_size / 2] * len(leaves)
    )
    return builder.build()
