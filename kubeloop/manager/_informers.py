"""`ManagedInformer`: an informer the Manager keeps open for its whole life, for readers that are not
controllers (cross-resource lookups, indexes read from several controllers).

    running = manager.informer("v1/Pod", indexes={"running-by-app": running_by_app})
    ...
    pods = running.by_index("running-by-app", f"{ns}/{app}")   # in reconcile: no API call

    ips = manager.informer("v1/Pod", indexes={"ip-by-app": ValueIndex(lambda p: {app_of(p): ip_of(p)})})
    ips.values("ip-by-app", app)                                 # one value per Pod (kubeloop.cache.ValueIndex)

A read before the informer's first list completed raises `kubeloop.cache.CacheNotSynced`
instead of answering from a partial cache; a reconcile that raises it waits for the sync and runs
again, so ``needs=`` is only an optimisation (workers start after those informers synced).

It is the same informer any controller watching the same scope uses (one watch per scope).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.cache import (
    CacheNotSynced,
    CacheReader,
    Filter,
    FrozenDict,
    IndexFunc,
    InformerHandle,
    Key,
    Selection,
    SharedCache,
)
from kubeloop.meta import DEFAULT_CLUSTER, FieldSelectorLike, LabelSelectorLike

__all__ = ["ManagedInformer"]

_list = list


class ManagedInformer:
    """A Manager-owned informer of one scope on one or every cluster (see the module docstring)."""

    def __init__(self, resource: str, selection: Selection, *, cluster: str | None,
                 indexes: Mapping[str, IndexFunc], filter: Filter | None = None) -> None:
        self.resource = resource
        self.selection = selection
        self.cluster = cluster
        self.indexes = dict(indexes)
        self.filter = filter
        self._handles: dict[str, InformerHandle] = {}

    async def open(self, cache: SharedCache) -> None:
        """Acquire the informer(s) and register the indexes (the Manager calls this at start)."""
        for cluster in [self.cluster] if self.cluster else cache.clusters:
            await self.open_cluster(cache, cluster)

    async def open_cluster(self, cache: SharedCache, cluster: str) -> None:
        """Acquire the informer on ``cluster`` if it is one of this informer's (the Manager calls this
        for a cluster added at run time too: "every cluster" includes it)."""
        if cluster in self._handles or (self.cluster is not None and cluster != self.cluster):
            return
        handle = await cache.informer_for(cluster, self.resource, self.selection, filter=self.filter)
        for name, fn in self.indexes.items():
            handle.add_index(name, fn)
        self._handles[cluster] = handle

    def close(self) -> None:
        for handle in self._handles.values():
            handle.release()
        self._handles.clear()

    def drop_cluster(self, cluster: str) -> None:
        """Give back the informer on ``cluster`` (the cluster was removed)."""
        handle = self._handles.pop(cluster, None)
        if handle is not None:
            handle.release()

    def handle(self, cluster: str | None = None) -> InformerHandle:
        """The informer handle on ``cluster`` (default: the only one, or ``default``)."""
        if not self._handles:
            raise RuntimeError(f"informer of {self.resource} is not open: the manager has not started")
        if cluster is None:
            if len(self._handles) == 1:
                return next(iter(self._handles.values()))
            cluster = DEFAULT_CLUSTER
        try:
            return self._handles[cluster]
        except KeyError:
            raise LookupError(f"no informer of {self.resource} on cluster {cluster!r}") from None

    def reader(self, cluster: str | None = None) -> CacheReader:
        """Read-only access to the cached objects on ``cluster`` (default: the only one, or ``default``);
        `CacheNotSynced` before its first list completed: never a partial answer."""
        handle = self.handle(cluster)
        if not handle.synced:
            raise CacheNotSynced(f"informer of {self.resource} on cluster {handle.cluster!r}", handle.wait_synced)
        return handle.reader

    # `Reader`, with the cluster to read on as an option
    def get(self, name: str, namespace: str = "", *, cluster: str | None = None) -> FrozenDict | None:
        """The cached object, or None."""
        return self.reader(cluster).get(name, namespace)

    def list(self, namespace: str | None = None, label_selector: LabelSelectorLike | None = None,
             field_selector: FieldSelectorLike | None = None, *, cluster: str | None = None) -> _list[FrozenDict]:
        """The cached objects, optionally in one namespace and matching selectors."""
        return self.reader(cluster).list(namespace, label_selector, field_selector)

    def keys(self, *, cluster: str | None = None) -> _list[Key]:
        """Every cached (namespace, name)."""
        return self.reader(cluster).keys()

    def by_index(self, index: str, key: str, *, cluster: str | None = None) -> _list[FrozenDict]:
        """The cached objects filed under ``key`` in ``index``."""
        return self.reader(cluster).by_index(index, key)

    def index_keys(self, index: str, key: str, *, cluster: str | None = None) -> set[Key]:
        """The (namespace, name) of the cached objects filed under ``key`` in ``index``."""
        return self.reader(cluster).index_keys(index, key)

    def values(self, index: str, key: str, *, cluster: str | None = None) -> _list[Any]:
        """The values the `ValueIndex` ``index`` gives for ``key``, one per cached object filed under it."""
        return self.reader(cluster).values(index, key)

    @property
    def synced(self) -> bool:
        return bool(self._handles) and all(h.synced for h in self._handles.values())

    async def wait_synced(self, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """Wait for the first list on every cluster (raises `InformerNotReady` with the reason)."""
        for handle in list(self._handles.values()):
            await handle.wait_synced(timeout)

    def __repr__(self) -> str:
        where = self.cluster or "every cluster"
        return f"ManagedInformer({self.resource} on {where}, indexes={sorted(self.indexes)}, synced={self.synced})"
