"""`Subscription`: one subscriber's bounded, ordered view of an informer's events.

Why a queue per subscriber: a slow subscriber must never block the watch or the other
subscribers (kube-rs' shared streams block everyone; client-go's listeners buffer without bound).
The informer only ever calls the non-blocking `_offer`; the subscriber pulls at its own pace.

When a subscriber falls `maxsize` events behind, its queue is emptied and replaced by a single
`RESYNC` event: the subscriber is told it missed changes, and once it has read that signal it gets
the current state instead of the lost history: a `deleted` event for every object deleted (or, for
a narrowed subscription, moved out of its scope) while it was behind, then an `added` (``initial=True``) event for every object now in scope. Nothing is lost
silently; level-triggered consumers (controllers) end up with every key that needs a look.

Big sets of synthetic events (the initial list, a late subscriber's replay, a resync snapshot)
are queued as one lazy batch of keys, not as one event each: they cost one queue slot, never
overflow the queue, and an event's object is read from the store only if the subscriber looks at
it (most controllers only need the key). Reading such a batch, `get()` yields to the event loop
every `YIELD_EVERY` events, so a 10,000-object replay does not stall the process's other tasks.

A subscription of a narrower scope served by a broader informer has a `predicate`: events are
translated at offer time (entering the scope reads as `added`, leaving it as `deleted`); one of a
metadata-only scope served by a full informer has a `project`ion: its events' objects read as
``PartialObjectMetadata``.

A subscriber whose handling is synchronous and cheap (a controller only turns an event into a key
for its work queue) may give a `sink`: a live event is then handed to it at once, in the
informer's task, whenever nothing is queued before it, saving the task switch per event; queued
items (batches, and events behind them) still wait for the subscriber's own reading, so the order
holds. A sink that raises is logged; the event counts as delivered.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from kubeloop.cache._entry import Key
from kubeloop.cache._frozen import FrozenDict
from kubeloop.cache._informer_event import Event
from kubeloop.cache._store import Store
from kubeloop.meta import ADDED, DELETED, MODIFIED, RESYNC

__all__ = ["Subscription", "SubscriptionClosed"]

Predicate = Callable[[Mapping[str, Any]], bool]
Project = Callable[[FrozenDict], FrozenDict]
Sink = Callable[[Event], None]

log = logging.getLogger("kubeloop.cache")

YIELD_EVERY = 64
"""Events `Subscription.get` returns in a row without waiting before it yields to the event loop
once (a 10,000-object replay otherwise holds the loop for ~20 ms)."""


class SubscriptionClosed(Exception):
    """`get()` on a subscription that was closed, or whose informer stopped, once it is drained."""


class _Batch:
    """Synthetic `added` events for these keys, resolved from the store when read."""

    __slots__ = ("initial", "keys", "pos")

    def __init__(self, keys: Sequence[Key], initial: bool) -> None:
        self.keys = keys
        self.pos = 0
        self.initial = initial


class _Snapshot:
    """Ready-made events of a resync (deletes missed while behind): one slot, not live events."""

    __slots__ = ("events", "pos")

    def __init__(self, events: list[Event]) -> None:
        self.events = events
        self.pos = 0


class _Resync:
    """Queue marker: the subscriber overflowed; the snapshot is taken when it reads this."""

    __slots__ = ()


_RESYNC = _Resync()


class Subscription:
    """An ordered, bounded stream of `Event`s; iterate it (``async for event in sub``) or `get()`."""

    def __init__(
        self,
        store: Store,
        cluster: str,
        resource: str,
        *,
        maxsize: int = 1024,
        predicate: Predicate | None = None,
        name: str = "",
        on_close: Callable[[Subscription], None] | None = None,
        sink: Sink | None = None,
        project: Project | None = None,
    ) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self.name = name
        self.cluster = cluster
        self.resource = resource
        self.overflows = 0  # times this subscriber fell behind and was resynced
        self.delivered = 0
        self._store = store
        self._predicate = predicate
        self._project = project
        self._queue: deque[Event | _Batch | _Snapshot | _Resync] = deque()
        self._live = 0  # Events in the queue (batches and markers do not count against maxsize)
        self._overflowed = False
        self._gone: dict[Key, FrozenDict | None] = {}
        self._waiter: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ended = False  # the informer stopped: deliver what is queued, then end
        self._closed = False  # closed by the subscriber: end now
        self._on_close = on_close
        self._sink = sink
        self._unyielded = 0  # events `get` returned since it last waited or yielded

    # ------------------------------------------------------------------ informer side

    def _wake(self) -> None:
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    def _offer(self, ev: Event) -> None:
        """Queue one live event (never blocks; overflows into a resync)."""
        if self._closed:
            return
        if self._predicate is not None:
            narrowed = self._narrow(ev)
            if narrowed is None:
                return
            ev = narrowed
        if self._project is not None:
            ev = ev.projected(self._project)
        if self._overflowed:
            self._note_dropped(ev)
            return
        sink = self._sink
        if sink is not None and not self._queue:
            self.delivered += 1
            try:
                sink(ev)
            except Exception:
                log.exception("%s: subscriber failed on %s %s/%s", self.name, ev.type, ev.namespace, ev.name)
            return
        if self._live >= self.maxsize:
            self._overflow()
            self._note_dropped(ev)
            return
        self._queue.append(ev)
        self._live += 1
        self._wake()

    def _offer_batch(self, keys: Sequence[Key], *, initial: bool) -> None:
        """Queue synthetic `added` events for `keys` (one slot, resolved lazily)."""
        if self._closed or self._overflowed or not keys:
            return  # an overflowed subscriber gets the whole state on resync anyway
        keys = self._in_scope(keys)
        if keys:
            self._queue.append(_Batch(keys, initial))
            self._wake()

    def _in_scope(self, keys: Sequence[Key]) -> Sequence[Key]:
        """The keys whose object is in this subscription's scope now (all of them without a predicate).

        Decided when the batch is queued, not when it is read: an object that leaves the scope
        afterwards then reads as added-then-deleted, one that enters it as added once.
        """
        pred = self._predicate
        if pred is None:
            return keys
        store = self._store
        out: list[Key] = []
        for ns, name in keys:
            view = store.get(name, ns)
            if view is not None and pred(view):
                out.append((ns, name))
        return out

    def _holds(self, store: Store, ns: str, name: str) -> bool:
        """True if the object is in the store and, for a narrowed subscription, in its scope: an
        object that left the scope while the subscriber was behind is still in a broad informer's
        store, and must read as deleted all the same."""
        if self._predicate is None:
            return (ns, name) in store
        view = store.get(name, ns)
        return view is not None and self._predicate(view)

    def _end(self) -> None:
        """The informer stopped: what is queued is still delivered, then iteration ends."""
        self._ended = True
        self._wake()

    def _narrow(self, ev: Event) -> Event | None:
        p = self._predicate
        assert p is not None
        t = ev.type
        if t == ADDED:
            new = ev.new
            return ev if new is not None and p(new) else None
        if t == DELETED:
            old = ev.old
            return ev if old is not None and p(old) else None
        if t == MODIFIED:
            old, new = ev.old, ev.new
            was = old is not None and p(old)
            now = new is not None and p(new)
            if was and now:
                return ev
            if now:
                return ev.with_type(ADDED)  # moved into the narrower scope
            if was:
                return ev.with_type(DELETED)  # moved out of it
            return None
        return ev

    def _note_dropped(self, ev: Event | _Batch | _Snapshot | _Resync) -> None:
        if isinstance(ev, Event):
            if ev.type == DELETED:
                self._gone[(ev.namespace, ev.name)] = ev.old
            elif ev.type != RESYNC:
                self._gone.pop((ev.namespace, ev.name), None)

    def _note_queue_dropped(self) -> None:
        """Remember what every unread queued event said, before the queue is thrown away."""
        for item in self._queue:
            if isinstance(item, _Snapshot):
                for ev in item.events[item.pos:]:
                    self._note_dropped(ev)
            else:
                self._note_dropped(item)

    def _overflow(self) -> None:
        self.overflows += 1
        self._note_queue_dropped()
        self._queue.clear()
        self._live = 0
        self._queue.append(_RESYNC)
        self._overflowed = True
        self._wake()

    def _rehome(self, store: Store, predicate: Predicate | None, project: Project | None,
                on_close: Callable[[Subscription], None]) -> None:
        """Move to another informer's store (a broader informer took the scope over).

        The two watches are at different points of history, so the move reads as a resync: every
        object this subscriber may know of is remembered, the queue is replaced by the `RESYNC`
        marker, and reading it yields deletes for what the new store does not hold in scope and
        the new store's objects as added.
        """
        old_store, old_pred = self._store, self._predicate
        self._note_queue_dropped()
        for ns, name in old_store.keys():
            view = old_store.get(name, ns)
            if view is not None and (old_pred is None or old_pred(view)):
                self._gone.setdefault((ns, name), view)
        self._queue.clear()
        self._live = 0
        self._queue.append(_RESYNC)
        self._overflowed = True
        if self._on_close is not None:
            old_close, self._on_close = self._on_close, None
            old_close(self)  # off the old informer's list
        self._on_close = on_close
        self._store = store
        self._predicate = predicate
        self._project = project
        self._wake()

    # ------------------------------------------------------------------ subscriber side

    @property
    def closed(self) -> bool:
        """True once closed by the subscriber or ended by the informer."""
        return self._closed or self._ended

    def pending(self) -> int:
        """Events queued (a lazy batch counts for what is left of it)."""
        n = 0
        for item in self._queue:
            if isinstance(item, _Batch):
                n += len(item.keys) - item.pos
            elif isinstance(item, _Snapshot):
                n += len(item.events) - item.pos
            else:
                n += 1
        return n

    def get_nowait(self) -> Event | None:
        """The next event, or None if none is queued right now."""
        q = self._queue
        store = self._store
        while q:
            item = q[0]
            if type(item) is Event:
                q.popleft()
                self._live -= 1
                self.delivered += 1
                return item
            if type(item) is _Batch:
                keys = item.keys
                while item.pos < len(keys):
                    ns, name = keys[item.pos]
                    item.pos += 1
                    if (ns, name) not in store:
                        continue  # deleted since: its delete event is further down the queue
                    self.delivered += 1
                    return Event(ADDED, self.cluster, self.resource, ns, name, None, initial=item.initial,
                                 store=store, project=self._project)
                q.popleft()
                continue
            if type(item) is _Snapshot:
                if item.pos < len(item.events):
                    item.pos += 1
                    self.delivered += 1
                    return item.events[item.pos - 1]
                q.popleft()
                continue
            # the resync marker: take the snapshot now
            q.popleft()
            self._overflowed = False
            gone, self._gone = self._gone, {}
            deletes = [Event(DELETED, self.cluster, self.resource, ns, name, None, old=old, project=self._project)
                       for (ns, name), old in gone.items() if not self._holds(store, ns, name)]
            if deletes:
                q.append(_Snapshot(deletes))
            q.append(_Batch(self._in_scope(store.key_snapshot()), True))
            self.delivered += 1
            return Event(RESYNC, self.cluster, self.resource, "", "", None)
        return None

    async def get(self) -> Event:
        """The next event; raises `SubscriptionClosed` once closed (or ended and drained).

        A subscriber reading a long queue (a replay of thousands of objects) hands the loop over
        every `YIELD_EVERY` events it got without waiting, so other tasks (the informer itself,
        `wait_synced`, a lease renewal) do not stall behind it; no event is taken before that.
        """
        while True:
            if self._closed:
                raise SubscriptionClosed(self.name or "subscription closed")
            if self._unyielded >= YIELD_EVERY:
                self._unyielded = 0
                await asyncio.sleep(0)
                continue
            ev = self.get_nowait()
            if ev is not None:
                self._unyielded += 1
                return ev
            self._unyielded = 0
            if self._ended:
                raise SubscriptionClosed(self.name or "informer stopped")
            loop = self._loop
            if loop is None:  # looked up once: on Python < 3.12 each lookup is a getpid() system call
                loop = self._loop = asyncio.get_running_loop()
            self._waiter = loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def drain(self, limit: int | None = None) -> list[Event]:
        """Every event queued right now (at most `limit`), without waiting."""
        out: list[Event] = []
        while limit is None or len(out) < limit:
            ev = self.get_nowait()
            if ev is None:
                break
            out.append(ev)
        return out

    def __aiter__(self) -> AsyncIterator[Event]:
        return self

    async def __anext__(self) -> Event:
        try:
            return await self.get()
        except SubscriptionClosed:
            raise StopAsyncIteration from None

    def close(self) -> None:
        """Stop receiving events (queued ones are discarded); idempotent."""
        if self._closed:
            return
        self._closed = True
        self._queue.clear()
        self._gone.clear()
        self._live = 0
        self._wake()
        if self._on_close is not None:
            cb, self._on_close = self._on_close, None
            cb(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Subscription({self.name or self.resource}, pending={self.pending()}, overflows={self.overflows})"
