"""`StoreWriter`: the one writer of an informer's `Store`, and `BrokenObjects`, what it could not write.

kube-runtime's reflector splits a store into its readers and one writer (``store() -> (Store,
Writer)``): readers keep their handle for good and the writer swaps each finished relist in under
them. Here the readers' handle is the `Store` itself (`Informer.store`, every `CacheReader`,
subscription and replayed event): a (re)list is built in a store of its own (the buffer), each
object encoded as it arrives, and at `InitDone` its contents are exchanged with the readers' store
in one step. Readers never see half a list, never hold a store a relist left behind, and no list of
thousands of decoded objects is ever held.

The writer runs every object through the informer's transform and filter first; an object the
filter rejects is removed as if deleted. What a user function (transform, filter, index function)
raised on is kept at its last good version and recorded in `BrokenObjects`, which keeps the
informer not ready until the object is fixed or deleted.

Each write reports its change as the subscribers' `Event`, built from what the write replaced (no
intermediate form; the replaced object is decoded only if a subscriber reads ``old``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kubeloop import metrics
from kubeloop.cache._codec import Codec
from kubeloop.cache._entry import Key
from kubeloop.cache._frozen import FrozenDict, unwrap
from kubeloop.cache._index import IndexFunc
from kubeloop.cache._informer_event import Event
from kubeloop.cache._store import LOAD_CHEAP_LIMIT, IndexFunctionError, Store
from kubeloop.cache._transform import Filter, Transform
from kubeloop.meta import ADDED, DELETED, MODIFIED, Clock

__all__ = ["BrokenObjects", "StoreWriter"]

log = logging.getLogger("kubeloop.cache")


class StoreWriter:
    """Writes the watcher's outputs into one store for its readers (see the module docstring).

    ``cluster`` and ``resource`` label the events; ``name`` the logs. ``codec``: see `Store` (a
    `Codec` instance is shared by every relist's store, a name makes each a fresh one).
    """

    def __init__(self, *, cluster: str, resource: str, name: str, transform: Transform | None,
                 filter: Filter | None, codec: Codec | str | None, clock: Clock) -> None:
        self.cluster = cluster
        self.resource = resource
        self.transform = transform
        self.filter = filter
        self.store = Store(codec=codec, defer_writes=True, clock=clock)
        """The readers' handle: the same object for the writer's whole life."""
        self.broken = BrokenObjects(name, resource)
        self.load_cheap_limit: float = LOAD_CHEAP_LIMIT
        """Given to every (re)list's store: see `Store.load_cheap_limit`."""
        self._codec = codec
        self._buffer: Store | None = None  # the (re)list being built, exchanged in at `finish_list`
        self._index_fns: dict[str, IndexFunc] = {}

    # ------------------------------------------------------------------ a (re)list

    def begin_list(self) -> None:
        """A (re)list starts (`Init`): a fresh buffer, dropping an unfinished one."""
        self._buffer = self._new_store()

    def load(self, obj: dict[str, Any]) -> None:
        """One object of the (re)list (`InitApply`). If a user function raises on it, the buffer
        takes its last good version, if the store has one."""
        buffer = self._buffer
        if buffer is None:
            buffer = self._buffer = self._new_store()
        try:
            prepared = self._prepare(obj)
            if prepared is not None:
                buffer.load(prepared)
        except Exception as exc:
            md = obj.get("metadata") or {}
            ns, name = md.get("namespace") or "", md.get("name") or ""
            self.broken.fail(ns, name, exc, listing=True)
            last = self.store.get(name, ns)
            if last is not None:
                try:
                    buffer.load(unwrap(last))
                except Exception:
                    log.exception("%s: could not keep %s/%s", self.broken.name, ns, name)

    def finish_list(self, resource_version: str) -> Store:
        """The (re)list is complete (`InitDone`): its contents become the readers' store's. Returns
        a store holding the previous contents, for `changes_since` (then drop it)."""
        new = self._buffer if self._buffer is not None else self._new_store()
        self._buffer = None
        if resource_version:
            new.set_resource_version(resource_version)
        self.broken.list_done()
        self.store._exchange(new)
        return new

    def changes_since(self, previous: Store, *, initial: bool) -> list[Event]:
        """The difference a relist made to the store, as events: objects of ``previous`` that are
        gone as deletes, new ones as adds (`initial` ones for the first list), those whose
        resourceVersion changed as modifications. New states are read from the store when used."""
        cluster, resource, store = self.cluster, self.resource, self.store
        events = [Event(DELETED, cluster, resource, ns, name, None, old=previous.get(name, ns))
                  for ns, name in previous.key_snapshot() if (ns, name) not in store]
        for ns, name in store.key_snapshot():
            before = previous.resource_version_of(name, ns)
            if before is None:
                events.append(Event(ADDED, cluster, resource, ns, name, None, initial=initial, store=store))
            elif before != store.resource_version_of(name, ns):
                events.append(Event(MODIFIED, cluster, resource, ns, name, None, old=previous.get(name, ns),
                                    store=store))
        return events

    def _new_store(self) -> Store:
        """An empty store like the readers' (codec, indexes, clock) to build a (re)list in."""
        current = self.store
        store = Store(codec=self._codec if self._codec is not None else current.codec.name, defer_writes=True,
                      clock=current.clock)
        store.load_cheap_limit = self.load_cheap_limit
        for name, fn in self._index_fns.items():
            store.add_index(name, fn)
        return store

    # ------------------------------------------------------------------ watch events

    def apply(self, obj: dict[str, Any], report: bool) -> Event | None:
        """An object added or modified (`Apply`); the event for subscribers when ``report`` (None
        when nobody listens, or nothing changed)."""
        md = obj.get("metadata")
        if type(md) is not dict:
            return None
        ns, name, rv = md.get("namespace") or "", md.get("name") or "", md.get("resourceVersion")
        store = self.store
        if rv and store.resource_version_of(name, ns) == rv:
            return None  # already stored in exactly this version
        try:
            prepared = self._prepare(obj)
            replaced = store._write(prepared) if prepared is not None else None
        except Exception as exc:
            self.broken.fail(ns, name, exc)
            return None
        broken = self.broken
        if broken.objects and broken.fixed(ns, name):
            log.info("%s: %s/%s is stored again", broken.name, ns, name)
        if prepared is None:  # stopped passing the filter: gone as far as readers know
            return self._remove(ns, name, rv)
        if not report:
            return None
        return Event(ADDED if replaced is None else MODIFIED, self.cluster, self.resource, ns, name,
                     FrozenDict(prepared), old=replaced, codec=store.codec)

    def delete(self, obj: dict[str, Any]) -> Event | None:
        """An object deleted (`Delete`); the event, if the store held it."""
        md = obj.get("metadata")
        if type(md) is not dict:
            return None
        ns, name = md.get("namespace") or "", md.get("name") or ""
        self.broken.forget(ns, name)
        return self._remove(ns, name, md.get("resourceVersion"))

    def _remove(self, ns: str, name: str, rv: str | None) -> Event | None:
        store = self.store
        gone = store._remove(ns, name, rv)
        if gone is None:
            return None
        return Event(DELETED, self.cluster, self.resource, ns, name, None, old=gone, codec=store.codec)

    def _prepare(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        """The object to store, or None if the filter rejects it; raises `_Failed` if the
        transform or the filter raised (never read as "rejected": that would delete it)."""
        t = self.transform
        if t is not None:
            try:
                obj = t(obj)
            except Exception as exc:
                raise _Failed(f"transform {_fn_name(t)}", "transform", exc) from exc
        f = self.filter
        if f is not None:
            try:
                if not f(obj):
                    return None
            except Exception as exc:
                raise _Failed(f"filter {_fn_name(f)}", "filter", exc) from exc
        return obj

    # ------------------------------------------------------------------ indexes and memory

    def add_index(self, name: str, fn: IndexFunc) -> None:
        """Register an index on the store and every later (re)list's (the same (name, fn) twice: a no-op)."""
        known = self._index_fns.get(name)
        if known is not None:
            if known == fn:  # the same function (or a `ValueIndex` of it)
                return
            raise ValueError(f"{self.broken.name}: index {name!r} already exists with another function")
        self.store.add_index(name, fn)
        if self._buffer is not None:
            self._buffer.add_index(name, fn)
        self._index_fns[name] = fn

    @property
    def index_functions(self) -> dict[str, IndexFunc]:
        """The indexes added (by name), the built-in ones left out."""
        return dict(self._index_fns)

    def release(self) -> None:
        """Drop every stored object (readers holding views keep theirs)."""
        self._buffer = None
        self.store._exchange(Store(codec=self.store.codec, owner_index=False, clock=self.store.clock))


class BrokenObjects:
    """Objects a user function (transform, filter, index function) raised on, with what raised.

    Such an object stays at its last good version and keeps the informer not ready (`reason`)
    until a later version is stored or it is deleted. Failures during a (re)list are kept apart
    and replace the others when the list is swapped in. Each is logged at ERROR once per object
    and counted (``kubeloop_cache_object_errors_total``).
    """

    __slots__ = ("_listing", "name", "objects", "resource")

    def __init__(self, name: str, resource: str) -> None:
        self.name = name
        self.resource = resource
        self.objects: dict[Key, str] = {}
        """What raised on each broken object, by key (read-only to all but this class)."""
        self._listing: dict[Key, str] = {}  # the same, for the (re)list being built

    def fail(self, ns: str, name: str, exc: Exception, *, listing: bool = False) -> None:
        """A user function raised on this object (or storing it failed)."""
        cause: BaseException
        if isinstance(exc, _Failed):
            function, label, cause = exc.function, exc.label, exc.cause
        elif isinstance(exc, IndexFunctionError):
            function, label, cause = exc.function, f"index:{exc.index}", exc.__cause__ or exc
        else:
            function, label, cause = "storing", "store", exc
        why = f"{function} raised {type(cause).__name__}: {cause}"
        key = (ns, name)
        if key not in self.objects and key not in self._listing:
            log.error("%s: %s on %s/%s; keeping its last good version, not ready until fixed", self.name, why,
                      ns, name, exc_info=cause)
        (self._listing if listing else self.objects)[key] = why
        metrics.CACHE_OBJECT_ERRORS.labels(self.resource or self.name, label).inc()

    def fixed(self, ns: str, name: str) -> bool:
        """A good version was stored: True if the object was broken."""
        return self.objects.pop((ns, name), None) is not None

    def forget(self, ns: str, name: str) -> None:
        """The object was deleted."""
        self.objects.pop((ns, name), None)

    def list_done(self) -> None:
        """A (re)list was swapped in: its failures are the ones that count now."""
        self.objects, self._listing = self._listing, {}

    def describe(self) -> str:
        """The first broken object and what raised on it ("" when none)."""
        objects = self.objects
        if not objects:
            return ""
        (ns, name), why = next(iter(objects.items()))
        more = f" (and {len(objects) - 1} more objects)" if len(objects) > 1 else ""
        return f"{why} on {ns}/{name}{more}; the cache keeps the last good version"

    def __len__(self) -> int:
        return len(self.objects)


class _Failed(Exception):
    """The transform or the filter raised on an object."""

    def __init__(self, function: str, label: str, cause: Exception) -> None:
        super().__init__(function)
        self.function, self.label, self.cause = function, label, cause


def _fn_name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)
