"""`InformerHandle`: a user's reference to a shared informer (see `kubeloop.cache._shared`), and
`_Entry`, the cache's record of one live informer and its users."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import TYPE_CHECKING, Any

from kubeloop.cache._entry import Key
from kubeloop.cache._frozen import FrozenDict
from kubeloop.cache._index import IndexFunc
from kubeloop.cache._informer import Informer
from kubeloop.cache._reader import CacheReader
from kubeloop.cache._scope import Predicate, Scope
from kubeloop.cache._subscription import Sink, Subscription
from kubeloop.meta import FieldSelectorLike, LabelSelectorLike

if TYPE_CHECKING:
    from kubeloop.cache._shared import SharedCache

__all__ = ["InformerHandle"]

_list = list


class _Entry:
    """One live informer of the cache, its users and its collection timer."""

    __slots__ = ("handles", "informer", "refs", "scope", "task", "timer")

    def __init__(self, scope: Scope, informer: Informer) -> None:
        self.scope = scope
        self.informer = informer
        self.refs = 0
        self.handles: list[InformerHandle] = []  # unreleased, so a broader informer can take them over
        self.timer: asyncio.TimerHandle | None = None
        self.task: asyncio.Task[None] | None = None


class InformerHandle:
    """A user's reference to a shared informer, for one (possibly narrower) scope.

    Reads (`Reader`: `get`, `list`, `keys`, `by_index`, `index_keys`, `values`, also as `reader`), `subscribe()` and readiness behave as if the informer were
    this scope's own. Call `release()` (or use ``async with``) when done.
    """

    def __init__(self, cache: SharedCache, entry: _Entry, scope: Scope, predicate: Predicate | None) -> None:
        self._cache = cache
        self._entry = entry
        self.scope = scope
        self.predicate = predicate
        self.project = entry.scope.projection(scope)  # a metadata-only scope served by a full informer
        self.released = False
        self._reader: CacheReader | None = None
        self._subs: list[Subscription] = []
        entry.handles.append(self)

    # ---- identity
    @property
    def informer(self) -> Informer:
        """The informer serving this handle (shared; maybe of a broader scope)."""
        return self._entry.informer

    @property
    def cluster(self) -> str:
        return self.scope.cluster

    @property
    def resource(self) -> str:
        return self.scope.resource

    @property
    def shared_from(self) -> Scope:
        """The scope of the informer actually watching (equal to `scope` unless narrowed)."""
        return self._entry.scope

    # ---- reads
    @property
    def reader(self) -> CacheReader:
        """Read-only access to the objects in this handle's scope (the handle's own reads use it)."""
        inf = self._entry.informer
        if self.predicate is None and self.project is None:
            return inf.reader
        r = self._reader
        if r is None:
            s = self.scope
            r = self._reader = CacheReader(
                inf.store, s.cluster, s.resource, namespace=s.namespace, label_selector=s.label_selector,
                field_selector=s.field_selector, predicate=self.predicate, project=self.project)
        return r

    def get(self, name: str, namespace: str = "") -> FrozenDict | None:
        """The object, or None (`Reader`)."""
        return self.reader.get(name, namespace)

    def list(self, namespace: str | None = None, label_selector: LabelSelectorLike | None = None,
             field_selector: FieldSelectorLike | None = None) -> _list[FrozenDict]:
        """The objects in scope, optionally in one namespace and matching selectors (`Reader`)."""
        return self.reader.list(namespace, label_selector, field_selector)

    def keys(self) -> _list[Key]:
        """Every (namespace, name) in scope (`Reader`)."""
        return self.reader.keys()

    def by_index(self, index: str, key: str) -> _list[FrozenDict]:
        """The objects filed under ``key`` in ``index`` (`Reader`)."""
        return self.reader.by_index(index, key)

    def index_keys(self, index: str, key: str) -> set[Key]:
        """The (namespace, name) filed under ``key`` in ``index`` (`Reader`)."""
        return self.reader.index_keys(index, key)

    def values(self, index: str, key: str) -> _list[Any]:
        """The values the `ValueIndex` ``index`` gives for ``key`` (`Reader`)."""
        return self.reader.values(index, key)

    # ---- readiness
    @property
    def synced(self) -> bool:
        return self._entry.informer.synced

    @property
    def ready(self) -> bool:
        return self._entry.informer.ready

    @property
    def reason(self) -> str:
        return self._entry.informer.reason

    async def wait_synced(self, timeout: float | None = None, *, fail_fast: bool = False) -> None:  # noqa: ASYNC109
        """Wait for the informer's first list (raises `InformerNotReady` with the reason; with
        ``fail_fast``, as soon as the list is refused: see `Informer.wait_synced`)."""
        await self._entry.informer.wait_synced(timeout, fail_fast=fail_fast)

    # ---- subscribers and indexes
    def subscribe(self, *, queue_size: int | None = None, replay: bool = True, name: str = "",
                  sink: Sink | None = None) -> Subscription:
        """Events of this scope (see `Informer.subscribe`); closed on `release()`."""
        if self.released:
            raise RuntimeError(f"{self.scope}: subscribe() on a released handle")
        sub = self._entry.informer.subscribe(queue_size=queue_size, replay=replay, predicate=self.predicate,
                                             name=name, sink=sink, project=self.project)
        self._subs.append(sub)
        return sub

    def add_index(self, name: str, fn: IndexFunc) -> None:
        """Register an index on the shared store (the same name+function again is a no-op)."""
        self._entry.informer.add_index(name, fn)

    def _move_to(self, entry: _Entry, predicate: Predicate | None) -> None:
        """Be served by ``entry`` (a broader informer taking this one's users over): reads follow at
        once; each subscription gets a resync against the new store (see `Subscription._rehome`)."""
        self._entry = entry
        self.predicate = predicate
        self.project = entry.scope.projection(self.scope)
        self._reader = None
        entry.handles.append(self)
        inf = entry.informer
        for sub in self._subs:
            inf._adopt(sub, predicate, self.project)

    # ---- lifetime
    def release(self) -> None:
        """Give the informer back (idempotent); its subscriptions from this handle are closed."""
        if self.released:
            return
        self.released = True
        for sub in self._subs:
            sub.close()
        self._subs.clear()
        if self in self._entry.handles:
            self._entry.handles.remove(self)
        self._cache._release(self._entry)

    async def __aenter__(self) -> InformerHandle:
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        self.release()

    def __repr__(self) -> str:
        shared = "" if self._entry.scope == self.scope else f" from [{self._entry.scope}]"
        return f"InformerHandle({self.scope}{shared}, ready={self.ready})"
