"""`Informer`: watcher -> transform -> filter -> store -> subscribers, for one scope.

The informer runs the watcher's events through the transform and the filter into the `Store`
and then offers each resulting change to every subscriber, in that order, in one task:

- `Init` / `InitApply` / `InitDone`: a (re)list is built object by object in a fresh side store
  (each object encoded as it arrives) and swapped in whole at `InitDone`: readers never see half a
  list, and no list of thousands of decoded objects is ever held. The first list makes the
  informer *synced*; a later one (after a 410) reports its difference, objects that vanished
  meanwhile as deletes.
- `Apply` / `Delete`: one change. An object the filter rejects is removed as if deleted.

Deferred compaction: a listed object is stored in the codec's cheap form (exact-size JSON, not
compressed), so the list costs little more than decoding it (large objects are compressed as they
arrive, where that costs a fraction of decoding them and saves the list's peak: see
`kubeloop.cache._store.LOAD_COMPACT_SIZE`; so is every object once `load_cheap_limit` bytes of a
list wait uncompressed, which bounds a long list's peak); once the list is swapped in, a compactor
task (a child of `run()`) compresses it in small batches that yield to the event loop, and then hands
freed heap back to the OS (glibc `malloc_trim`). Reads are correct throughout; `compacted()` waits
for the end (benchmarks measure memory after it). An object a watch event changes is held in the
cheap form too and compressed once it has stayed unchanged for `compact_delay` seconds, or up to a
quarter more (writes falling due are taken in batches, so a busy informer wakes a few times a
second, not once per write). This write-back compaction means an object that changes again
meanwhile, as busy objects do, is never compressed for a version nobody keeps, and the reconcile
that usually reads it next decodes JSON, not a compressed form.
(Written views are not kept decoded: in a measurement that kept each newest view in the store's
LRU, the views outlived the young GC generation and the collector's extra work cost more than
the decodes saved.)

Subscribers (`subscribe()`) each have a bounded queue (see `kubeloop.cache._subscription`): a slow
one never slows the watch or the others. Readiness (`ready`, `reason`) reflects the watcher's
state: a kind that is not served yet (CRD missing) or a 403 keeps the informer not ready with a
reason naming the cause, and `wait_synced()` raises `InformerNotReady` with that reason instead of
timing out silently.

This module is over 450 lines because the informer's parts (event handling, the relist swap,
compaction scheduling, readiness) all act on the same state in the same task; each part is a
short method.

Structured concurrency: `run()` is the informer's whole life; the owner (a `SharedCache`, or
``async with informer:``) runs it in its own TaskGroup. Lifecycle, as on the `Manager`: `stop()`
asks and returns at once, ``await close()`` stops and waits for `run()` to return.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from types import TracebackType
from typing import Any

from kubeloop import metrics
from kubeloop.cache._codec import Codec
from kubeloop.cache._entry import Key
from kubeloop.cache._events import Event
from kubeloop.cache._frozen import unwrap
from kubeloop.cache._index import IndexFunc
from kubeloop.cache._reader import CacheReader
from kubeloop.cache._store import LOAD_CHEAP_LIMIT, IndexFunctionError, Store
from kubeloop.cache._subscription import Predicate, Sink, Subscription
from kubeloop.cache._transform import DEFAULT_TRANSFORM, Filter, Transform
from kubeloop.meta import ADDED, DELETED, MODIFIED
from kubeloop.watch import (
    Apply,
    Delete,
    Init,
    InitApply,
    InitDone,
    WatchConfig,
    Watcher,
    WatchSource,
    WatchState,
)

__all__ = ["LIST_PAGE_SIZE", "Informer", "InformerNotReady"]

log = logging.getLogger("kubeloop.cache")

LIST_PAGE_SIZE = 100
"""An informer's LIST `limit` when no `watch_config` is given (the watcher's own default is 500).

A decoded page is transient but costs ~5-10x its JSON in small Python objects; the few that
survive it (keys, entries, labels) pin the allocator's arenas it filled, so the page size sets
how much RSS a list leaves behind: measured on 10,000 Pods, 500-object pages left ~1.1x the
stored JSON size, 100-object pages ~0.55x, and the informer synced no slower (usually faster:
the smaller decoded page stays in cache). Against a distant server more round trips cost more:
pass a `WatchConfig` with a larger `page_size` there.
"""



def _key_and_rv(md: dict[str, Any]) -> tuple[str, str, str | None]:
    """(namespace, name, resourceVersion) of a watched object's metadata."""
    return md.get("namespace") or "", md.get("name") or "", md.get("resourceVersion")

class CacheNotSynced(Exception):
    """A reconcile read a cache (an informer, an index) that has not finished its first list.

    Raised by readers that may be read before they are full (`kubeloop.manager.ManagedInformer`, informer handles);
    a partial cache would answer "not found" or a short list, and the reconcile would act on it.
    The runtime does not count it as an error: it waits (bounded) for ``wait_synced`` and runs
    the reconcile again, so a reconcile never needs to declare which caches it reads.
    """

    def __init__(self, what: str, wait_synced: Callable[[float | None], Awaitable[None]] | None = None) -> None:
        super().__init__(f"{what} has not synced yet")
        self.what = what
        self.wait_synced = wait_synced


class InformerNotReady(TimeoutError):
    """`wait_synced()` gave up; the message says why (e.g. the missing permission)."""


class Informer:
    """One list+watch loop feeding one store and its subscribers (see the module docstring).

    `source` is any `WatchSource` (normally a `kubeloop.cache._source.ClientSource`). `cluster` and
    `resource` only label events, logs and readiness. `transform` defaults to dropping
    `metadata.managedFields`; `filter` decides what is stored at all. Without `watch_config`,
    lists are streamed (``sendInitialEvents``) where the server supports it.
    """

    stuck_after: float = 60.0
    """Seconds the watch may keep failing (no watch healthy for `healthy_watch_duration` since the
    first failure) before the informer reports not ready: a cache that cannot keep up must not
    leave /readyz green while it serves ever older data."""

    def __init__(
        self,
        source: WatchSource,
        *,
        cluster: str = "default",
        resource: str = "",
        transform: Transform | None = DEFAULT_TRANSFORM,
        filter: Filter | None = None,
        watch_config: WatchConfig | None = None,
        codec: Codec | str | None = None,
        queue_size: int = 1024,
        name: str = "",
    ) -> None:
        self.cluster = cluster
        self.resource = resource
        self.name = name or f"{cluster}:{resource}"
        self.transform = transform
        self.filter = filter
        self.queue_size = queue_size
        self._codec = codec
        self.store = Store(codec=codec, defer_writes=True)
        """The store (read it through `reader` or a handle: only the informer writes). A relist swaps
        in a new `Store`: keep the informer or handle, not this object."""
        self.reader = CacheReader(self, cluster, resource)
        """Read-only access that follows the store across relists."""
        if watch_config is None:
            # streaming lists when the server has them (LIST otherwise: see WatchConfig)
            watch_config = WatchConfig(page_size=LIST_PAGE_SIZE, streaming_list=True)
        self.watcher = Watcher(source, watch_config, name=self.name)
        self._subs: list[Subscription] = []
        self._side: Store | None = None  # the (re)list being built, swapped in at InitDone
        self._synced = False
        self._started = False
        self._stop_requested = False
        self._stopped = False
        self._sync_waiters: list[asyncio.Future[None]] = []
        self._index_fns: dict[str, IndexFunc] = {}
        self._broken: dict[Key, str] = {}
        """Objects a transform, filter or index function raised on (kept at their last good
        version), with what raised: they keep the informer not ready until fixed or deleted."""
        self._side_broken: dict[Key, str] = {}  # the same, for the (re)list being built
        self._task: asyncio.Task[None] | None = None
        self._tg: asyncio.TaskGroup | None = None
        self.events_handled = 0
        self.synced_at: float | None = None
        self.compacted_at: float | None = None
        self._compact_wanted = asyncio.Event()  # the store holds objects `compact` should shrink
        self._compact_done = asyncio.Event()  # ... and it has none left (or we stopped)
        self.compact_batch = 64
        """Objects compacted between two yields to the event loop (~1 ms of work for Pods)."""
        self.compact_delay = 2.0
        """Seconds an object changed by a watch event stays in the cheap form before it is compressed
        (up to a quarter more: the compactor takes the writes that fall due in batches)."""
        self.load_cheap_limit: float = LOAD_CHEAP_LIMIT
        """Bytes of listed objects a (re)list holds uncompressed before it compresses the rest as
        they arrive: how far a list's peak may exceed its compacted size (0: compress every listed
        object at once, the lowest peak for the slowest list; ``math.inf``: never; see
        `kubeloop.cache._store.LOAD_CHEAP_LIMIT`)."""
        self._compact_timer: asyncio.TimerHandle | None = None
        self._finished = asyncio.Event()  # run() returned

    # ------------------------------------------------------------------ state

    @property
    def synced(self) -> bool:
        """True once the first list is in the store."""
        return self._synced

    @property
    def stopped(self) -> bool:
        return self._stopped

    @property
    def state(self) -> WatchState:
        """The watcher's state (listing, watching, backing off, forbidden, ...)."""
        return self.watcher.state

    @property
    def ready(self) -> bool:
        """Synced and able to keep up: not stopped, not forbidden, the kind still served, no
        object a user function failed on, the watch not failing for longer than `stuck_after`."""
        if not self._synced or self._stopped or self._broken:
            return False
        if self.watcher.state in (WatchState.FORBIDDEN, WatchState.WAITING_FOR_RESOURCE):
            return False
        return self._stuck_for() is None

    def _stuck_for(self) -> float | None:
        """Seconds the watch has been failing, if longer than `stuck_after` (else None)."""
        m = self.watcher.machine
        since = m.failing_since
        if since is None:
            return None
        try:
            now = asyncio.get_running_loop().time()  # the watcher's clock
        except RuntimeError:
            now = time.monotonic()
        opened = m.watch_open_since
        if opened is not None and m.last_progress is not None and m.last_progress > opened \
                and now - opened >= m.config.healthy_watch_duration:
            return None  # a watch making progress for a while: recovered (cleared when it ends)
        stuck = now - since
        return stuck if stuck > self.stuck_after else None

    @property
    def reason(self) -> str:
        """Why the informer is not ready ("" when it is): for /readyz and logs."""
        if self._stopped:
            return "stopped"
        if self._broken:
            (ns, name), why = next(iter(self._broken.items()))
            more = f" (and {len(self._broken) - 1} more objects)" if len(self._broken) > 1 else ""
            return f"{why} on {ns}/{name}{more}; the cache keeps the last good version"
        state = self.watcher.state
        err = self.watcher.last_error
        msg = err.message if err is not None else ""
        if state is WatchState.FORBIDDEN:
            return f"forbidden (missing RBAC permission): {msg}"
        if state is WatchState.WAITING_FOR_RESOURCE:
            return f"waiting for {self.resource or 'the resource'} to be served (CRD not installed?): {msg}"
        if self._synced:
            stuck = self._stuck_for()
            if stuck is not None:
                return f"watch failing for {stuck:.0f}s (stuck_after={self.stuck_after:g}s; " \
                       f"serving data from before); {self.watcher.describe()}; last error: {self.watcher.last_error}"
            return ""
        if not self._started:
            return "not started"
        if state is WatchState.BACKING_OFF and err is not None:
            return f"initial list failed, retrying: {err}"
        return "initial list in progress"

    async def wait_synced(self, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """Wait for the first list; raise `InformerNotReady` (with `reason`) on timeout or stop."""
        if self._synced:
            return
        if self._stopped:
            raise InformerNotReady(f"{self.name}: stopped before it synced")
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sync_waiters.append(fut)
        try:
            async with asyncio.timeout(timeout):  # awaits `fut` itself: woken in the loop iteration it is set
                await fut
        except TimeoutError:
            if not self._synced:  # (synced in the same loop turn as the deadline: not a timeout)
                raise InformerNotReady(f"{self.name}: not synced after {timeout}s: {self.reason}") from None
        finally:
            if fut in self._sync_waiters:
                self._sync_waiters.remove(fut)
            if not fut.done():
                fut.cancel()
        if not self._synced:
            raise InformerNotReady(f"{self.name}: stopped before it synced")

    def _release_waiters(self) -> None:
        waiters, self._sync_waiters = self._sync_waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    # ------------------------------------------------------------------ subscribers and indexes

    def subscribe(
        self,
        *,
        queue_size: int | None = None,
        replay: bool = True,
        predicate: Predicate | None = None,
        name: str = "",
        sink: Sink | None = None,
    ) -> Subscription:
        """A new subscription; with `replay` it first gets `added` (initial) events for the store.

        `predicate` narrows it to the objects it accepts (entering/leaving read as added/deleted);
        `sink` takes live events synchronously (see `kubeloop.cache._subscription`).
        """
        sub = Subscription(self.store, self.cluster, self.resource, maxsize=queue_size or self.queue_size,
                           predicate=predicate, name=name or self.name, on_close=self._unsubscribe, sink=sink)
        if self._stopped:
            sub._end()
            return sub
        if replay and len(self.store):
            sub._offer_batch(self.store.keys(), initial=True)
        self._subs.append(sub)
        return sub

    def _adopt(self, sub: Subscription, predicate: Predicate | None) -> None:
        """Take over a live subscription of another informer of the same kind (a broader scope
        taking a narrower informer's users over): it resyncs against this store."""
        if sub.closed:
            return
        sub._rehome(self.store, predicate, self._unsubscribe)
        self._subs.append(sub)

    def _unsubscribe(self, sub: Subscription) -> None:
        if sub in self._subs:
            self._subs.remove(sub)

    @property
    def subscriptions(self) -> list[Subscription]:
        return list(self._subs)

    def add_index(self, name: str, fn: IndexFunc) -> None:
        """Register an index (built from the current contents if any); the same (name, fn) twice is
        a no-op so several users of a shared informer may each declare what they need."""
        known = self._index_fns.get(name)
        if known is not None:
            if known == fn:  # the same function (or a `ValueIndex` of it)
                return
            raise ValueError(f"{self.name}: index {name!r} already exists with another function")
        self.store.add_index(name, fn)
        if self._side is not None:
            self._side.add_index(name, fn)
        self._index_fns[name] = fn

    def has_index(self, name: str) -> bool:
        return name in self._index_fns or name in self.store.indexes

    # ------------------------------------------------------------------ the loop

    async def run(self) -> None:
        """Run until `stop()`; never raises for list/watch trouble (that is state, see `reason`)."""
        if self._started:
            raise RuntimeError(f"{self.name}: an Informer runs once")
        self._started = True
        try:
            if self._stop_requested:
                return
            handle = self._handle
            async with asyncio.TaskGroup() as tg:
                compactor = tg.create_task(self._compactor(), name=f"compactor {self.name}")
                try:
                    async with aclosing(self.watcher.event_batches()) as batches:
                        async for batch in batches:
                            for ev in batch:
                                try:
                                    handle(ev)
                                except Exception:
                                    log.exception("%s: failed to handle %r", self.name, type(ev).__name__)
                                if self._stop_requested:  # a subscriber's sink may call stop()
                                    break
                finally:
                    compactor.cancel()
        finally:
            self._stopped = True
            self._finished.set()
            self._cancel_compaction_timer()
            self._compact_done.set()
            self._release_waiters()
            for sub in list(self._subs):
                sub._end()
            self._subs.clear()

    async def compacted(self) -> None:
        """Wait until synced and every listed object is in its compact form (or the informer stopped).

        Not needed for correctness (reads work on either form); it is for measuring memory, and for
        programs that want the steady-state footprint before going on.
        """
        if not self._stopped:
            try:
                await self.wait_synced()
            except InformerNotReady:
                if not self._stopped:
                    raise
                return
        await self._compact_done.wait()

    async def _compactor(self) -> None:
        """Compact what the store's queue holds that is due (listed objects at once, watched writes
        once `compact_delay` old), a batch at a time, yielding between batches; then sleep until
        the next is due or a (re)list wants it. A codec fault never stops the watch: the store
        drops its queue and objects stay readable in the form they have."""
        while True:
            await self._compact_wanted.wait()
            self._compact_wanted.clear()
            store = self.store
            while True:
                try:
                    oldest = store.compact(time.monotonic() - self.compact_delay, self.compact_batch)
                except Exception:
                    log.exception("%s: compaction failed; objects stay uncompacted", self.name)
                    oldest = None
                if oldest is None or oldest + self.compact_delay > time.monotonic():
                    break
                await asyncio.sleep(0)
                if self.store is not store:  # a relist swapped in a new store: it set _compact_wanted
                    break
            if self.store is store and not self._compact_done.is_set():
                self.compacted_at = time.monotonic()
                _release_freed_memory()
                self._compact_done.set()
            if oldest is not None and self.store is store and self._compact_timer is None:
                # writes arriving at a steady rate would each be due a moment after the last: wait
                # for a quarter of the delay's worth of them, so busy informers wake a few times a
                # second to compact, not once per event (an object waits at most 1.25x the delay)
                due = max(oldest + self.compact_delay - time.monotonic(), self.compact_delay / 4)
                self._schedule_compaction(due)

    def _schedule_compaction(self, delay: float) -> None:
        self._compact_timer = asyncio.get_running_loop().call_later(delay, self._compaction_due)

    def _compaction_due(self) -> None:
        self._compact_timer = None
        self._compact_wanted.set()

    def _cancel_compaction_timer(self) -> None:
        timer, self._compact_timer = self._compact_timer, None
        if timer is not None:
            timer.cancel()

    def stop(self) -> None:
        """Make `run()` return soon (idempotent)."""
        self._stop_requested = True
        self.watcher.stop()

    async def close(self) -> None:
        """`stop()` and wait until `run()` returned (at once if it never started)."""
        self.stop()
        if self._started:
            await self._finished.wait()

    def wake(self) -> None:
        """Retry now instead of finishing a backoff (e.g. a CRD was just installed)."""
        self.watcher.wake()

    def release_memory(self) -> None:
        """Drop every stored object (after stop; readers holding views keep theirs)."""
        self._side = None
        self._cancel_compaction_timer()
        self.store = Store(codec=self.store.codec, owner_index=False)

    async def __aenter__(self) -> Informer:
        """Run in a TaskGroup of the informer's own (standalone use, tests, scripts)."""
        tg = asyncio.TaskGroup()
        await tg.__aenter__()
        self._tg = tg
        self._task = tg.create_task(self.run(), name=f"informer {self.name}")
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        self.stop()
        tg, self._tg = self._tg, None
        if tg is not None:
            if e is not None and not isinstance(e, asyncio.CancelledError):
                # the body failed: our tasks are stopped already; let its exception propagate as
                # it is rather than wrapped in an ExceptionGroup
                et = e = tb = None
            await tg.__aexit__(et, e, tb)

    # ------------------------------------------------------------------ event handling

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

    def _fail(self, ns: str, name: str, exc: Exception, *, relist: bool = False) -> None:
        """A user function raised on this object: keep its last good version, stay not ready
        with the reason, log at ERROR once per object, count it."""
        cause: BaseException
        if isinstance(exc, _Failed):
            function, label, cause = exc.function, exc.label, exc.cause
        elif isinstance(exc, IndexFunctionError):
            function, label, cause = exc.function, f"index:{exc.index}", exc.__cause__ or exc
        else:
            function, label, cause = "storing", "store", exc
        why = f"{function} raised {type(cause).__name__}: {cause}"
        key = (ns, name)
        if key not in self._broken and key not in self._side_broken:
            log.error("%s: %s on %s/%s; keeping its last good version, not ready until fixed", self.name, why,
                      ns, name, exc_info=cause)
        (self._side_broken if relist else self._broken)[key] = why
        metrics.CACHE_OBJECT_ERRORS.labels(self.resource or self.name, label).inc()

    def _emit(self, ev: Event) -> None:
        for sub in self._subs:
            sub._offer(ev)

    def _handle(self, ev: Any) -> None:
        self.events_handled += 1
        t = type(ev)
        if t is Apply:
            self._apply(ev.obj)
        elif t is Delete:
            self._delete(ev.obj)
        elif t is InitApply:
            side = self._side
            if side is None:
                side = self._side = self._new_store()
            try:
                obj = self._prepare(ev.obj)
                if obj is not None:
                    side.load(obj)
            except Exception as exc:
                md = ev.obj.get("metadata") or {}
                ns, name = md.get("namespace") or "", md.get("name") or ""
                self._fail(ns, name, exc, relist=True)
                last = self.store.get(name, ns)  # the last good version, if we had one
                if last is not None:
                    try:
                        side.load(unwrap(last))
                    except Exception:
                        log.exception("%s: could not keep %s/%s", self.name, ns, name)
        elif t is Init:
            self._side = self._new_store()
        elif t is InitDone:
            self._init_done(ev.resource_version)

    def _apply(self, obj: dict[str, Any]) -> None:
        md = obj.get("metadata")
        if type(md) is not dict:
            return
        ns, name, rv = _key_and_rv(md)
        store = self.store
        if rv and store.resource_version_of(name, ns) == rv:
            return  # already stored in exactly this version
        subscribed = bool(self._subs)
        try:
            prepared = self._prepare(obj)
            # nobody subscribed (a cache only read): no Change, no Event to build
            change = store._apply(prepared, subscribed) if prepared is not None else None
        except Exception as exc:
            self._fail(ns, name, exc)
            return
        if self._broken and self._broken.pop((ns, name), None) is not None:
            log.info("%s: %s/%s is stored again", self.name, ns, name)
        if prepared is None:  # stopped passing the filter: gone as far as readers know
            self._remove(ns, name, rv)
            return
        if self._compact_timer is None and store.pending_compaction:
            self._schedule_compaction(self.compact_delay)
        if change is None:
            return
        kind = change.kind
        self._emit(Event(kind, self.cluster, self.resource,
                         change.namespace, change.name, change.new,
                         change=change if kind != ADDED else None))

    def _delete(self, obj: dict[str, Any]) -> None:
        md = obj.get("metadata")
        if type(md) is not dict:
            return
        ns, name, rv = _key_and_rv(md)
        self._broken.pop((ns, name), None)
        self._remove(ns, name, rv)

    def _remove(self, ns: str, name: str, rv: str | None) -> None:
        """Drop the object and report it deleted (its `old` is decoded only if a subscriber reads it)."""
        gone = self.store._remove(ns, name, rv)
        if gone is not None:
            self._emit(Event(DELETED, self.cluster, self.resource, ns, name, None, change=gone))

    def _new_store(self) -> Store:
        """An empty store like ours (codec, indexes) to build a (re)list in.

        Each listed object is encoded as it arrives, so a list never holds thousands of decoded
        objects at once (the peak that would otherwise stay in the process's RSS), and readers keep
        the complete previous state until the new one is swapped in whole.
        """
        # a Codec instance is shared (its learnt dictionaries stay valid); a name makes a fresh one
        store = Store(codec=self._codec if self._codec is not None else self.store.codec.name, defer_writes=True)
        store.load_cheap_limit = self.load_cheap_limit
        for name, fn in self._index_fns.items():
            store.add_index(name, fn)
        return store

    def _swap(self, store: Store) -> None:
        self.store = store
        for sub in self._subs:
            sub._store = store
        self._cancel_compaction_timer()
        if store.pending_compaction:
            self._compact_done.clear()
            self._compact_wanted.set()
        elif not self._compact_wanted.is_set():
            self._compact_done.set()

    def _init_done(self, resource_version: str) -> None:
        new = self._side if self._side is not None else self._new_store()
        self._side = None
        old = self.store
        first = not self._synced
        if resource_version:
            new.set_resource_version(resource_version)
        self._broken, self._side_broken = self._side_broken, {}
        cluster, resource = self.cluster, self.resource
        if first and not len(old):
            self._swap(new)
            keys = new.keys()
            for sub in self._subs:
                sub._offer_batch(keys, initial=True)
        else:
            # a relist: report the difference (vanished objects as deletes) after the swap
            events: list[Event] = []
            for ns, name in old.keys():
                if (ns, name) not in new:
                    events.append(Event(DELETED, cluster, resource, ns, name, None, old=old.get(name, ns)))
            for ns, name in new.keys():
                before = old.resource_version_of(name, ns)
                if before is None:
                    events.append(Event(ADDED, cluster, resource, ns, name, None, initial=first, store=new))
                elif before != new.resource_version_of(name, ns):
                    events.append(Event(MODIFIED, cluster, resource, ns, name, None, old=old.get(name, ns),
                                        store=new))
            self._swap(new)
            emit = self._emit
            for ev in events:
                emit(ev)
        if first:
            self._synced = True
            self.synced_at = time.monotonic()
            log.info("%s: synced (%d objects)", self.name, len(self.store))
            self._release_waiters()

    def __repr__(self) -> str:
        return f"Informer({self.name}, objects={len(self.store)}, ready={self.ready})"


_malloc_trim: Any = None


def _release_freed_memory() -> None:
    """Hand the heap freed by a list (decoded pages, cheap forms) back to the OS (glibc only).

    glibc keeps freed memory mapped; after a bulk decode that is tens of MiB of RSS nobody uses.
    `malloc_trim(0)` returns free pages, even inside the heap. Elsewhere this does nothing.
    """
    global _malloc_trim
    if _malloc_trim is None:
        _malloc_trim = False
        if sys.platform.startswith("linux"):
            import ctypes  # on first use, as the rest of this set-up: no cost for a program that lists nothing

            try:
                _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
                _malloc_trim.argtypes = [ctypes.c_size_t]
                _malloc_trim.restype = ctypes.c_int
            except (OSError, AttributeError):
                _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)


class _Failed(Exception):
    """The transform or the filter raised on an object."""

    def __init__(self, function: str, label: str, cause: Exception) -> None:
        super().__init__(function)
        self.function, self.label, self.cause = function, label, cause


def _fn_name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)

