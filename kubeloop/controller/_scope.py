"""What a reconcile's `Context` may use of the controller run: `RunView`, and `OverlayReader`.

Each `ControllerRun` builds one `RunView` and hands it to every `Context`; the context reaches
nothing else of the run (no private fields), so the two can change independently.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubeloop.cache import (
    OWNER_INDEX,
    OWNER_REF_INDEX,
    CacheReader,
    FrozenDict,
    Key,
    SharedCache,
    freeze,
    owner_ref_index,
    owner_uid_index,
)
from kubeloop.controller._apply import AppliedMemory
from kubeloop.controller._readyourwrites import ObjectKey, ReadYourWrites
from kubeloop.controller._recorder import EventRecorder
from kubeloop.controller._sources import SourceSet
from kubeloop.controller._targets import Targets
from kubeloop.meta import FieldSelectorLike, LabelSelector, LabelSelectorLike, as_label_selector
from kubeloop.metrics import ControllerMetrics

_list = list


def _view(obj: Mapping[str, Any] | None) -> FrozenDict | None:
    if obj is None or isinstance(obj, FrozenDict):
        return obj
    return freeze(dict(obj))


def _labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def _key(view: Mapping[str, Any]) -> Key:
    """(namespace, name) of a cached object (namespace "" when cluster-scoped)."""
    meta = view["metadata"]
    return (meta.get("namespace") or "", meta["name"])


_OWNER_INDEXES = {OWNER_INDEX: owner_uid_index, OWNER_REF_INDEX: owner_ref_index}


@dataclass(slots=True, frozen=True, eq=False)
class OverlayReader:
    """The cache of one kind on one cluster, as a reconcile sees it: every read shows the
    controller's own writes the cache does not show yet (an object it created, changed or deleted
    a moment ago), so a reconcile that lists its children right after writing one never counts
    the old state. Other readers of the shared cache see the informer's state, unchanged.

    ``list`` with a field selector and ``by_index`` of an index other than the built-in owner
    indexes overlay changed and deleted objects only (an unseen new object cannot be matched).
    """

    _reader: CacheReader
    _ryw: ReadYourWrites | None
    _cluster: str
    _group: str
    _kind: str
    _scope_ns: str | None = None
    _scope_labels: LabelSelector | None = None

    def get(self, name: str, namespace: str = "") -> FrozenDict | None:
        """The object (read-only), or our own newer write of it."""
        cached = self._reader.get(name, namespace)
        if self._ryw is None:
            return cached
        return _view(self._ryw.tracker.overlay((self._cluster, self._group, self._kind, namespace, name), cached))

    def _in_scope(self, obj: Mapping[str, Any]) -> bool:
        meta = obj.get("metadata") or {}
        if self._scope_ns is not None and (meta.get("namespace") or "") != self._scope_ns:
            return False
        return not self._scope_labels or self._scope_labels.matches(_labels(obj))

    def _overlaid(self, cached: _list[FrozenDict], wanted: Callable[[Mapping[str, Any]], bool] | None) -> _list[FrozenDict]:
        """``cached`` with our newer writes of its kind applied; ``wanted`` says whether a written
        object belongs to the result (None: only objects already in ``cached`` are replaced or dropped)."""
        ryw = self._ryw
        writes = ryw.tracker.latest(self._cluster, self._group, self._kind) if ryw is not None else {}
        if ryw is None or not writes:
            return cached
        overlay = ryw.tracker.overlay
        out: _list[FrozenDict] = []
        done: set[ObjectKey] = set()
        for view in cached:
            meta = view["metadata"]
            key: ObjectKey = (self._cluster, self._group, self._kind, meta.get("namespace") or "", meta["name"])
            if key not in writes:
                out.append(view)
                continue
            done.add(key)
            shown = overlay(key, view)
            if shown is view:
                out.append(view)
            elif shown is not None and (wanted is None or wanted(shown)) and self._in_scope(shown):
                out.append(_view(shown))  # type: ignore[arg-type]
        if wanted is not None:
            for key, w in writes.items():
                if key in done or w.deleted or w.obj is None:
                    continue
                current = self._reader.get(key[4], key[3])
                shown = overlay(key, current)
                if shown is not None and shown is not current and wanted(shown) and self._in_scope(shown):
                    out.append(_view(shown))  # type: ignore[arg-type]
        return out

    def list(self, namespace: str | None = None, label_selector: LabelSelectorLike | None = None,
             field_selector: FieldSelectorLike | None = None) -> _list[FrozenDict]:
        """Objects in scope (optionally in one namespace / matching selectors), own writes included."""
        cached = self._reader.list(namespace, label_selector, field_selector)
        if self._ryw is None:
            return cached
        labels = None if label_selector is None else as_label_selector(label_selector)

        def wanted(obj: Mapping[str, Any]) -> bool:
            if namespace is not None and ((obj.get("metadata") or {}).get("namespace") or "") != namespace:
                return False
            return not labels or labels.matches(_labels(obj))

        return self._overlaid(cached, None if field_selector else wanted)

    def keys(self) -> _list[Key]:
        """Every (namespace, name) in scope, own writes included."""
        if self._ryw is None:
            return self._reader.keys()
        return [_key(v) for v in self.list()]

    def by_index(self, index: str, key: str) -> _list[FrozenDict]:
        """Objects filed under ``key`` in ``index``, own writes included."""
        cached = self._reader.by_index(index, key)
        if self._ryw is None:
            return cached
        fn = _OWNER_INDEXES.get(index)
        return self._overlaid(cached, (lambda obj: key in fn(obj)) if fn is not None else None)

    def index_keys(self, index: str, key: str) -> set[Key]:
        """(namespace, name) of the objects filed under ``key`` in ``index``, own writes included."""
        if self._ryw is None:
            return self._reader.index_keys(index, key)
        return {_key(v) for v in self.by_index(index, key)}

    def values(self, index: str, key: str) -> _list[Any]:
        """The values the `ValueIndex` ``index`` gives for ``key``, own writes included."""
        return self._reader.value_index(index).values(self.by_index(index, key), key)


@dataclass(frozen=True, eq=False)
class RunView:
    """The controller run as a `Context` sees it (one per run): its sources, caches and memories."""

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
    targets: Targets

    def reader(self, cluster: str, resource: str) -> OverlayReader:
        """The cache of ``resource`` (as named in ``for_``/``owns``/``watches``) on ``cluster``."""
        src = self.sources.source(cluster, resource)
        scope = src.handle.scope
        return OverlayReader(src.store, self.ryw, cluster, src.group, src.kind, scope.namespace,
                             None if scope.label_selector.empty else scope.label_selector)

    def metadata_only(self, cluster: str, resource: str) -> bool:
        """Whether the cache of ``resource`` on ``cluster`` holds PartialObjectMetadata only."""
        return self.sources.source(cluster, resource).handle.scope.metadata_only

    def read(self, key: ObjectKey) -> Mapping[str, Any] | None:
        """The cached object of ``key``, with the controller's own newer writes overlaid."""
        return self.sources.cached(key) if self.ryw is None else self.ryw.read(key)

    def skipped_write(self) -> None:
        """Count a write that was not sent because it would have changed nothing."""
        self.metrics.apply_skipped += 1
