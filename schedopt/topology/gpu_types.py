"""Default properties of GPU models: :class:`GpuTypeInfo` and the :data:`GPU_TYPES` table.

The builders (:mod:`schedopt.topology.builders`) and the NCCL loader
(:mod:`schedopt.topology.nccl`) fill in memory, NVLink bandwidth and speed from this table
unless the caller gives them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["GPU_TYPES", "GpuTypeInfo"]


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
