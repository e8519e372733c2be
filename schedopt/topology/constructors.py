"""The builder class methods of :class:`~schedopt.topology.cluster.Cluster`.

:class:`ClusterConstructors` is a mixin of ``Cluster``: each class method (``Cluster.dgx``, ...)
wraps the :class:`~schedopt.topology.spec.ClusterSpec` that the builder of the same name with
``_spec`` (:mod:`~schedopt.topology.builders`, :mod:`~schedopt.topology.alibaba`,
:mod:`~schedopt.topology.nccl`) returns into a cluster of the class it is called on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from typing import TYPE_CHECKING, Any, TypeVar

from schedopt.topology.alibaba import alibaba_nodes_spec
from schedopt.topology.builders import dgx_spec, heterogeneous_spec, leaf_spine_spec
from schedopt.topology.gpu_types import GpuTypeInfo
from schedopt.topology.nccl import nccl_xml_spec
from schedopt.topology.spec import ClusterSpec

__all__ = ["ClusterConstructors"]

_C = TypeVar("_C", bound="ClusterConstructors")


class ClusterConstructors:
    """The builders as class methods; ``Cluster`` supplies the constructor they call."""

    __slots__ = ()

    if TYPE_CHECKING:

        def __init__(self, spec: ClusterSpec | Mapping[str, Any]) -> None: ...

    @classmethod
    def dgx(
        cls: type[_C],
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
    ) -> _C:
        """DGX-style servers under leaf switches; see
        :func:`schedopt.topology.builders.dgx_spec`."""
        return cls(
            dgx_spec(
                nodes,
                gpus_per_node,
                gpu_type,
                memory_gib,
                nvlink_gbps,
                host_link_gbps,
                leaf_size,
                name,
                pcie_gbps=pcie_gbps,
                speed=speed,
            )
        )

    @classmethod
    def leaf_spine(
        cls: type[_C],
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
    ) -> _C:
        """One leaf per rack, one spine; see
        :func:`schedopt.topology.builders.leaf_spine_spec`."""
        return cls(
            leaf_spine_spec(
                racks,
                nodes_per_rack,
                gpus_per_node,
                gpu_type,
                memory_gib,
                nvlink_gbps,
                host_link_gbps,
                name,
                pcie_gbps=pcie_gbps,
                speed=speed,
            )
        )

    @classmethod
    def heterogeneous(
        cls: type[_C],
        pools: Sequence[tuple[str, int, int]],
        host_link_gbps: float = 3200.0,
        name: str | None = None,
        *,
        pcie_gbps: float = 512.0,
        gpu_types: Mapping[str, GpuTypeInfo] | None = None,
    ) -> _C:
        """Pools of (gpu_type, nodes, gpus_per_node); see
        :func:`schedopt.topology.builders.heterogeneous_spec`."""
        return cls(
            heterogeneous_spec(
                pools, host_link_gbps, name, pcie_gbps=pcie_gbps, gpu_types=gpu_types
            )
        )

    @classmethod
    def from_alibaba_nodes(
        cls: type[_C],
        csv_path: str | PathLike[str],
        limit: int | None = None,
        *,
        leaf_size: int = 32,
        host_link_gbps: float = 100.0,
        pcie_gbps: float = 128.0,
        name: str | None = None,
    ) -> _C:
        """The Alibaba GPU-trace node inventory; see
        :func:`schedopt.topology.alibaba.alibaba_nodes_spec`."""
        return cls(
            alibaba_nodes_spec(
                csv_path,
                limit,
                leaf_size=leaf_size,
                host_link_gbps=host_link_gbps,
                pcie_gbps=pcie_gbps,
                name=name,
            )
        )

    @classmethod
    def from_nccl_xml(
        cls: type[_C],
        path: str | PathLike[str],
        hosts: int = 1,
        gpu_type: str | None = None,
        *,
        memory_gib: float | None = None,
        host_link_gbps: float | None = None,
        assume_nvswitch: bool | None = None,
        leaf_size: int | None = None,
        name: str | None = None,
    ) -> _C:
        """Identical hosts from an NCCL topology dump; see
        :func:`schedopt.topology.nccl.nccl_xml_spec`."""
        return cls(
            nccl_xml_spec(
                path,
                hosts,
                gpu_type,
                memory_gib=memory_gib,
                host_link_gbps=host_link_gbps,
                assume_nvswitch=assume_nvswitch,
                leaf_size=leaf_size,
                name=name,
            )
        )
