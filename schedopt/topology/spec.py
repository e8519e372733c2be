"""The JSON form of a cluster topology, as pydantic v2 models.

A cluster is an undirected graph of three kinds of node and one kind of edge:

* **GPUs** (:class:`GpuSpec`): the things jobs are placed on. Each belongs to exactly one host.
* **hosts** (:class:`HostSpec`): servers. A host is a node in the graph too, because PCIe traffic
  and the host's network interfaces hang off it.
* **switches** (:class:`SwitchSpec`): NVSwitches inside a server, and the leaf / spine / core
  switches of the datacenter network.
* **links** (:class:`LinkSpec`): undirected edges with a kind (``nvlink``, ``pcie``, ``ib``,
  ``ethernet``) and a bandwidth in Gbps.

Example (one host with two NVLinked GPUs)::

    {
      "name": "tiny",
      "gpus": [{"id": "h0/g0", "host": "h0", "gpu_type": "H100", "memory_gib": 80},
               {"id": "h0/g1", "host": "h0", "gpu_type": "H100", "memory_gib": 80}],
      "hosts": [{"id": "h0"}],
      "links": [{"a": "h0/g0", "b": "h0/g1", "kind": "nvlink", "bandwidth_gbps": 7200},
                {"a": "h0/g0", "b": "h0", "kind": "pcie", "bandwidth_gbps": 512},
                {"a": "h0/g1", "b": "h0", "kind": "pcie", "bandwidth_gbps": 512}]
    }

Field-level problems (wrong type, a bandwidth of 0, an unknown link kind) are reported by pydantic
with their own location. The cross-field checks of :class:`ClusterSpec` (unique ids, known link
endpoints, no self-loops or parallel links, a connected graph) raise
:class:`~schedopt.core.errors.FieldProblems`, a
``ValueError`` whose message starts with the offending sub-path, e.g.
``links[3].b: unknown node 'x'``; :meth:`schedopt.topology.Cluster.from_dict` turns either kind
into an :class:`~schedopt.core.errors.InvalidInstanceError` with that path.

The collection fields are tuples, not lists, so that a spec is genuinely immutable and hashable;
lists are accepted on input and JSON output has arrays, as usual.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Annotated, Literal

from pydantic import Field, model_validator

from schedopt.core.errors import FieldProblems
from schedopt.core.limits import Bandwidth, MemoryGib, Speed
from schedopt.core.model import FrozenModel

__all__ = [
    "ClusterSpec",
    "GpuSpec",
    "HostSpec",
    "LinkKind",
    "LinkSpec",
    "SwitchSpec",
    "SwitchTier",
    "id_sort_key",
    "mixed_type_problems",
]

LinkKind = Literal["nvlink", "pcie", "ib", "ethernet"]
"""What a link is made of. Only ``nvlink`` has a special meaning (see ``nvlink_domains``)."""

SwitchTier = Literal["nvswitch", "leaf", "spine", "core"]
"""Where a switch sits: inside a server (``nvswitch``) or in the datacenter network."""

NodeId = Annotated[str, Field(min_length=1)]

_MAX_LISTED = 5  # how many unreachable nodes a "not connected" message names
_DIGITS = re.compile(r"(\d+)")


def id_sort_key(node_id: str) -> tuple[tuple[str | int, ...], str]:
    """Sort key that orders ids "naturally": ``h2`` before ``h10``, ``h0/g9`` before ``h0/g10``.

    Every list the topology returns is sorted with this key, so results are deterministic and read
    the way a person numbers things. Ties (``g01`` vs ``g1``) are broken by the raw string.
    """
    parts = _DIGITS.split(node_id)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts)), node_id


_Frozen = FrozenModel


class GpuSpec(_Frozen):
    """One GPU. ``speed`` is its compute speed relative to an H100 (= 1.0)."""

    id: NodeId
    host: NodeId
    gpu_type: Annotated[str, Field(min_length=1)]
    memory_gib: MemoryGib
    speed: Speed = 1.0


class HostSpec(_Frozen):
    """One server. ``leaf`` names the leaf switch it hangs off (informational; must exist)."""

    id: NodeId
    leaf: NodeId | None = None


class SwitchSpec(_Frozen):
    """One switch, NVSwitch or network."""

    id: NodeId
    tier: SwitchTier


class LinkSpec(_Frozen):
    """An undirected link between nodes ``a`` and ``b``, with its bandwidth in Gbps."""

    a: NodeId
    b: NodeId
    kind: LinkKind
    bandwidth_gbps: Bandwidth


class ClusterSpec(_Frozen):
    """A whole cluster: its GPUs, hosts, switches and the links between them.

    Besides the per-field rules, a valid spec satisfies:

    * there is at least one GPU;
    * ids are unique across GPUs, hosts and switches together;
    * every GPU's ``host`` is a host id, every host's ``leaf`` (if given) a switch id;
    * every link joins two known, distinct nodes, and no two links join the same pair
      (model parallel links as one link with the summed bandwidth);
    * the graph is connected (so every GPU has at least one link).
    """

    name: str = "cluster"
    gpus: tuple[GpuSpec, ...]
    hosts: tuple[HostSpec, ...]
    switches: tuple[SwitchSpec, ...] = ()
    links: tuple[LinkSpec, ...]

    @model_validator(mode="after")
    def _check_references(self) -> ClusterSpec:
        problems = _reference_problems(self)
        if not problems:
            problems = _connectivity_problems(self)
        if problems:
            raise FieldProblems(problems)
        return self


def _reference_problems(spec: ClusterSpec) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    if not spec.gpus:
        problems.append(("gpus", "at least one GPU is required"))

    owner: dict[str, str] = {}  # node id -> the path that declared it first
    groups: tuple[tuple[str, tuple[GpuSpec | HostSpec | SwitchSpec, ...]], ...] = (
        ("gpus", spec.gpus),
        ("hosts", spec.hosts),
        ("switches", spec.switches),
    )
    for field, items in groups:
        for i, item in enumerate(items):
            path = f"{field}[{i}].id"
            if item.id in owner:
                problems.append((path, f"duplicate id {item.id!r} (also used by {owner[item.id]})"))
            else:
                owner[item.id] = path

    host_ids = {h.id for h in spec.hosts}
    switch_ids = {s.id for s in spec.switches}
    for i, gpu in enumerate(spec.gpus):
        if gpu.host not in host_ids:
            problems.append((f"gpus[{i}].host", f"unknown host {gpu.host!r}"))
    for i, host in enumerate(spec.hosts):
        if host.leaf is not None and host.leaf not in switch_ids:
            problems.append((f"hosts[{i}].leaf", f"unknown switch {host.leaf!r}"))

    seen_pairs: dict[frozenset[str], int] = {}
    for i, link in enumerate(spec.links):
        for end in ("a", "b"):
            node = getattr(link, end)
            if node not in owner:
                problems.append((f"links[{i}].{end}", f"unknown node {node!r}"))
        if link.a == link.b:
            problems.append((f"links[{i}]", f"self-loop on {link.a!r}"))
            continue
        pair = frozenset((link.a, link.b))
        if pair in seen_pairs:
            reason = (
                f"parallel link between {link.a!r} and {link.b!r} (also links[{seen_pairs[pair]}]);"
                " merge them into one link with the summed bandwidth"
            )
            problems.append((f"links[{i}]", reason))
        else:
            seen_pairs[pair] = i
    return problems


def mixed_type_problems(spec: ClusterSpec) -> list[tuple[str, str]]:
    """Hosts whose GPUs are of more than one type, as ``(path, reason)`` pairs.

    A topology may mix types on a host; the schedulers may not: admission and fair share count
    a host as one GPU type (``Cluster.host_type``), so their instances call this.
    """
    problems: list[tuple[str, str]] = []
    host_type: dict[str, str] = {}
    for i, gpu in enumerate(spec.gpus):
        first = host_type.setdefault(gpu.host, gpu.gpu_type)
        if gpu.gpu_type != first:
            reason = (
                f"host {gpu.host!r} mixes GPU types ({first!r} and {gpu.gpu_type!r}); the "
                "schedulers need one GPU type per host"
            )
            problems.append((f"gpus[{i}].gpu_type", reason))
    return problems


def _connectivity_problems(spec: ClusterSpec) -> list[tuple[str, str]]:
    """Breadth-first search from the first host; name the nodes it cannot reach."""
    adjacency: defaultdict[str, list[str]] = defaultdict(list)
    for link in spec.links:
        adjacency[link.a].append(link.b)
        adjacency[link.b].append(link.a)
    nodes = [h.id for h in spec.hosts] + [g.id for g in spec.gpus] + [s.id for s in spec.switches]
    start = nodes[0]
    seen = {start}
    frontier = [start]
    while frontier:
        node = frontier.pop()
        for nxt in adjacency[node]:
            if nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    unreachable = sorted((n for n in nodes if n not in seen), key=id_sort_key)
    if not unreachable:
        return []
    shown = ", ".join(repr(n) for n in unreachable[:_MAX_LISTED])
    more = f", ... ({len(unreachable)} nodes)" if len(unreachable) > _MAX_LISTED else ""
    return [("links", f"the topology is not connected: [{shown}{more}] cannot reach {start!r}")]
