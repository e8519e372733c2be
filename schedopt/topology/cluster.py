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

The type is assembled from mixins, one job each: :class:`Cluster` itself (this module) builds the
graph and holds identity, serialisation and the derived clusters; the builder class methods are
in :mod:`~schedopt.topology.constructors`, the inventory queries (``gpus``, ``hosts``, ...) in
:mod:`~schedopt.topology.inventory`, the path queries (``nvlink_domains``, ``bandwidth``,
``hop_distance``) in :mod:`~schedopt.topology.paths`, the fields in :mod:`~schedopt.topology.state`.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

import networkx as nx
from pydantic import GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema

from schedopt.core.errors import InvalidInstanceError
from schedopt.topology.constructors import ClusterConstructors
from schedopt.topology.inventory import InventoryQueries
from schedopt.topology.paths import PathQueries
from schedopt.topology.spec import ClusterSpec

__all__ = ["Cluster", "dgx", "from_alibaba_nodes", "from_nccl_xml", "heterogeneous", "leaf_spine"]


class Cluster(ClusterConstructors, InventoryQueries, PathQueries):
    """An immutable GPU-cluster topology: GPUs, hosts, switches and bandwidth-labelled links.

    The constructor takes a :class:`ClusterSpec` or its JSON form (a mapping, validated; bad
    input raises :class:`InvalidInstanceError`); the usual entry points are :meth:`from_dict`,
    :meth:`from_spec` and the builder class methods.

    The graph (:attr:`graph`) has node attribute ``kind`` in ``{"gpu", "host", "switch"}``; GPU
    nodes also carry ``gpu_type``, ``memory_gib``, ``speed`` and ``host``; host nodes ``leaf``;
    switch nodes ``tier``. Edges carry ``kind`` and ``bandwidth_gbps``.
    """

    __slots__ = ()  # the fields are declared in ClusterState (state.py)

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
