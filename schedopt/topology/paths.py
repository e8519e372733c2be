"""Path queries of a :class:`~schedopt.topology.cluster.Cluster`: NVLink domains, bandwidth, hops.

:class:`PathQueries` is a mixin of ``Cluster``. :meth:`~PathQueries.bandwidth` is the bottleneck
of the widest path (a widest-path Dijkstra), :meth:`~PathQueries.hop_distance` the length of a
shortest path; both keep the trees they compute per source in a bounded, thread-safe LRU cache
of :data:`_MAX_CACHED_SOURCES` sources.
"""

from __future__ import annotations

import heapq
import math
from collections import OrderedDict
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import networkx as nx

from schedopt.core.errors import InvalidInstanceError
from schedopt.topology.spec import id_sort_key
from schedopt.topology.state import ClusterState

__all__ = ["PathQueries"]

_MAX_CACHED_SOURCES = 1024  # widest-path / hop trees kept per cluster (each is O(nodes))


class PathQueries(ClusterState):
    """The path part of :class:`~schedopt.topology.cluster.Cluster`'s queries."""

    __slots__ = ()

    def _check_node(self, arg: str, node: str) -> None:
        if node not in self._g:
            raise InvalidInstanceError(arg, f"unknown node {node!r}")

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
