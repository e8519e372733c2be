"""The fields of a :class:`~schedopt.topology.cluster.Cluster`, shared with its query mixins.

:class:`ClusterState` only declares the slots and their types; ``Cluster.__init__`` fills them
(through ``object.__setattr__``, as a ``Cluster`` is immutable). The mixins
(:mod:`~schedopt.topology.inventory`, :mod:`~schedopt.topology.paths`) derive from it so that
their methods can read the fields without importing :mod:`~schedopt.topology.cluster`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import networkx as nx

from schedopt.topology.spec import ClusterSpec, GpuSpec, HostSpec

__all__ = ["ClusterState"]


class ClusterState:
    """The slots of a cluster: its spec, its graph, lookups by id and the query caches."""

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
