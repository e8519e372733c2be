"""The node inventory of Alibaba's cluster-trace-gpu-v2023 as a cluster spec.

:func:`alibaba_nodes_spec` (wrapped into a ``Cluster`` by
:meth:`~schedopt.topology.cluster.Cluster.from_alibaba_nodes`) follows the id scheme and fabric
of :mod:`schedopt.topology.builders`, with the trace's ``sn`` as host ids; the GPU models come
from :data:`ALIBABA_GPU_TYPES`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from types import MappingProxyType

from schedopt.core.errors import InvalidInstanceError
from schedopt.core.files import read_text
from schedopt.topology.gpu_types import GpuTypeInfo
from schedopt.topology.spec import ClusterSpec
from schedopt.topology.spec_builder import _check_count, _check_positive, _chunks, _SpecBuilder

__all__ = ["ALIBABA_GPU_TYPES", "ALIBABA_UNKNOWN_TYPE", "alibaba_nodes_spec"]


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
_ALIBABA_COLUMNS = ("sn", "gpu", "model")
#: The trace's node list is 0.1 MB and its nodes hold at most 8 GPUs.
MAX_NODE_LIST_BYTES = 64 * 1024 * 1024
MAX_GPUS_PER_NODE = 1024


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
    # the file through a cap on the bytes read (the trace's node list is 0.1 MB): /dev/zero
    # or an endless FIFO cannot hang the loader; what csv refuses names its row
    text = read_text(path, MAX_NODE_LIST_BYTES, "csv")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        missing = [c for c in _ALIBABA_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise InvalidInstanceError("csv", f"missing column(s) {', '.join(missing)}")
        for i, row in enumerate(reader):
            if limit is not None and i >= limit:
                break
            _add_row(builder, i, row, pcie_gbps)
    except csv.Error as err:
        raise InvalidInstanceError(f"rows[{reader.line_num - 1}]", str(err)) from None
    leaves = _chunks(list(builder.hosts), leaf_size)
    builder.add_fabric(
        leaves, "ethernet", host_link_gbps, [host_link_gbps * leaf_size / 2] * len(leaves)
    )
    return builder.build()


def _add_row(builder: _SpecBuilder, i: int, row: dict, pcie_gbps: float) -> None:
    host_id, model, count = row["sn"], row["model"], row["gpu"]
    if not host_id:
        raise InvalidInstanceError(f"rows[{i}].sn", "empty node id")
    if host_id in builder.hosts:
        raise InvalidInstanceError(f"rows[{i}].sn", f"duplicate node id {host_id!r}")
    try:
        n_gpus = int(count)
    except (TypeError, ValueError):
        n_gpus = -1
    if not 0 <= n_gpus <= MAX_GPUS_PER_NODE:
        raise InvalidInstanceError(
            f"rows[{i}].gpu", f"not an integer in [0, {MAX_GPUS_PER_NODE}]: {count!r}"
        )
    if n_gpus and not model:
        raise InvalidInstanceError(f"rows[{i}].model", "empty GPU model")
    info = ALIBABA_GPU_TYPES.get(model, ALIBABA_UNKNOWN_TYPE)
    builder.add_server(host_id, n_gpus, model, info, pcie_gbps)
