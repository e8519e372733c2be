"""Inventory queries of a :class:`~schedopt.topology.cluster.Cluster`: GPUs, hosts, switches.

:class:`InventoryQueries` is a mixin of ``Cluster``: which GPUs, hosts and switches there are,
what a GPU is and where it sits. Lists are sorted with :func:`~schedopt.topology.spec.id_sort_key`
and computed once (kept in the cluster's ``_cache``).
"""

from __future__ import annotations

from collections.abc import Iterable

from schedopt.core.errors import InvalidInstanceError
from schedopt.topology.spec import GpuSpec, id_sort_key
from schedopt.topology.state import ClusterState

__all__ = ["InventoryQueries"]


class InventoryQueries(ClusterState):
    """The inventory part of :class:`~schedopt.topology.cluster.Cluster`'s queries."""

    __slots__ = ()

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
