"""The :class:`Cluster`: an immutable, validated cluster topology with the queries placement needs.

A ``Cluster`` wraps a validated :class:`~schedopt.topology.spec.ClusterSpec` and the undirected
:class:`networkx.Graph` built from it. Build one from its JSON form (:meth:`Cluster.from_dict`),
from a spec (:meth:`Cluster.from_spec`), or with a builder (:meth:`Cluster.dgx`,
:meth:`Cluster.leaf_spine`, :meth:`Cluster.heterogeneous`, :meth:`Cluster.from_alibaba_nodes`,
:meth:`Cluster.from_nccl_xml`)::

    >>> c = Cluster.dgx(nodes=2)
    >>> c
    Cluster('dgx-2x8', 16 GPUs on 2 hosts, types H100)
    >>> c.bandwidth("h0/g0", "h0/g1")    # inside a host: NVLink through the NVSwitch
    7200.0
    >>> c.bandwidth("h0/g0", "h1/g0")    # across hosts: the PCIe hop is the bottleneck
    512.0

Conventions:

* Every list a query returns is sorted with :func:`~schedopt.topology.spec.id_sort_key`, which
  orders numbers inside ids numerically (``h2`` before ``h10``).
* Unknown ids passed to a query raise :class:`~schedopt.core.errors.InvalidInstanceError` whose
  ``path`` is the argument's name (``gpu_id``, ``failed``, ...).
* Equality and hashing are semantic: two clusters are equal when their specs describe the same
  named graph, whatever the order of the lists or the orientation of the links.
* Bandwidths are in Gbps. :meth:`Cluster.bandwidth` is a *single-flow* measure (the bottleneck of
  the widest path); it does not model contention between flows, so oversubscription of a
  leaf-spine uplink only shows when the uplink is narrower than the links below it.
"""

from __future__ import annotations

import heapq
import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from os import PathLike
from types import MappingProxyType
from typing import Any, NoReturn

import networkx as nx
from pydantic import GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema

from schedopt.core.errors import InvalidInstanceError
from schedopt.topology.builders import (
    GpuTypeInfo,
    alibaba_nodes_spec,
    dgx_spec,
    heterogeneous_spec,
    leaf_spine_spec,
)
from schedopt.topology.nccl import nccl_xml_spec
from schedopt.topology.spec import ClusterSpec, GpuSpec, HostSpec, id_sort_key

__all__ = ["Cluster", "dgx", "from_alibaba_nodes", "from_nccl_xml", "heterogeneous", "leaf_spine"]

_MAX_CACHED_SOURCES = 1024  # widest-path / hop trees kept per cluster (each is O(nodes))


class Cluster:
    """An immutable GPU-cluster topology: GPUs, hosts, switches and bandwidth-labelled links.

    The constructor takes a :class:`ClusterSpec` or its JSON form (a mapping, validated; bad
    input raises :class:`InvalidInstanceError`); the usual entry points are :meth:`from_dict`,
    :meth:`from_spec` and the builder class methods.

    The graph (:attr:`graph`) has node attribute ``kind`` in ``{"gpu", "host", "switch"}``; GPU
    nodes also carry ``gpu_type``, ``memory_gib``, ``speed`` and ``host``; host nodes ``leaf``;
    switch nodes ``tier``. Edges carry ``kind`` and ``bandwidth_gbps``.
    """

    __slots__ = (
        "_cache",
        "_g",
        "_gpus",
        "_hop_trees",
        "_hosts",
        "_key",
        "_lock",
        "_spec",
        "_widest",
    )

    _spec: ClusterSpec
    _g: nx.Graph
    _key: tuple[object, ...]
    _gpus: dict[str, GpuSpec]
    _hosts: dict[str, HostSpec]
    _cache: dict[object, Any]
    _lock: threading.Lock
    _widest: OrderedDict[str, dict[str, float]]
    _hop_trees: OrderedDict[str, dict[str, int]]

    def __init__(self, spec: ClusterSpec | Mapping[str, Any]):
        if isinstance(spec, Mapping):  # the JSON form, validated like Cluster.from_dict
            spec = ClusterSpec.model_validate(spec)
        if not isinstance(spec, ClusterSpec):
            # InvalidInstanceError like every other bad input built in Python (issue 9 item 6)
            raise InvalidInstanceError(
                "spec",
                f"Cluster() takes a ClusterSpec or its JSON form (a mapping), "
                f"not {type(spec).__name__}",
            )
        g = nx.Graph(name=spec.name)
        for gpu in spec.gpus:
            g.add_node(
                gpu.id,
                kind="gpu",
                gpu_type=gpu.gpu_type,
                memory_gib=gpu.memory_gib,
                speed=gpu.speed,
                host=gpu.host,
            )
        for host in spec.hosts:
            g.add_node(host.id, kind="host", leaf=host.leaf)
        for switch in spec.switches:
            g.add_node(switch.id, kind="switch", tier=switch.tier)
        for link in spec.links:
            g.add_edge(link.a, link.b, kind=link.kind, bandwidth_gbps=link.bandwidth_gbps)
        key = (
            spec.name,
            tuple(sorted((g.id, g.host, g.gpu_type, g.memory_gib, g.speed) for g in spec.gpus)),
            tuple(sorted((h.id, h.leaf or "") for h in spec.hosts)),
            tuple(sorted((s.id, s.tier) for s in spec.switches)),
            tuple(sorted((*sorted((ln.a, ln.b)), ln.kind, ln.bandwidth_gbps) for ln in spec.links)),
        )
        init = object.__setattr__
        init(self, "_spec", spec)
        init(self, "_g", g)
        init(self, "_key", key)
        init(self, "_gpus", {gpu.id: gpu for gpu in spec.gpus})
        init(self, "_hosts", {host.id: host for host in spec.hosts})
        init(self, "_cache", {})
        init(self, "_lock", threading.Lock())
        init(self, "_widest", OrderedDict())
        init(self, "_hop_trees", OrderedDict())

    # ------------------------------------------------------------------ construction & identity

    @classmethod
    def from_spec(cls, spec: ClusterSpec) -> Cluster:
        """Wrap an already validated spec."""
        return cls(spec)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Cluster:
        """Validate the JSON form (see :mod:`schedopt.topology.spec`) and build the cluster.

        Raises :class:`InvalidInstanceError` naming the first bad field (``path`` such as
        ``links[3].bandwidth_gbps``), with every problem found in ``problems``.
        """
        return cls(ClusterSpec.model_validate(data))  # raises InvalidInstanceError

    def to_spec(self) -> ClusterSpec:
        """The spec this cluster was built from (lists in their original order)."""
        return self._spec

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form; ``Cluster.from_dict(c.to_dict()) == c``."""
        return self._spec.model_dump(mode="json")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Cluster):
            return NotImplemented
        return self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        n, h = self.num_gpus, len(self._hosts)
        gpus = f"{n} GPU{'' if n == 1 else 's'} on {h} host{'' if h == 1 else 's'}"
        return f"Cluster({self.name!r}, {gpus}, types {', '.join(self.gpu_types())})"

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"Cluster is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"Cluster is immutable (cannot delete {name!r})")

    def __reduce__(self) -> tuple[type[Cluster], tuple[ClusterSpec]]:
        return (type(self), (self._spec,))

    # ------------------------------------------------------------------ pydantic integration

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        """Let other pydantic models declare ``cluster: Cluster``.

        Validation accepts a ``Cluster`` as is, or anything ``ClusterSpec`` accepts (a dict, a
        ``ClusterSpec``); errors keep their nested location (``cluster.links.3.bandwidth_gbps``).
        Serialisation gives the same as :meth:`to_dict`; the JSON schema is ``ClusterSpec``'s.
        """
        spec_schema = handler.generate_schema(ClusterSpec)
        from_spec = core_schema.no_info_after_validator_function(cls.from_spec, spec_schema)

        def accept_instance(value: Any, validate: core_schema.ValidatorFunctionWrapHandler) -> Any:
            # A wrap validator rather than a union with is_instance_schema: a union would prefix
            # every error location with the name of the union member that failed.
            return value if isinstance(value, cls) else validate(value)

        return core_schema.json_or_python_schema(
            json_schema=from_spec,
            python_schema=core_schema.no_info_wrap_validator_function(accept_instance, from_spec),
            serialization=core_schema.plain_serializer_function_ser_schema(lambda c: c.to_dict()),
        )

    # ------------------------------------------------------------------ builders (see builders.py)

    @classmethod
    def dgx(
        cls,
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
    ) -> Cluster:
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
        cls,
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
    ) -> Cluster:
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
        cls,
        pools: Sequence[tuple[str, int, int]],
        host_link_gbps: float = 3200.0,
        name: str | None = None,
        *,
        pcie_gbps: float = 512.0,
        gpu_types: Mapping[str, GpuTypeInfo] | None = None,
    ) -> Cluster:
        """Pools of (gpu_type, nodes, gpus_per_node); see
        :func:`schedopt.topology.builders.heterogeneous_spec`."""
        return cls(
            heterogeneous_spec(
                pools, host_link_gbps, name, pcie_gbps=pcie_gbps, gpu_types=gpu_types
            )
        )

    @classmethod
    def from_alibaba_nodes(
        cls,
        csv_path: str | PathLike[str],
        limit: int | None = None,
        *,
        leaf_size: int = 32,
        host_link_gbps: float = 100.0,
        pcie_gbps: float = 128.0,
        name: str | None = None,
    ) -> Cluster:
        """The Alibaba GPU-trace node inventory; see
        :func:`schedopt.topology.builders.alibaba_nodes_spec`."""
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
        cls,
        path: str | PathLike[str],
        hosts: int = 1,
        gpu_type: str | None = None,
        *,
        memory_gib: float | None = None,
        host_link_gbps: float | None = None,
        assume_nvswitch: bool | None = None,
        leaf_size: int | None = None,
        name: str | None = None,
    ) -> Cluster:
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

    # ------------------------------------------------------------------ simple queries

    @property
    def name(self) -> str:
        """The cluster's name (from the spec)."""
        return self._spec.name

    @property
    def num_gpus(self) -> int:
        """How many GPUs the cluster has."""
        return len(self._gpus)

    @property
    def graph(self) -> nx.Graph:
        """A frozen copy of the topology graph (mutating it raises ``NetworkXError``).

        It is a copy, so even changing an attribute dict in it cannot corrupt this cluster's own
        queries. Built once, on first use.
        """
        if "graph" not in self._cache:
            self._cache["graph"] = nx.freeze(self._g.copy())
        graph: nx.Graph = self._cache["graph"]
        return graph

    def gpus(self, gpu_type: str | None = None) -> tuple[str, ...]:
        """All GPU ids (or those of one type), sorted."""
        key = ("gpus", gpu_type)
        if key not in self._cache:
            ids = (g.id for g in self._gpus.values() if gpu_type is None or g.gpu_type == gpu_type)
            self._cache[key] = tuple(sorted(ids, key=id_sort_key))
        result: tuple[str, ...] = self._cache[key]
        return result

    def hosts(self) -> tuple[str, ...]:
        """All host ids, sorted."""
        if "hosts" not in self._cache:
            self._cache["hosts"] = tuple(sorted(self._hosts, key=id_sort_key))
        result: tuple[str, ...] = self._cache["hosts"]
        return result

    def switches(self) -> tuple[str, ...]:
        """All switch ids (NVSwitches and network switches), sorted."""
        if "switches" not in self._cache:
            ids = (s.id for s in self._spec.switches)
            self._cache["switches"] = tuple(sorted(ids, key=id_sort_key))
        result: tuple[str, ...] = self._cache["switches"]
        return result

    def gpu(self, gpu_id: str) -> GpuSpec:
        """The spec of one GPU (type, memory, speed, host)."""
        try:
            return self._gpus[gpu_id]
        except KeyError:
            raise InvalidInstanceError("gpu_id", f"unknown GPU {gpu_id!r}") from None

    def host_of(self, gpu_id: str) -> str:
        """The host a GPU sits in."""
        return self.gpu(gpu_id).host

    def gpus_on(self, host_id: str) -> tuple[str, ...]:
        """The GPUs of one host, sorted (empty for a host whose GPUs all failed)."""
        self._check_host(host_id)
        if "gpus_on" not in self._cache:
            by_host: dict[str, list[str]] = {h: [] for h in self._hosts}
            for gpu_id in self.gpus():
                by_host[self._gpus[gpu_id].host].append(gpu_id)
            self._cache["gpus_on"] = {h: tuple(ids) for h, ids in by_host.items()}
        result: tuple[str, ...] = self._cache["gpus_on"][host_id]
        return result

    def gpu_types(self) -> tuple[str, ...]:
        """The distinct GPU types present, sorted (computed once: instance checks ask per job)."""
        if "gpu_types" not in self._cache:
            types = {g.gpu_type for g in self._gpus.values()}
            self._cache["gpu_types"] = tuple(sorted(types, key=id_sort_key))
        result: tuple[str, ...] = self._cache["gpu_types"]
        return result

    def host_type(self, host_id: str) -> str | None:
        """The GPU type of a host (the type of its first GPU; ``None`` for a host without GPUs).
        Builders and loaders make hosts of one type; the schedulers count on it."""
        on = self.gpus_on(host_id)
        return self._gpus[on[0]].gpu_type if on else None

    def max_gpus_per_host(self) -> dict[str, int]:
        """GPU type → the most GPUs on one host of that type (σ_g in the formulations)."""
        if "max_per_host" not in self._cache:
            size: dict[str, int] = {}
            for h in self._hosts:
                g = self.host_type(h)
                if g is not None:
                    size[g] = max(size.get(g, 0), len(self.gpus_on(h)))
            self._cache["max_per_host"] = size
        return dict(self._cache["max_per_host"])

    def free_gpus_by_host(self, unavailable: Iterable[str] = ()) -> dict[str, int]:
        """Host → how many of its GPUs are not in ``unavailable`` (failed or reserved)."""
        out = set(unavailable)
        return {h: sum(1 for g in self.gpus_on(h) if g not in out) for h in self.hosts()}

    def leaf_of(self, host_id: str) -> str | None:
        """The leaf switch a host hangs off, as declared in the spec (``None`` if not given)."""
        self._check_host(host_id)
        return self._hosts[host_id].leaf

    def _check_host(self, host_id: str) -> None:
        if host_id not in self._hosts:
            raise InvalidInstanceError("host_id", f"unknown host {host_id!r}")

    def _check_node(self, arg: str, node: str) -> None:
        if node not in self._g:
            raise InvalidInstanceError(arg, f"unknown node {node!r}")

    # ------------------------------------------------------------------ structural queries

    def nvlink_domains(self) -> tuple[frozenset[str], ...]:
        """Groups of GPUs that reach each other over NVLink alone, sorted by smallest member.

        These are the connected components of the subgraph of ``nvlink`` edges (which may pass
        through NVSwitch nodes or other GPUs), keeping only GPU ids. A GPU with no NVLink is a
        domain of its own.
        """
        if "domains" not in self._cache:
            nv = nx.Graph()
            nv.add_nodes_from(self._gpus)
            nv.add_edges_from(
                (a, b) for a, b, kind in self._g.edges(data="kind") if kind == "nvlink"
            )
            domains = [
                frozenset(n for n in comp if n in self._gpus)
                for comp in nx.connected_components(nv)
            ]
            domains = [d for d in domains if d]
            domains.sort(key=lambda d: id_sort_key(min(d, key=id_sort_key)))
            self._cache["domains"] = tuple(domains)
        result: tuple[frozenset[str], ...] = self._cache["domains"]
        return result

    def bandwidth(self, a: str, b: str) -> float:
        """Bottleneck bandwidth (Gbps) of the widest path between nodes ``a`` and ``b``.

        That is the maximum, over all paths, of the smallest link bandwidth on the path
        (``math.inf`` when ``a == b``). Paths may pass through any node, including other GPUs.
        Computed by a widest-path Dijkstra from one endpoint; the per-source results are cached
        (the most recent 1,024 sources), and the symmetry ``bandwidth(a, b) == bandwidth(b, a)`` is
        used to reuse either endpoint's tree.
        """
        self._check_node("a", a)
        self._check_node("b", b)
        if a == b:
            return math.inf
        if b in self._widest and a not in self._widest:
            a, b = b, a
        return self._cached(self._widest, a, self._widest_from)[b]

    def bandwidths_from(self, node: str) -> Mapping[str, float]:
        """Widest-path bandwidth (Gbps) from ``node`` to every node, as one read-only mapping:
        the per-pair :meth:`bandwidth` for all pairs at the cost of one Dijkstra (cached)."""
        self._check_node("node", node)
        tree = self._cached(self._widest, node, self._widest_from)
        return MappingProxyType(tree)

    def hop_distance(self, a: str, b: str) -> int:
        """Number of links on a shortest path between nodes ``a`` and ``b`` (0 when equal)."""
        self._check_node("a", a)
        self._check_node("b", b)
        if b in self._hop_trees and a not in self._hop_trees:
            a, b = b, a
        return self._cached(self._hop_trees, a, self._hops_from)[b]

    def _cached(self, cache: OrderedDict[str, Any], source: str, compute: Any) -> Any:
        """``compute(source)``, memoised in the bounded LRU ``cache`` (thread-safe)."""
        with self._lock:
            tree = cache.get(source)
            if tree is not None:
                cache.move_to_end(source)
                return tree
        tree = compute(source)  # outside the lock: a duplicate computation is harmless
        with self._lock:
            cache[source] = tree
            if len(cache) > _MAX_CACHED_SOURCES:
                cache.popitem(last=False)
        return tree

    def _widest_from(self, source: str) -> dict[str, float]:
        """Widest-path Dijkstra: like shortest paths, with (min, max) in place of (+, min).

        The heap holds negated bottlenecks so that the widest tentative path pops first. A node's
        value is final when it pops, for the same reason as in Dijkstra: every later path through
        the remaining nodes can only be as wide as the narrowest popped value or narrower.
        """
        best: dict[str, float] = {source: math.inf}
        done: set[str] = set()
        heap: list[tuple[float, str]] = [(-math.inf, source)]
        while heap:
            neg_width, node = heapq.heappop(heap)
            if node in done:
                continue
            done.add(node)
            width = -neg_width
            for nbr, attrs in self._g.adj[node].items():
                cand = min(width, attrs["bandwidth_gbps"])
                if nbr not in done and cand > best.get(nbr, 0.0):
                    best[nbr] = cand
                    heapq.heappush(heap, (-cand, nbr))
        return best

    def _hops_from(self, source: str) -> dict[str, int]:
        hops: dict[str, int] = nx.single_source_shortest_path_length(self._g, source)
        return hops

    # ------------------------------------------------------------------ derived clusters

    def without(self, failed: Iterable[str]) -> Cluster:
        """A new cluster with the ``failed`` GPUs (and their links) removed.

        Hosts stay even when all their GPUs failed. A switch whose every link went to a failed GPU
        (the NVSwitch of a host that lost all its GPUs) would be left isolated, so it is dropped
        too. The name becomes ``f"{name}-minus{k}"`` with ``k`` the number of distinct failed
        GPUs; a single id given as a plain string counts as one GPU.

        Raises :class:`InvalidInstanceError` (``path="failed"``) for an id that is not a GPU of
        this cluster, or when no GPU would remain, or when the rest would be disconnected.
        """
        ids = [failed] if isinstance(failed, str) else list(failed)
        gone: set[str] = set()
        for gpu_id in ids:
            if gpu_id not in self._gpus:
                raise InvalidInstanceError("failed", f"unknown GPU {gpu_id!r}")
            gone.add(gpu_id)
        if len(gone) == len(self._gpus):
            raise InvalidInstanceError(
                "failed", f"no GPU would remain (all {len(gone)} GPUs failed)"
            )
        links = tuple(ln for ln in self._spec.links if ln.a not in gone and ln.b not in gone)
        linked = {ln.a for ln in links} | {ln.b for ln in links}
        orphaned = {
            s.id
            for s in self._spec.switches
            if s.id not in linked and any(n in gone for n in self._g.adj[s.id])
        }
        try:
            spec = ClusterSpec(
                name=f"{self.name}-minus{len(gone)}",
                gpus=tuple(g for g in self._spec.gpus if g.id not in gone),
                hosts=tuple(
                    h.model_copy(update={"leaf": None}) if h.leaf in orphaned else h
                    for h in self._spec.hosts
                ),
                switches=tuple(s for s in self._spec.switches if s.id not in orphaned),
                links=links,
            )
        except InvalidInstanceError as problem:
            raise InvalidInstanceError(
                "failed", f"without these {len(gone)} GPUs, {problem.reason}"
            ) from None
        return type(self)(spec)

    def summary(self) -> str:
        """A few human-readable lines: GPUs per type, hosts, NVLink domains, switches, links."""
        lines = [f"Cluster {self.name!r}: {self.num_gpus} GPUs on {len(self._hosts)} hosts"]
        for gpu_type in self.gpu_types():
            specs = [self._gpus[g] for g in self.gpus(gpu_type)]
            mems = "/".join(f"{m:g}" for m in sorted({s.memory_gib for s in specs}))
            speeds = "/".join(f"{v:g}" for v in sorted({s.speed for s in specs}))
            lines.append(f"  {len(specs)} x {gpu_type} ({mems} GiB, speed {speeds})")
        sizes = Counter(len(d) for d in self.nvlink_domains())
        shape = ", ".join(f"{n} x {size} GPUs" for size, n in sorted(sizes.items(), reverse=True))
        lines.append(f"  NVLink domains: {len(self.nvlink_domains())} ({shape})")
        tiers = Counter(s.tier for s in self._spec.switches)
        lines.append(
            "  switches: " + (", ".join(f"{n} {t}" for t, n in sorted(tiers.items())) or "none")
        )
        kinds: dict[str, list[float]] = {}
        for link in self._spec.links:
            kinds.setdefault(link.kind, []).append(link.bandwidth_gbps)
        lines.append(
            "  links: "
            + ", ".join(
                f"{len(bws)} {kind} ({min(bws):g}-{max(bws):g} Gbps)"
                if min(bws) != max(bws)
                else f"{len(bws)} {kind} ({bws[0]:g} Gbps)"
                for kind, bws in sorted(kinds.items())
            )
        )
        return "\n".join(lines)


# The builders as plain functions (``schedopt.topology.dgx(...)``): each is the class method of
# the same name, which wraps the spec that ``builders.py`` / ``nccl.py`` build into a Cluster.
dgx = Cluster.dgx
leaf_spine = Cluster.leaf_spine
heterogeneous = Cluster.heterogeneous
from_alibaba_nodes = Cluster.from_alibaba_nodes
from_nccl_xml = Cluster.from_nccl_xml
