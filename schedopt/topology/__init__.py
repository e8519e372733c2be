"""Cluster topologies: GPUs, hosts, switches and the links between them.

The central type is :class:`Cluster`, an immutable validated graph with the queries placement
models need (GPU inventory, NVLink domains, widest-path bandwidth, hop distance, failures).
Its JSON form is :class:`ClusterSpec` (see :mod:`schedopt.topology.spec`)::

    from schedopt.topology import Cluster

    cluster = Cluster.dgx(nodes=4, gpus_per_node=8)          # or Cluster.from_dict(json_data)
    cluster.nvlink_domains()                                  # one frozenset of GPU ids per host
    cluster.bandwidth("h0/g0", "h3/g7")                       # bottleneck Gbps, widest path
    degraded = cluster.without(["h1/g3"])                     # a failed GPU

Builders: :func:`dgx`, :func:`leaf_spine`, :func:`heterogeneous`, :func:`from_alibaba_nodes`
(Alibaba cluster-trace-gpu-v2023 node list) and :func:`from_nccl_xml` (NCCL topology dumps), all
also available as class methods of :class:`Cluster`.
"""

from schedopt.topology.alibaba import ALIBABA_GPU_TYPES, ALIBABA_UNKNOWN_TYPE
from schedopt.topology.cluster import (
    Cluster,
    dgx,
    from_alibaba_nodes,
    from_nccl_xml,
    heterogeneous,
    leaf_spine,
)
from schedopt.topology.gpu_types import GPU_TYPES, GpuTypeInfo
from schedopt.topology.nccl import NVLINK_LINK_GBPS, SM_TO_GPU_TYPE
from schedopt.topology.spec import (
    ClusterSpec,
    GpuSpec,
    HostSpec,
    LinkKind,
    LinkSpec,
    SwitchSpec,
    SwitchTier,
    id_sort_key,
)

__all__ = [
    "ALIBABA_GPU_TYPES",
    "ALIBABA_UNKNOWN_TYPE",
    "GPU_TYPES",
    "NVLINK_LINK_GBPS",
    "SM_TO_GPU_TYPE",
    "Cluster",
    "ClusterSpec",
    "GpuSpec",
    "GpuTypeInfo",
    "HostSpec",
    "LinkKind",
    "LinkSpec",
    "SwitchSpec",
    "SwitchTier",
    "dgx",
    "from_alibaba_nodes",
    "from_nccl_xml",
    "heterogeneous",
    "id_sort_key",
    "leaf_spine",
]
