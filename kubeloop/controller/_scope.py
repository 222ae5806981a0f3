"""What a reconcile's `Context` may use of the running controller: `RuntimeView`, and `OverlayReader`.

The runtime builds one `RuntimeView` per run and hands it to every `Context`; the context reaches
nothing else of the runtime (no private fields), so the two can change independently.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubeloop.cache.frozen import FrozenDict, freeze
from kubeloop.cache.reader import CacheReader
from kubeloop.cache.shared import SharedCache
from kubeloop.cache.store import Key
from kubeloop.controller._apply import AppliedMemory
from kubeloop.controller._events import EventRecorder
from kubeloop.controller._readyourwrites import ObjectKey, ReadYourWrites
from kubeloop.controller._sources import SourceSet
from kubeloop.meta import FieldSelector, LabelSelector
from kubeloop.metrics import ControllerMetrics

_list = list


def _view(obj: Mapping[str, Any] | None) -> FrozenDict | None:
    if obj is None or isinstance(obj, FrozenDict):
        return obj
    return freeze(dict(obj))


class OverlayReader:
    """The cache of one kind on one cluster, as a reconcile sees it: `get` shows the controller's own
    newer writes; the other reads are the informer's (the cache reader protocol's five methods)."""

    __slots__ = ("_cluster", "_group", "_kind", "_reader", "_ryw")

    def __init__(self, reader: CacheReader, ryw: ReadYourWrites | None, cluster: str, group: str, kind: str) -> None:
        self._reader = reader
        self._ryw = ryw
        self._cluster = cluster
        self._group = group
        self._kind = kind

    def get(self, name: str, namespace: str = "") -> FrozenDict | None:
        """The object (read-only), or our own newer write of it."""
        cached = self._reader.get(name, namespace)
        if self._ryw is None:
            return cached
        return _view(self._ryw.tracker.overlay((self._cluster, self._group, self._kind, namespace, name), cached))

    def list(self, namespace: str | None = None, label_selector: LabelSelector | str | None = None,
             field_selector: FieldSelector | str | None = None) -> _list[FrozenDict]:
        """Cached objects (as the informer has them)."""
        return self._reader.list(namespace, label_selector, field_selector)

    def keys(self) -> _list[Key]:
        """Every cached (namespace, name)."""
        return self._reader.keys()

    def by_index(self, index: str, key: str) -> _list[FrozenDict]:
        """Cached objects filed under ``key`` in ``index``."""
        return self._reader.by_index(index, key)

    def index_keys(self, index: str, key: str) -> set[Key]:
        """(namespace, name) of the cached objects filed under ``key`` in ``index``."""
        return self._reader.index_keys(index, key)


@dataclass(frozen=True, eq=False)
class RuntimeView:
    """The running controller as a `Context` sees it (one per run)."""

    name: str
    field_manager: str
    for_resource: str
    log: logging.Logger
    cache: SharedCache
    sources: SourceSet
    ryw: ReadYourWrites | None
    applied: AppliedMemory
    metrics: ControllerMetrics
    recorder: EventRecorder | None

    def reader(self, cluster: str, resource: str) -> OverlayReader:
        """The cache of ``resource`` (as named in ``for_``/``owns``/``watches``) on ``cluster``."""
        src = self.sources.source(cluster, resource)
        return OverlayReader(src.store, self.ryw, cluster, src.group, src.kind)

    def read(self, key: ObjectKey) -> Mapping[str, Any] | None:
        """The cached object of ``key``, with the controller's own newer writes overlaid."""
        return self.sources.cached(key) if self.ryw is None else self.ryw.read(key)

    def skipped_write(self) -> None:
        """Count a write that was not sent because it would have changed nothing."""
        self.metrics.apply_skipped += 1
