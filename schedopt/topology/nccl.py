"""Load a cluster from an NCCL topology XML dump (``NCCL_TOPO_DUMP_FILE`` / ``NCCL_TOPO_FILE``).

Such a file describes **one server**: ``<system><cpu><pci busid class ...>`` trees, where a GPU is
a ``pci`` device of class ``0x0302xx``/``0x0300xx`` (or one with a ``<gpu dev sm rank>`` child,
itself holding ``<nvlink target count tclass>`` elements) and a NIC is a device of class
``0x0207xx`` (InfiniBand) / ``0x0200xx`` (Ethernet) or a ``<nic>`` holding ``<net speed>``
(speed in Mbps). :func:`nccl_xml_spec` replicates that server ``hosts`` times and joins the copies
with the same leaf/spine fabric as :func:`~schedopt.topology.builders.dgx_spec`.

What is approximated:

* NVLink. A GPU whose ``<nvlink>`` targets an NVSwitch (``tclass`` ``0x068000``) gets one
  ``nvlink`` to the host's NVSwitch ``h{i}/nvs`` of ``count`` x the per-link speed of its
  generation (:data:`NVLINK_LINK_GBPS`); ``<nvlink>`` to another GPU becomes a direct GPU-GPU
  link. Per-link speeds count both directions (NVLink 2/3/4: 25 GB/s each way = 400 Gbps), the
  same convention as :data:`~schedopt.topology.builders.GPU_TYPES`, so 12 links of an A100 give
  its table value 4800 Gbps. Files made for ``NCCL_TOPO_FILE`` (such as Azure's NDv4/NDv5 ones)
  carry no ``<nvlink>`` at all, because NCCL asks NVML at run time; then, if the GPU type has
  NVLink in ``GPU_TYPES`` (or ``assume_nvswitch=True``), the server is taken to be an
  NVSwitch baseboard with the table's NVLink bandwidth.
* The GPU type: the ``gpu_type`` argument, else from ``sm`` (70 V100, 80 A100, 90 H100), else
  from the GPUs' PCIe generation (16 GT/s: A100, 32 GT/s: H100), which is a guess.
* PCIe: ``link_speed`` (GT/s) x ``link_width`` Gbps, ignoring encoding overhead; 512 if absent.
* The host link: the sum of the NICs' ``<net speed>``; a NIC without one counts by its PCIe
  generation (8 GT/s: 100, 16 GT/s: 200 (HDR), 32 GT/s: 400 Gbps (NDR)), else 100 Gbps.
  NUMA placement, PCIe switches and GPU-NIC affinity are ignored.

Malformed XML, or XML without ``<system>`` or without GPUs, raises
:class:`~schedopt.core.errors.InvalidInstanceError` with ``path="xml"``; a missing file raises
the usual ``FileNotFoundError``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

from schedopt.core.errors import InvalidInstanceError
from schedopt.topology.gpu_types import GPU_TYPES
from schedopt.topology.spec import ClusterSpec, LinkKind
from schedopt.topology.spec_builder import _check_count, _check_positive, _SpecBuilder

__all__ = ["NVLINK_LINK_GBPS", "SM_TO_GPU_TYPE", "nccl_xml_spec"]

SM_TO_GPU_TYPE = {70: "V100", 80: "A100", 90: "H100"}
"""Compute capability (``sm`` attribute) to GPU type."""

NVLINK_LINK_GBPS = {60: 320.0, 70: 400.0, 80: 400.0, 90: 400.0, 100: 800.0}
"""Bandwidth of one NVLink by compute capability, both directions together (Gbps)."""

_PCIE_GEN_TO_TYPE = {16.0: "A100", 32.0: "H100"}
_NIC_GBPS_BY_GTS = {8.0: 100.0, 16.0: 200.0, 32.0: 400.0}
_NVSWITCH_CLASS = 0x0680
_GPU_CLASSES = (0x0300, 0x0302)
_NIC_CLASSES = {0x0207: "ib", 0x0200: "ethernet"}


@dataclass
class _Gpu:
    busid: str
    dev: int | None
    sm: int | None
    gts: float | None  # PCIe GT/s
    pcie_gbps: float | None
    nvlinks: list[tuple[str, int, int | None]] = field(default_factory=list)  # target,count,class


def _num(text: str | None, base: int = 10) -> float | None:
    if text is None:
        return None
    try:
        return float(int(text, base)) if base != 10 else float(text)
    except ValueError:
        return None


def _gts(elem: ET.Element) -> float | None:
    match = re.match(r"\s*([\d.]+)\s*GT/s", elem.get("link_speed", ""))
    return float(match.group(1)) if match else None


def _dev_class(elem: ET.Element) -> int | None:
    value = _num(elem.get("class") or elem.get("tclass"), 16)
    return None if value is None else int(value) >> 8


def _scan(root: ET.Element) -> tuple[list[_Gpu], list[tuple[str, float]]]:
    """The GPUs and the (kind, Gbps) of the NICs in one ``<system>``."""
    gpus: list[_Gpu] = []
    nics: list[tuple[str, float]] = []

    def visit(elem: ET.Element) -> None:
        cls = _dev_class(elem) if elem.tag == "pci" else None
        gpu_elem = elem.find("gpu")
        nvidia = elem.get("vendor", "0x10de").lower() == "0x10de"
        if elem.tag == "pci" and (gpu_elem is not None or (cls in _GPU_CLASSES and nvidia)):
            info = gpu_elem if gpu_elem is not None else ET.Element("gpu")
            gts, width = _gts(elem), _num(elem.get("link_width"))
            gpu = _Gpu(
                busid=elem.get("busid", f"gpu{len(gpus)}").lower(),
                dev=None if (d := _num(info.get("dev"))) is None else int(d),
                sm=None if (sm := _num(info.get("sm"))) is None else int(sm),
                gts=gts,
                pcie_gbps=gts * width if gts and width else None,
            )
            for nv in info.iter("nvlink"):
                count = _num(nv.get("count")) or 1.0
                gpu.nvlinks.append((nv.get("target", "").lower(), int(count), _dev_class(nv)))
            gpus.append(gpu)
        elif (elem.tag == "pci" and cls in _NIC_CLASSES) or elem.tag == "nic":
            mbps = [s for net in elem.iter("net") if (s := _num(net.get("speed")))]
            gts = _gts(elem)
            gbps = sum(mbps) / 1000 if mbps else _NIC_GBPS_BY_GTS.get(gts or 0.0, 100.0)
            nics.append((_NIC_CLASSES.get(cls or 0, "ib"), gbps))
        else:
            for child in elem:
                visit(child)

    visit(root)
    return gpus, nics


def nccl_xml_spec(
    path: str | PathLike[str],
    hosts: int = 1,
    gpu_type: str | None = None,
    *,
    memory_gib: float | None = None,
    host_link_gbps: float | None = None,
    assume_nvswitch: bool | None = None,
    leaf_size: int | None = None,
    name: str | None = None,
) -> ClusterSpec:
    """``hosts`` identical servers as described by the NCCL topology dump at ``path``.

    Ids are as in :func:`~schedopt.topology.builders.dgx_spec` (``h0/g0`` ...), GPUs numbered by the
    ``dev`` attribute when every GPU has one, else by PCI bus id. ``memory_gib`` defaults from
    :data:`~schedopt.topology.builders.GPU_TYPES` (required for other types); ``host_link_gbps``
    overrides the summed NIC speed (100 Gbps when the file lists no NIC). Hosts sit under leaves
    of ``leaf_size`` (default: all under one), leaves under ``spine0``. ``assume_nvswitch``
    forces (``True``) or forbids (``False``) the NVSwitch assumption for files without
    ``<nvlink>``. See the module docstring for what is approximated.
    """
    _check_count("hosts", hosts)
    size = hosts if leaf_size is None else leaf_size
    _check_count("leaf_size", size)
    for arg, value in (("memory_gib", memory_gib), ("host_link_gbps", host_link_gbps)):
        if value is not None:
            _check_positive(arg, value)
    try:
        root = ET.parse(Path(path)).getroot()
    except ET.ParseError as err:
        raise InvalidInstanceError("xml", f"malformed XML in {path}: {err}") from None
    if root.tag != "system":
        raise InvalidInstanceError("xml", f"root element is <{root.tag}>, expected <system>")
    gpus, nics = _scan(root)
    if not gpus:
        raise InvalidInstanceError("xml", "no GPU found (no <gpu>, no pci class 0x0300/0x0302)")
    if all(g.dev is not None for g in gpus) and len({g.dev for g in gpus}) == len(gpus):
        gpus.sort(key=lambda g: (g.dev, g.busid))
    else:
        gpus.sort(key=lambda g: g.busid)
    sm = next((g.sm for g in gpus if g.sm is not None), None)
    if gpu_type is None:
        gen = next((g.gts for g in gpus if g.gts), None)
        gpu_type = SM_TO_GPU_TYPE.get(sm or 0) or _PCIE_GEN_TO_TYPE.get(gen or 0.0)
        if gpu_type is None:
            raise InvalidInstanceError(
                "gpu_type", f"cannot infer the GPU type (sm={sm}); pass gpu_type="
            )
    table = GPU_TYPES.get(gpu_type)
    if memory_gib is None:
        if table is None:
            raise InvalidInstanceError("memory_gib", f"required for GPU type {gpu_type!r}")
        memory_gib = table.memory_gib
    speed = table.speed if table else 1.0
    per_link = NVLINK_LINK_GBPS.get(sm or 0, 400.0)
    has_nvlink = any(g.nvlinks for g in gpus)
    to_switch = any(c == _NVSWITCH_CLASS for g in gpus for _, _, c in g.nvlinks)
    if assume_nvswitch is None:
        assume_nvswitch = not has_nvlink and table is not None and table.nvlink_gbps is not None
    index = {g.busid: i for i, g in enumerate(gpus)}

    builder = _SpecBuilder(name or f"nccl-{Path(path).stem}-{hosts}x{len(gpus)}")
    host_ids = [f"h{k}" for k in range(hosts)]
    for host_id in host_ids:
        builder.add_host(host_id)
        nvs = f"{host_id}/nvs"
        if to_switch or (assume_nvswitch and not has_nvlink and len(gpus) > 1):
            builder.add_switch(nvs, "nvswitch")
        peers: set[frozenset[int]] = set()
        for i, gpu in enumerate(gpus):
            gid = f"{host_id}/g{i}"
            builder.add_gpu(gid, host_id, gpu_type, memory_gib, speed)
            builder.link(gid, host_id, "pcie", gpu.pcie_gbps or 512.0)
            if assume_nvswitch and not has_nvlink and len(gpus) > 1:
                default = table.nvlink_gbps if table and table.nvlink_gbps else 12 * per_link
                builder.link(gid, nvs, "nvlink", default)
            switch_links = sum(n for _, n, c in gpu.nvlinks if c == _NVSWITCH_CLASS)
            if switch_links:
                builder.link(gid, nvs, "nvlink", switch_links * per_link)
            for target, count, cls in gpu.nvlinks:
                j = index.get(target)
                pair = frozenset((i, j if j is not None else i))
                if cls != _NVSWITCH_CLASS and len(pair) == 2 and pair not in peers:
                    peers.add(pair)
                    builder.link(gid, f"{host_id}/g{j}", "nvlink", count * per_link)
    link_gbps = host_link_gbps or sum(g for _, g in nics) or 100.0
    kind: LinkKind = "ethernet" if nics and all(k == "ethernet" for k, _ in nics) else "ib"
    leaves = [host_ids[i : i + size] for i in range(0, hosts, size)]
    builder.add_fabric(leaves, kind, link_gbps, [link_gbps * size / 2] * len(leaves))
    return builder.build()
