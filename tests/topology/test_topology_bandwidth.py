"""Widest-path bandwidth against a brute force over all simple paths."""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Any

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from schedopt.topology import Cluster

HYPOTHESIS = settings(derandomize=True, deadline=None, max_examples=50)


@st.composite
def small_clusters(draw: st.DrawFn) -> dict[str, Any]:
    """A connected random graph: node 0 is host h0, the others GPUs g1.. on h0.

    A random spanning tree guarantees connectivity; extra random edges create alternative paths.
    Bandwidths come from a small set so that ties between paths happen.
    """
    n = draw(st.integers(2, 7))
    names = ["h0"] + [f"g{i}" for i in range(1, n)]
    bandwidth = st.sampled_from([1.0, 2.0, 5.0, 10.0, 25.0, 100.0])
    edges: dict[frozenset[int], float] = {}
    for i in range(1, n):
        edges[frozenset((i, draw(st.integers(0, i - 1))))] = draw(bandwidth)
    for _ in range(draw(st.integers(0, n * (n - 1) // 2))):
        a, b = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        if a != b:
            edges[frozenset((a, b))] = draw(bandwidth)
    links = []
    for pair, bw in edges.items():
        a, b = sorted(pair)
        kind = draw(st.sampled_from(["nvlink", "pcie"]))
        links.append({"a": names[a], "b": names[b], "kind": kind, "bandwidth_gbps": bw})
    return {
        "gpus": [{"id": g, "host": "h0", "gpu_type": "H100", "memory_gib": 80} for g in names[1:]],
        "hosts": [{"id": "h0"}],
        "links": links,
    }


def brute_force(graph: nx.Graph, a: str, b: str) -> float:
    if a == b:
        return math.inf
    return max(
        min(graph.edges[u, v]["bandwidth_gbps"] for u, v in pairwise(path))
        for path in nx.all_simple_paths(graph, a, b)
    )


@HYPOTHESIS
@given(spec=small_clusters())
def test_widest_path_matches_brute_force(spec: dict[str, Any]) -> None:
    cluster = Cluster.from_dict(spec)
    graph = cluster.graph
    nodes = sorted(graph)
    for a in nodes:
        for b in nodes:
            assert cluster.bandwidth(a, b) == brute_force(graph, a, b), (a, b)
            assert cluster.hop_distance(a, b) == nx.shortest_path_length(graph, a, b)


@HYPOTHESIS
@given(spec=small_clusters())
def test_widest_path_is_the_maximum_spanning_tree_bottleneck(spec: dict[str, Any]) -> None:
    # A classical identity: a maximum spanning tree contains a widest path between every pair.
    cluster = Cluster.from_dict(spec)
    tree = nx.maximum_spanning_tree(cluster.graph, weight="bandwidth_gbps")
    for a in tree:
        for b in tree:
            if a != b:
                path = nx.shortest_path(tree, a, b)
                expected = min(tree.edges[u, v]["bandwidth_gbps"] for u, v in pairwise(path))
                assert cluster.bandwidth(a, b) == expected
