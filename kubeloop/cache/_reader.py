"""`Reader`, the one read interface of the cache, and `CacheReader`, its implementation over an
informer's store, labelled with its cluster.

`Reader` is what every read-only front offers, with the same names and types: `Store`,
`CacheReader`, `InformerHandle`, the manager's `ManagedInformer` and a reconcile's `ctx.reader()`.

Every read carries the cluster (principle 7): `cluster` is an attribute, `keys()` are
(namespace, name) within it. A reader handed out for a narrower scope served by a broader
informer (see `kubeloop.cache._scope`) applies that scope's namespace, selectors and filter to
every read, and for a metadata-only scope served by a full informer gives the objects as
``PartialObjectMetadata``, so it answers exactly as a dedicated informer would.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from kubeloop.cache._entry import Key
from kubeloop.cache._frozen import FrozenDict
from kubeloop.cache._scope import Predicate, Project, combine_fields, combine_labels
from kubeloop.cache._store import Store
from kubeloop.cache._values import ValueIndex, value_index
from kubeloop.meta import FieldSelectorLike, LabelSelectorLike, as_field_selector, as_label_selector

__all__ = ["CacheReader", "Reader"]

_list = list


@runtime_checkable
class Reader(Protocol):
    """Read-only access to cached objects of one resource: read-only views, never API calls.

    ``keys`` and ``index_keys`` answer without decoding objects; ``list`` answers label selectors
    and ``metadata.name``/``metadata.namespace`` field selectors without decoding non-matches;
    ``values`` reads a `ValueIndex` (kopf's ``{key: value}`` indexes).
    """

    def get(self, name: str, namespace: str = "") -> FrozenDict | None:
        """The object, or None."""
        ...

    def list(self, namespace: str | None = None, label_selector: LabelSelectorLike | None = None,
             field_selector: FieldSelectorLike | None = None) -> _list[FrozenDict]:
        """The objects (optionally in one namespace, matching the selectors)."""
        ...

    def keys(self) -> _list[Key]:
        """Every (namespace, name)."""
        ...

    def by_index(self, index: str, key: str) -> _list[FrozenDict]:
        """The objects filed under ``key`` in ``index``."""
        ...

    def index_keys(self, index: str, key: str) -> set[Key]:
        """The (namespace, name) of the objects filed under ``key`` in ``index``."""
        ...

    def values(self, index: str, key: str) -> _list[Any]:
        """The values the `ValueIndex` ``index`` gives for ``key``, one per object filed under it."""
        ...


class CacheReader:
    """Reads of one informer's store (optionally narrowed); results are read-only views.

    It holds the `Store` itself: a relist exchanges the store's contents, not the store, so the
    reader stays valid for the informer's life.
    """

    __slots__ = ("_fields", "_labels", "_namespace", "_pred", "_project", "_store", "cluster", "resource")

    def __init__(
        self,
        store: Store,
        cluster: str,
        resource: str = "",
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike | None = None,
        field_selector: FieldSelectorLike | None = None,
        predicate: Predicate | None = None,
        project: Project | None = None,
    ) -> None:
        labels, fields = as_label_selector(label_selector), as_field_selector(field_selector)
        self._store = store
        self.cluster = cluster
        self.resource = resource
        self._namespace = namespace
        self._labels = None if labels.empty else labels
        self._fields = None if fields.empty else fields
        self._pred = predicate  # the full narrowing predicate (selectors and filter)
        self._project = project  # the narrower form (metadata-only) of every object read

    @property
    def narrowed(self) -> bool:
        """True when this reader filters a broader informer's store (or gives a narrower form of it)."""
        return self._pred is not None or self._project is not None

    def _ok(self, view: FrozenDict | None) -> FrozenDict | None:
        if view is None or self._pred is None or self._pred(view):
            return view if view is None or self._project is None else self._project(view)
        return None

    def _form(self, views: _list[FrozenDict]) -> _list[FrozenDict]:
        project = self._project
        return views if project is None else [project(v) for v in views]

    def get(self, name: str, namespace: str = "") -> FrozenDict | None:
        """The object (read-only view) or None."""
        if self._pred is None and self._project is None:
            return self._store.get(name, namespace)
        return self._ok(self._store.get(name, namespace))

    def get_key(self, key: Key) -> FrozenDict | None:
        """`get` by (namespace, name)."""
        return self.get(key[1], key[0])

    def _ns(self, namespace: str | None) -> tuple[bool, str | None]:
        mine = self._namespace
        if mine is None:
            return True, namespace
        if namespace is not None and namespace != mine:
            return False, None
        return True, mine

    def list(self, namespace: str | None = None, label_selector: LabelSelectorLike | None = None,
             field_selector: FieldSelectorLike | None = None) -> _list[FrozenDict]:
        """Objects in scope (optionally in one namespace / matching selectors)."""
        if self._pred is None:
            return self._form(self._store.list(namespace, label_selector, field_selector))
        ok, ns = self._ns(namespace)
        if not ok:
            return []
        views = self._store.list(ns, combine_labels(self._labels, as_label_selector(label_selector)),
                                 combine_fields(self._fields, as_field_selector(field_selector)))
        pred = self._pred
        return self._form([v for v in views if pred(v)])

    def keys(self) -> _list[Key]:
        """Every (namespace, name) in scope."""
        if self._pred is None:
            return self._store.keys()
        return [(v["metadata"].get("namespace") or "", v["metadata"]["name"]) for v in self.list()]

    def by_index(self, index: str, key: str) -> _list[FrozenDict]:
        """Objects filed under `key` in `index` (and in scope)."""
        views = self._store.by_index(index, key)
        if self._pred is None:
            return self._form(views)
        pred = self._pred
        return self._form([v for v in views if pred(v)])

    def index_keys(self, index: str, key: str) -> set[Key]:
        """(namespace, name) of the objects under `key` in `index` (and in scope)."""
        if self._pred is None:
            return self._store.index_keys(index, key)
        return {(v["metadata"].get("namespace") or "", v["metadata"]["name"]) for v in self.by_index(index, key)}

    def values(self, index: str, key: str) -> _list[Any]:
        """The values the `ValueIndex` ``index`` gives for ``key`` (objects in scope only)."""
        return self.value_index(index).values(self.by_index(index, key), key)

    def value_index(self, index: str) -> ValueIndex:
        """The `ValueIndex` registered as ``index`` (TypeError for an index of keys only)."""
        return value_index(index, self._store.index_function(index))

    def index_values(self, index: str) -> _list[str]:
        """Keys present in `index` (of the whole informer, for a narrowed reader)."""
        return self._store.index_values(index)

    @property
    def resource_version(self) -> str:
        """The latest resourceVersion the store has seen."""
        return self._store.resource_version

    def __len__(self) -> int:
        if self._pred is None:
            return len(self._store)
        return len(self.keys())

    def __contains__(self, key: object) -> bool:
        if not (isinstance(key, tuple) and len(key) == 2):
            return False
        return self.get(key[1], key[0]) is not None

    def __iter__(self) -> Iterator[Key]:
        return iter(self.keys())

    def __repr__(self) -> str:
        return f"CacheReader({self.cluster}:{self.resource}, narrowed={self.narrowed})"
