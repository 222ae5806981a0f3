"""Read your own writes: the controller's memory of what it just wrote.

Two problems every cache-based controller has, and what this module does about them:

1. *Stale reads.* A reconcile writes an object; the next reconcile of that key starts before the
   watch event of the write reached the cache and reads the older version (then writes again,
   or gets a Conflict). The tracker remembers each write (the resourceVersion the server
   returned, and the object) per request, so the controller can wait, briefly and before the
   next reconcile of that request starts, until its caches have caught up with those writes
   (``pending``); a read inside a reconcile of an object it wrote a moment ago gets the written
   object when the cache is still older (``overlay``).

2. *Self-triggering.* The watch event caused by a reconcile's own write to the object it
   reconciles (its status, finalizers, labels) would enqueue another reconcile although nothing
   else changed. An event is the controller's own exactly when its
   new resourceVersion is the one a write returned **and** its old resourceVersion is the one
   the object had just before that write (as far as the controller knew). A write by anyone
   else in between makes the old resourceVersion differ, so that event is delivered. Which own
   events are dropped is the ``suppress`` callback's decision: a run drops only writes to
   the reconciled object itself by default, so a child a reconcile created, changed or deleted
   reconciles its owner again as in controller-runtime (see `ControllerSpec.suppress_own_writes`).

   The watch event can arrive before the write's HTTP response does. Events for an object with
   a write in flight are therefore held (``on_event`` takes a ``deliver`` callback) and decided
   when the write returns; a failed write releases them unchanged.

resourceVersions are compared as integers (etcd revisions; Kubernetes documents them as
comparable since 1.35); a non-numeric one is only ever compared for equality. `WriteTracker` is
pure, synchronous code; `ReadYourWrites` is its thin asyncio shell and the run's one seam to it:
``on_event`` screens a source's events, ``client`` gives the client a reconcile writes through
(with the write hook, `kubeloop.client.Client.with_write_hook`, so every write path is seen),
``wait`` runs before the next reconcile and ``read`` overlays reads. Both halves stay in this one module (about
450 lines) because they are one concept: whoever changes how a write is recognised must see how it
is recorded and awaited.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubeloop import metrics
from kubeloop.cache import Event
from kubeloop.client import Client, WriteDone, WriteHook, WriteRequest
from kubeloop.controller._logs import current_request
from kubeloop.controller._request import Request
from kubeloop.controller._spec import SuppressOwnWrites
from kubeloop.meta import ADDED, DELETED, RESYNC, resource_version_of, rv_at_least, rv_newer, uid_of

ObjectKey = tuple[str, str, str, str, str]
"""(cluster, group, kind, namespace, name): one object, whatever version or informer shows it."""

DEFAULT_TTL = 30.0

Deliver = Callable[[], None]


def _discard(index: dict[Any, list[Write]], key: Hashable, w: Write) -> None:
    """Remove `w` from `index[key]`, dropping the key when its list empties."""
    writes = index.get(key)
    if writes is None:
        return
    with contextlib.suppress(ValueError):
        writes.remove(w)
    if not writes:
        del index[key]


@dataclass(slots=True, eq=False)
class Write:
    """One write the controller made (or is making) and has not yet seen come back."""

    key: ObjectKey
    prior_rv: str | None  # the object's resourceVersion just before the write (None: absent)
    owner: Hashable | None  # the request whose reconcile wrote it
    at: float
    in_flight: bool = True
    deleted: bool = False  # the write removed the object
    rv: str | None = None  # the resourceVersion the write returned
    obj: Mapping[str, Any] | None = None  # what the server returned
    uid: str | None = None
    seen: bool = False
    held: list[tuple[str | None, str | None, Deliver]] = field(default_factory=list)


class WriteTracker:
    """Remembers the controller's recent writes; see the module docstring.

    A write ends when the cache shows its resourceVersion (or a newer one), or after ``ttl``
    seconds (a write whose object no informer of the controller shows is never seen).
    """

    def __init__(self, *, ttl: float = DEFAULT_TTL, clock: Callable[[], float] = time.monotonic,
                 on_own_event: Callable[[], None] | None = None,
                 suppress: Callable[[Write], bool] | None = None) -> None:
        self.ttl = ttl
        self._suppress = suppress  # None: every own event is dropped
        self._on_own_event = on_own_event
        self._clock = clock
        self._keys: dict[ObjectKey, list[Write]] = {}
        self._order: OrderedDict[int, Write] = OrderedDict()  # live writes, oldest first
        self._by_owner: dict[Hashable, list[Write]] = {}
        self._seq = 0
        self._listeners: list[Callable[[], None]] = []
        self.own_events_skipped = 0

    # ------------------------------------------------------------------ writing

    def prior_rv(self, key: ObjectKey, cached_rv: str | None) -> str | None:
        """The resourceVersion ``key`` had as far as we know: our latest write's, if newer than the cache's."""
        writes = self._keys.get(key)
        if writes:
            for w in reversed(writes):
                if not w.in_flight and not w.deleted and w.rv is not None:
                    return w.rv if cached_rv is None or rv_newer(w.rv, cached_rv) else cached_rv
        return cached_rv

    def begin(self, key: ObjectKey, prior_rv: str | None, *, owner: Hashable | None = None,
              uid: str | None = None) -> Write:
        """Announce a write about to be sent; events of ``key`` are held until it finishes."""
        now = self._clock()
        self._expire(now)
        w = Write(key, prior_rv, owner, now, uid=uid)
        self._keys.setdefault(key, []).append(w)
        self._seq += 1
        self._order[self._seq] = w
        if owner is not None:
            self._by_owner.setdefault(owner, []).append(w)
        return w

    def finish(self, w: Write, written: Mapping[str, Any] | None) -> None:
        """The write returned ``written`` (the server's answer; a Status or None for a deletion)."""
        w.in_flight = False
        meta = written.get("metadata") if written is not None else None
        if written is not None and written.get("kind") != "Status" and isinstance(meta, Mapping) and meta.get("name"):
            w.rv = meta.get("resourceVersion") or None
            w.obj = written
            w.uid = meta.get("uid") or w.uid
            w.deleted = False
            if w.rv is not None and w.rv == w.prior_rv:
                self._remove(w)  # a no-op: no event will follow
        else:
            w.deleted = True
        held, w.held = w.held, []
        for old_rv, new_rv, deliver in held:
            self.on_event(w.key, old_rv, new_rv, deliver)

    def fail(self, w: Write) -> None:
        """The write failed: forget it and deliver the events held meanwhile."""
        w.in_flight = False
        self._remove(w)
        held, w.held = w.held, []
        for old_rv, new_rv, deliver in held:
            self.on_event(w.key, old_rv, new_rv, deliver)

    # ------------------------------------------------------------------ events

    def tracks(self, key: ObjectKey) -> bool:
        """True if a write of ``key`` is in flight or not yet seen (its events must go through `on_event`)."""
        return key in self._keys

    def on_event(self, key: ObjectKey, old_rv: str | None, new_rv: str | None, deliver: Deliver) -> None:
        """One watch event of ``key`` (None rv: absent before / deleted after).

        ``deliver()`` is called now if the event is someone else's, never if it was caused only by
        one of our writes, and later if a write of ``key`` is still in flight.
        """
        writes = self._keys.get(key)
        if not writes:
            deliver()
            return
        for w in writes:
            if w.in_flight:
                w.held.append((old_rv, new_rv, deliver))
                return
        own: Write | None = None
        if new_rv is None:  # the object is gone: every finished write of it is history
            done = [w for w in writes if not w.in_flight]
            for w in done:
                self._remove(w)
            if done:
                self._notify()
        else:
            for w in writes:
                if w.rv == new_rv and w.prior_rv == old_rv:
                    own = w
                    break
            self.on_observed(key, new_rv)
        if own is not None and (self._suppress is None or self._suppress(own)):
            self.own_events_skipped += 1
            if self._on_own_event is not None:
                self._on_own_event()
        else:
            deliver()

    def on_observed(self, key: ObjectKey, rv: str | None) -> None:
        """The cache now holds ``key`` at ``rv``: every write it already shows is seen."""
        writes = self._keys.get(key)
        if not writes or rv is None:
            return
        done = [w for w in writes if not w.in_flight and not w.deleted and w.rv is not None and rv_at_least(rv, w.rv)]
        for w in done:
            self._remove(w)
        if done:
            self._notify()

    def _remove(self, w: Write) -> None:
        if w.seen:
            return
        w.seen = True
        _discard(self._keys, w.key, w)
        if w.owner is not None:
            _discard(self._by_owner, w.owner, w)

    # ------------------------------------------------------------------ reads

    def pending(self, owner: Hashable) -> list[Write]:
        """Writes made by ``owner``'s reconciles that the cache does not show yet (deletions excluded)."""
        if owner not in self._by_owner:
            return []
        self._expire(self._clock())
        return [w for w in self._by_owner.get(owner, ()) if not w.deleted and not w.in_flight and w.rv is not None]

    def release(self, writes: list[Write]) -> None:
        """Stop waiting for these writes (the cache did not show them in time); they stay in the event filter."""
        for w in writes:
            if w.owner is not None:
                ws = self._by_owner.get(w.owner)
                if ws is not None and w in ws:
                    ws.remove(w)
                    if not ws:
                        del self._by_owner[w.owner]

    def overlay(self, key: ObjectKey, cached: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """What a reader should see for ``key``: the cached object, or our newer written version.

        A deletion we made hides the cached object with the same uid.
        """
        writes = self._keys.get(key)
        if not writes:
            return cached
        for w in reversed(writes):
            if w.in_flight:
                continue
            if w.deleted:
                if cached is not None and w.uid and uid_of(cached) == w.uid:
                    return None
                return cached
            if cached is None or rv_newer(w.rv, resource_version_of(cached)):
                return w.obj
            return cached
        return cached

    def latest(self, cluster: str, group: str, kind: str) -> dict[ObjectKey, Write]:
        """The newest finished write of each object of one kind on one cluster (for list overlays)."""
        out: dict[ObjectKey, Write] = {}
        for key, writes in self._keys.items():
            if key[0] != cluster or key[1] != group or key[2] != kind:
                continue
            for w in reversed(writes):
                if not w.in_flight:
                    out[key] = w
                    break
        return out

    # ------------------------------------------------------------------ housekeeping

    def add_listener(self, fn: Callable[[], None]) -> None:
        """Call ``fn()`` whenever some write becomes seen (the controller wakes its waiters)."""
        self._listeners.append(fn)

    def _notify(self) -> None:
        for fn in self._listeners:
            fn()

    def _expire(self, now: float) -> None:
        order = self._order
        limit = now - self.ttl
        while order:
            seq, w = next(iter(order.items()))
            if not w.seen and (w.at > limit or w.in_flight):
                break
            del order[seq]
            self._remove(w)

    def __len__(self) -> int:
        """Writes not yet seen (in flight included)."""
        return sum(len(ws) for ws in self._keys.values())


# ---------------------------------------------------------------------- the asyncio shell


class CachedObjects(Protocol):
    """What the tracker needs to know of the controller's caches."""

    def cached(self, key: ObjectKey) -> Mapping[str, Any] | None:
        """The cached object of ``key``, or None."""
        ...

    def observable(self, key: ObjectKey, obj: Mapping[str, Any] | None) -> bool:
        """True if some cache of the controller would show ``obj`` written at ``key``."""
        ...

    def is_primary(self, cluster: str, group: str, kind: str) -> bool:
        """Whether (group, kind) is the controller's primary kind on ``cluster``."""
        ...


def _current_owner() -> Request | None:
    """The request whose reconcile runs in this task: the owner of the writes it makes."""
    current = current_request.get()
    return current[1] if current is not None else None


def _written_objects(target: WriteRequest, result: Mapping[str, Any]) -> Iterator[tuple[ObjectKey, Mapping[str, Any]]]:
    """(key without cluster, object) of what a write known only from its answer changed."""
    kind = result.get("kind") or ""
    items = result.get("items") if kind.endswith("List") else None
    objs = items if isinstance(items, list) else [result]
    api_version = result.get("apiVersion") or ""
    res = target.resource
    for obj in objs:
        meta = obj.get("metadata") if isinstance(obj, Mapping) else None
        if not isinstance(meta, Mapping) or not meta.get("name") or obj.get("kind") == "Status":
            continue
        if res is not None:
            group, okind = res.group, res.kind
        else:
            group = (obj.get("apiVersion") or api_version).rpartition("/")[0]
            okind = obj.get("kind") or kind.removesuffix("List")
        yield ("", group, okind, meta.get("namespace") or "", str(meta["name"])), obj


class ReadYourWrites:
    """A controller run's read-your-writes (see the module docstring): the `WriteTracker` over the
    run's ``caches``, and the four calls the run makes (`on_event`, `client`, `wait`, `read`).

    ``suppress``: which own events are dropped (`kubeloop.controller.SuppressOwnWrites`; on its own,
    "all"). ``on_own_event()`` is called for each one dropped (the controller's metric).
    """

    def __init__(self, controller: str, caches: CachedObjects | None = None, *, timeout: float,
                 log: logging.Logger, suppress: SuppressOwnWrites = "all",
                 on_own_event: Callable[[], None] | None = None) -> None:
        self.controller = controller
        self.timeout = timeout
        self.log = log
        self.caches = caches
        self.tracker = WriteTracker(on_own_event=on_own_event,
                                    suppress=None if suppress == "all" else self._reconciled_object)
        self.tracker.add_listener(self._wake)
        self._waiters: list[asyncio.Future[None]] = []
        self._clients: dict[str, Client] = {}

    def _reconciled_object(self, w: Write) -> bool:
        """Is own write ``w`` one to the object its reconcile was about (then its event is dropped)?"""
        req, caches = w.owner, self.caches
        if not isinstance(req, Request) or caches is None:
            return False
        cluster, group, kind, namespace, name = w.key
        return (cluster, namespace, name) == (req.cluster, req.namespace, req.name) and \
            caches.is_primary(cluster, group, kind)

    # ------------------------------------------------------------------ events

    def on_event(self, group: str, kind: str, deliver: Callable[[Event], None], ev: Event) -> None:
        """One change seen by a source of (``group``, ``kind``): ``deliver(ev)`` now if it is someone
        else's, later if a write of the object is in flight, never if only our own write caused it
        (as ``suppress`` says). A resync is no change: never delivered."""
        if ev.type == RESYNC:
            return
        key: ObjectKey = (ev.cluster, group, kind, ev.namespace, ev.name)
        tracker = self.tracker
        if not tracker.tracks(key):
            deliver(ev)
            return
        old_rv = resource_version_of(ev.old) if ev.type != ADDED else None
        new_rv = resource_version_of(ev.new) if ev.type != DELETED else None
        tracker.on_event(key, old_rv, new_rv, functools.partial(deliver, ev))

    def _cached(self, key: ObjectKey) -> Mapping[str, Any] | None:
        return self.caches.cached(key) if self.caches is not None else None

    def read(self, key: ObjectKey) -> Mapping[str, Any] | None:
        """The cached object of ``key``, or our newer write of it."""
        return self.tracker.overlay(key, self._cached(key))

    # ------------------------------------------------------------------ writes (the client hook)

    def client(self, cluster: str, client_of: Callable[[str], Client]) -> Client:
        """``client_of(cluster)`` with the write hook: what a reconcile on ``cluster`` writes through
        (made once per cluster; the hook reads the writing request from the reconcile's context)."""
        tracked = self._clients.get(cluster)
        if tracked is None:
            tracked = self._clients[cluster] = client_of(cluster).with_write_hook(self.hook(cluster, _current_owner))
        return tracked

    def forget_cluster(self, cluster: str) -> None:
        """``cluster`` was forgotten: a later `client` call for it hooks its new client."""
        self._clients.pop(cluster, None)

    def hook(self, cluster: str, owner: Callable[[], Hashable | None]) -> WriteHook:
        """A `kubeloop.client.WriteHook` recording the writes made on ``cluster``.

        ``owner()`` names the request whose reconcile is writing (the run reads it from the
        reconcile's context variable, so one hooked client per cluster serves every reconcile).
        """

        def before(target: WriteRequest) -> WriteDone | None:
            if target.dry_run or target.subresource not in (None, "status"):
                return None  # nothing changes / another object (a Scale) comes back
            res = target.resource
            if res is None or not target.name:
                return functools.partial(self._record_after, cluster, owner(), target)
            key: ObjectKey = (cluster, res.group, res.kind, target.namespace, target.name)
            cached = self._cached(key)
            tracker = self.tracker
            w = tracker.begin(key, tracker.prior_rv(key, resource_version_of(cached)), owner=owner(), uid=uid_of(cached))

            def done(result: dict[str, Any] | None) -> None:
                if result is None:
                    tracker.fail(w)
                else:
                    tracker.finish(w, result)

            return done

        return before

    def _record_after(self, cluster: str, owner: Hashable | None, target: WriteRequest,
                      result: Mapping[str, Any] | None) -> None:
        """A write whose object was known only from the answer (generateName, collections, request_json)."""
        if result is None:
            return
        tracker = self.tracker
        for (_, group, kind, ns, name), obj in _written_objects(target, result):
            key: ObjectKey = (cluster, group, kind, ns, name)
            cached = self._cached(key)
            w = tracker.begin(key, tracker.prior_rv(key, resource_version_of(cached)), owner=owner,
                              uid=uid_of(obj) or uid_of(cached))
            gone = target.method == "DELETE" and not (obj.get("metadata") or {}).get("deletionTimestamp")
            tracker.finish(w, None if gone else obj)

    # ------------------------------------------------------------------ waiting

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for f in waiters:
            if not f.done():
                f.set_result(None)

    def _outstanding(self, owner: Hashable) -> list[Write]:
        tracker, caches = self.tracker, self.caches
        out = []
        for w in tracker.pending(owner):
            if caches is None or not caches.observable(w.key, w.obj):
                continue
            if rv_at_least(resource_version_of(caches.cached(w.key)), w.rv):
                tracker.on_observed(w.key, w.rv)
                continue
            out.append(w)
        return out

    async def wait(self, owner: Hashable) -> None:
        """Wait (up to ``timeout``) until the caches show ``owner``'s earlier writes they can show."""
        outstanding = self._outstanding(owner)
        if not outstanding:
            return
        deadline = time.monotonic() + self.timeout
        loop = asyncio.get_running_loop()
        while True:
            outstanding = [w for w in outstanding if not w.seen]
            if not outstanding:
                metrics.READ_YOUR_WRITES_WAITS.labels(self.controller, "caught_up").inc()
                return
            left = deadline - time.monotonic()
            if left <= 0:
                metrics.READ_YOUR_WRITES_WAITS.labels(self.controller, "timeout").inc()
                self.log.debug("%s: cache did not show %d own write(s) of %s within %.1fs", self.controller,
                               len(outstanding), owner, self.timeout)
                self.tracker.release(outstanding)
                return
            fut: asyncio.Future[None] = loop.create_future()
            self._waiters.append(fut)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(fut, left)
