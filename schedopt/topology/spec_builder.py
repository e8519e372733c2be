"""Shared helpers of the spec builders: argument checks, GPU-type defaults and ``_SpecBuilder``.

``_SpecBuilder`` lays out the id scheme and the two-level network that
:mod:`schedopt.topology.builders` describes; the named shapes there, the Alibaba loader
(:mod:`schedopt.topology.alibaba`) and the NCCL loader (:mod:`schedopt.topology.nccl`) use it.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from typing import Any

from schedopt.core.errors import InvalidInstanceError
from schedopt.topology.gpu_types import GPU_TYPES, GpuTypeInfo
from schedopt.topology.spec import ClusterSpec, LinkKind, SwitchTier


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
