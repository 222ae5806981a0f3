"""What an informer tells its subscribers: one `Event` per change, in order.

Principle 1 (level-triggered): subscribers should mostly use the key (cluster, namespace, name)
and read current state from the store; `old`/`new` are there for predicates (generation changed,
labels changed, ...). Both are read-only views; `old` is decoded only if read.

An event is the third and last form a watch event takes on its way to a subscriber: the client's
`WatchEvent` (one decoded line), the watcher's `Apply`/`Delete`, then this, built by the store's
writer (`kubeloop.cache.StoreWriter`) straight from what the write replaced.

`initial` is True for events that do not stand for a live change: the initial list, the replay
a late subscriber gets, and the snapshot after a resync. Controllers give those low priority.

A subscriber of a metadata-only scope served by a full informer gets its events `projected`: `new`
and `old` read as ``PartialObjectMetadata``, projected when first read, as they are decoded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kubeloop.cache._entry import REC, decode
from kubeloop.cache._frozen import FrozenDict
from kubeloop.meta import ADDED, DELETED

if TYPE_CHECKING:
    from kubeloop.cache._codec import Codec
    from kubeloop.cache._store import Replaced, Store

__all__ = ["Event"]

# Event types are `kubeloop.meta.EventType`: ADDED, MODIFIED, DELETED, and RESYNC, sent alone when
# a subscriber's queue overflowed: events were dropped, the current state follows (`initial=True`
# adds for everything in scope, deletes for what vanished meanwhile).


class Event:
    """One change seen by an informer: `type`, the key, `old` and `new` read-only views.

    `old` may be given undecoded: a stored entry (with the `codec` to decode it), as a write
    replaced it (see `kubeloop.cache._store.Replaced`).
    """

    __slots__ = ("_codec", "_new", "_old", "_project", "_projected", "_store", "cluster", "initial", "name", "namespace",
                 "resource", "type")

    def __init__(
        self,
        type: str,
        cluster: str,
        resource: str,
        namespace: str,
        name: str,
        new: FrozenDict | None,
        *,
        old: Replaced = None,
        codec: Codec | None = None,
        initial: bool = False,
        store: Store | None = None,
        project: Callable[[FrozenDict], FrozenDict] | None = None,
    ) -> None:
        self.type = type
        self.cluster = cluster
        self.resource = resource
        self.namespace = namespace
        self.name = name
        self._new = new
        self._store = store  # set: `new` is read from the store on first use (replays, snapshots)
        self._old = old
        self._codec = codec
        self.initial = initial
        self._project = project
        self._projected = 0  # bit 1: `new` projected, bit 2: `old`

    @property
    def new(self) -> FrozenDict | None:
        """The object after the change (None for a delete)."""
        st = self._store
        if st is not None:
            self._new = st.get(self.name, self.namespace)
            self._store = None
        p = self._project
        if p is not None and not self._projected & 1:
            self._projected |= 1
            if self._new is not None:
                self._new = p(self._new)
        return self._new

    @property
    def old(self) -> FrozenDict | None:
        """The object before the change (None for an add); decoded on first read."""
        old = self._old
        if type(old) is tuple:  # a stored entry
            codec = self._codec
            assert codec is not None
            old = self._old = FrozenDict(decode(codec, old[REC]))
            self._codec = None
        p = self._project
        if p is not None and not self._projected & 2:
            self._projected |= 2
            if old is not None:
                old = self._old = p(old)  # type: ignore[arg-type]
        return old  # type: ignore[return-value]

    def projected(self, project: Callable[[FrozenDict], FrozenDict]) -> Event:
        """The same change with `new` and `old` read through ``project`` (a metadata-only view)."""
        return Event(self.type, self.cluster, self.resource, self.namespace, self.name, self._new, old=self._old,
                     codec=self._codec, initial=self.initial, store=self._store, project=project)

    @property
    def obj(self) -> FrozenDict | None:
        """The object the event is about: `new`, or for a delete the last known state."""
        return self.new if self.new is not None else self.old

    @property
    def key(self) -> tuple[str, str, str]:
        """(cluster, namespace, name): what a controller queues."""
        return (self.cluster, self.namespace, self.name)

    def with_type(self, type: str) -> Event:
        """The same change reported as another type (a narrower view's enter/leave)."""
        if type == DELETED:  # the last state inside the scope
            return Event(type, self.cluster, self.resource, self.namespace, self.name, None, old=self.old,
                         initial=self.initial)
        return Event(type, self.cluster, self.resource, self.namespace, self.name, self._new,
                     old=None if type == ADDED else self._old, codec=self._codec, initial=self.initial,
                     store=self._store, project=self._project)

    def __repr__(self) -> str:
        flag = " initial" if self.initial else ""
        return f"Event({self.type} {self.cluster}/{self.resource} {self.namespace}/{self.name}{flag})"

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return (self.type, self.cluster, self.resource, self.namespace, self.name, self.initial) == (
            other.type, other.cluster, other.resource, other.namespace, other.name, other.initial)

    __hash__ = None  # type: ignore[assignment]
