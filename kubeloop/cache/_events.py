"""What an informer tells its subscribers: one `Event` per change, in order.

Principle 1 (level-triggered): subscribers should mostly use the key (cluster, namespace, name)
and read current state from the store; `old`/`new` are there for predicates (generation changed,
labels changed, ...). Both are read-only views; `old` is decoded only if read.

`initial` is True for events that do not stand for a live change: the initial list, the replay
a late subscriber gets, and the snapshot after a resync. Controllers give those low priority.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubeloop.meta import ADDED, DELETED

if TYPE_CHECKING:
    from kubeloop.cache._entry import Change
    from kubeloop.cache._frozen import FrozenDict
    from kubeloop.cache._store import Store

__all__ = ["Event"]

# Event types are `kubeloop.meta.EventType`: ADDED, MODIFIED, DELETED, and RESYNC, sent alone when
# a subscriber's queue overflowed: events were dropped, the current state follows (`initial=True`
# adds for everything in scope, deletes for what vanished meanwhile).


class Event:
    """One change seen by an informer: `type`, the key, `old` and `new` read-only views."""

    __slots__ = ("_change", "_new", "_old", "_store", "cluster", "initial", "name", "namespace", "resource", "type")

    def __init__(
        self,
        type: str,
        cluster: str,
        resource: str,
        namespace: str,
        name: str,
        new: FrozenDict | None,
        *,
        old: FrozenDict | None = None,
        change: Change | None = None,
        initial: bool = False,
        store: Store | None = None,
    ) -> None:
        self.type = type
        self.cluster = cluster
        self.resource = resource
        self.namespace = namespace
        self.name = name
        self._new = new
        self._store = store  # set: `new` is read from the store on first use (replays, snapshots)
        self._old = old
        self._change = change
        self.initial = initial

    @property
    def new(self) -> FrozenDict | None:
        """The object after the change (None for a delete)."""
        st = self._store
        if st is not None:
            self._new = st.get(self.name, self.namespace)
            self._store = None
        return self._new

    @property
    def old(self) -> FrozenDict | None:
        """The object before the change (None for an add); decoded on first read."""
        c = self._change
        if c is not None:
            self._old = c.old
            self._change = None
        return self._old

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
        ev = Event(type, self.cluster, self.resource, self.namespace, self.name,
                   None if type == DELETED else self._new, old=self._old, change=self._change,
                   initial=self.initial, store=None if type == DELETED else self._store)
        if type == DELETED:
            ev._old = self.old  # the last state inside the scope
            ev._change = None
        elif type == ADDED:
            ev._old, ev._change = None, None
        return ev

    def __repr__(self) -> str:
        flag = " initial" if self.initial else ""
        return f"Event({self.type} {self.cluster}/{self.resource} {self.namespace}/{self.name}{flag})"

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return (self.type, self.cluster, self.resource, self.namespace, self.name, self.initial) == (
            other.type, other.cluster, other.resource, other.namespace, other.name, other.initial)

    __hash__ = None  # type: ignore[assignment]
