"""`Informer`: watcher -> transform -> filter -> store -> subscribers, for one scope.

The informer runs the watcher's outputs through its store's writer and then offers each resulting
change to every subscriber, in that order, in one task. Its concerns are small objects of their own:

- the watch: `kubeloop.watch.Watcher` (list+watch, resume, relist, backoff);
- the writer: `StoreWriter` (`_writer.py`): transform and filter, the (re)list built in a store of
  its own and exchanged into the readers' `Store` whole at `InitDone` (readers keep one handle for
  good and never see half a list; the first list makes the informer *synced*, a later one, after a
  410, reports its difference: objects that vanished meanwhile as deletes), and `BrokenObjects`,
  what a user function raised on;
- the compaction schedule: `Compactor` (`_compactor.py`);
- the first list and its waiters: `SyncGate` (`_sync_gate.py`);
- the subscribers: one `Subscription` each, a bounded queue (see `kubeloop.cache._subscription`): a
  slow one never slows the watch or the others.

Deferred compaction: a listed object is stored in the codec's cheap form (exact-size JSON, not
compressed), so the list costs little more than decoding it (large objects are compressed as they
arrive, where that costs a fraction of decoding them and saves the list's peak: see
`kubeloop.cache._store.LOAD_COMPACT_SIZE`; so is every object once `load_cheap_limit` bytes of a
list wait uncompressed, which bounds a long list's peak); once the list is swapped in, the
compactor compresses it in small batches that yield to the event loop. Reads are correct
throughout; `compacted()` waits for the end (benchmarks measure memory after it). An object a watch
event changes is held in the cheap form too and compressed once it has stayed unchanged for
`compact_delay` seconds: an object that changes again meanwhile, as busy objects do, is never
compressed for a version nobody keeps, and the reconcile that usually reads it next decodes JSON,
not a compressed form. (Written views are not kept decoded: in a measurement that kept each newest
view in the store's LRU, the views outlived the young GC generation and the collector's extra work
cost more than the decodes saved.) Time for all of this is the injected ``clock``
(`kubeloop.meta.Clock`, real by default).

Readiness (`ready`, `reason`) reflects the watcher's state: a kind that is not served yet (CRD
missing) or a 403 keeps the informer not ready with a reason naming the cause, and `wait_synced()`
raises `InformerNotReady` with that reason instead of timing out silently.

Structured concurrency: `run()` is the informer's whole life; the owner (a `SharedCache`, or
``async with informer:``) runs it in its own TaskGroup. Lifecycle, as on the `Manager`: `stop()`
asks and returns at once, ``await close()`` stops and waits for `run()` to return.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from types import TracebackType
from typing import Any, Generic, TypeVar, overload

from kubeloop.cache._codec import Codec
from kubeloop.cache._compactor import Compactor
from kubeloop.cache._index import IndexFunc
from kubeloop.cache._informer_event import Event
from kubeloop.cache._reader import CacheReader
from kubeloop.cache._store import Store
from kubeloop.cache._subscription import Predicate, Project, Sink, Subscription
from kubeloop.cache._sync_gate import SyncGate
from kubeloop.cache._transform import DEFAULT_TRANSFORM, Filter, Transform
from kubeloop.cache._writer import StoreWriter
from kubeloop.meta import REAL_CLOCK, Clock
from kubeloop.watch import (
    Apply,
    Delete,
    ErrorKind,
    Init,
    InitApply,
    InitDone,
    WatchConfig,
    Watcher,
    WatchError,
    WatchSource,
    WatchState,
)

__all__ = ["Informer", "InformerNotReady"]

T = TypeVar("T")

log = logging.getLogger("kubeloop.cache")

class CacheNotSynced(Exception):
    """A reconcile read a cache (an informer, an index) that has not finished its first list.

    Raised by readers that may be read before they are full (`kubeloop.manager.ManagedInformer`, informer handles);
    a partial cache would answer "not found" or a short list, and the reconcile would act on it.
    The runtime does not count it as an error: it parks the request, without holding a worker,
    until ``wait_synced`` returns (bounded) and runs the reconcile again, so a reconcile never needs
    to declare which caches it reads.
    """

    def __init__(self, what: str, wait_synced: Callable[[float | None], Awaitable[None]] | None = None) -> None:
        super().__init__(f"{what} has not synced yet")
        self.what = what
        self.wait_synced = wait_synced


class InformerNotReady(TimeoutError):
    """`wait_synced()` gave up; the message says why (e.g. the missing permission)."""


class _OnPart(Generic[T]):
    """An informer attribute one of its parts holds: ``informer.compact_delay`` is
    ``informer.compactor.delay``, read (and, when ``settable``, set) through the informer."""

    def __init__(self, part: str, attr: str, *, settable: bool = True) -> None:
        self.part, self.attr, self.settable = part, attr, settable

    @overload
    def __get__(self, informer: None, owner: type) -> _OnPart[T]: ...

    @overload
    def __get__(self, informer: Informer, owner: type) -> T: ...

    def __get__(self, informer: Informer | None, owner: type) -> T | _OnPart[T]:
        if informer is None:
            return self
        return getattr(getattr(informer, self.part), self.attr)

    def __set__(self, informer: Informer, value: T) -> None:
        if not self.settable:
            raise AttributeError(f"the informer's {self.part}.{self.attr} is not set through the informer")
        setattr(getattr(informer, self.part), self.attr, value)


class Informer:
    """One list+watch loop feeding one store and its subscribers (see the module docstring).

    `source` is any `WatchSource` (normally a `kubeloop.cache.ClientSource`). `cluster` and
    `resource` only label events, logs and readiness. `transform` defaults to dropping
    `metadata.managedFields`; `filter` decides what is stored at all. `watch_config` defaults to
    `WatchConfig()` (client-go's list: resourceVersion "0" from the watch cache, read as it
    arrives); a config passed changes only what it sets. `clock` times the store's deferred
    compaction (the watch itself keeps real time).
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
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self.cluster = cluster
        self.resource = resource
        self.name = name or f"{cluster}:{resource}"
        self.queue_size = queue_size
        self._sync = SyncGate()
        self.watcher = Watcher(source, watch_config if watch_config is not None else WatchConfig(), name=self.name,
                               on_failure=self._sync.nudge)
        self.writer = StoreWriter(cluster=cluster, resource=resource, name=self.name, transform=transform,
                                  filter=filter, codec=codec, clock=clock)
        self.reader = CacheReader(self.writer.store, cluster, resource)
        """Read-only access to the store (which stays the same object across relists)."""
        self.compactor = Compactor(self.writer.store, self.name)
        self.events_handled = 0
        self._subs: list[Subscription] = []
        self._started = False
        self._stop_requested = False
        self._finished = asyncio.Event()  # run() returned
        self._tg: asyncio.TaskGroup | None = None  # ``async with informer``'s own

    # ------------------------------------------------------------------ what the parts hold

    store = _OnPart[Store]("writer", "store", settable=False)
    """The store (read it through `reader` or a handle: only the informer's writer writes). The
    same object for the informer's whole life: a relist swaps its contents, not the store."""
    transform = _OnPart[Transform | None]("writer", "transform", settable=False)
    filter = _OnPart[Filter | None]("writer", "filter", settable=False)
    load_cheap_limit = _OnPart[float]("writer", "load_cheap_limit")
    """Bytes of listed objects a (re)list holds uncompressed before it compresses the rest as
    they arrive: how far a list's peak may exceed its compacted size (0: compress every listed
    object at once, the lowest peak for the slowest list; ``math.inf``: never; see
    `kubeloop.cache._store.LOAD_CHEAP_LIMIT`). Set it before the list starts."""
    compact_delay = _OnPart[float]("compactor", "delay")
    """Seconds an object changed by a watch event stays in the cheap form before it is compressed
    (up to a quarter more: the compactor takes the writes that fall due in batches)."""
    compact_batch = _OnPart[int]("compactor", "batch")
    """Objects compacted between two yields to the event loop (~1 ms of work for Pods)."""
    compacted_at = _OnPart[float | None]("compactor", "compacted_at", settable=False)
    """When a list was last compacted whole (the clock's ``monotonic()``)."""
    synced_at = _OnPart[float | None]("_sync", "synced_at", settable=False)
    """When the first list was swapped in (the clock's ``monotonic()``)."""

    # ------------------------------------------------------------------ state

    @property
    def synced(self) -> bool:
        """True once the first list is in the store."""
        return self._sync.synced

    @property
    def stopped(self) -> bool:
        return self._finished.is_set()

    @property
    def state(self) -> WatchState:
        """The watcher's state (listing, watching, backing off, forbidden, ...)."""
        return self.watcher.state

    @property
    def ready(self) -> bool:
        """Synced and able to keep up: not stopped, not forbidden, the kind still served, no
        object a user function failed on, the watch not failing for longer than `stuck_after`."""
        if not self._sync.synced or self.stopped or self.writer.broken:
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
    def access_error(self) -> WatchError | None:
        """The 401 or 403 its list or watch is failing with now (None: not refused): a failure no
        retry mends until someone grants the permission or fixes the credentials."""
        err = self.watcher.last_error
        if err is None or self.stopped:
            return None
        state = self.watcher.state
        if state is WatchState.FORBIDDEN:
            return err
        if err.kind is ErrorKind.UNAUTHORIZED and state is WatchState.BACKING_OFF:
            return err
        return None

    @property
    def reason(self) -> str:
        """Why the informer is not ready ("" when it is): for /readyz and logs."""
        if self.stopped:
            return "stopped"
        broken = self.writer.broken.describe()
        if broken:
            return broken
        state = self.watcher.state
        err = self.watcher.last_error
        msg = err.message if err is not None else ""
        if state is WatchState.FORBIDDEN:
            return f"forbidden (missing RBAC permission): {msg}"
        if state is WatchState.WAITING_FOR_RESOURCE:
            return f"waiting for {self.resource or 'the resource'} to be served (CRD not installed?): {msg}"
        if self._sync.synced:
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

    async def wait_synced(self, timeout: float | None = None, *, fail_fast: bool = False) -> None:  # noqa: ASYNC109
        """Wait for the first list; raise `InformerNotReady` (with `reason`) on timeout or stop, and,
        with ``fail_fast``, as soon as the list is refused (`access_error`: 401 or 403)."""
        if self._sync.synced:
            return
        if self.stopped:
            raise InformerNotReady(f"{self.name}: stopped before it synced")
        give_up = (lambda: self.access_error is not None) if fail_fast else None
        try:
            await self._sync.wait(timeout, give_up)
        except TimeoutError:
            raise InformerNotReady(f"{self.name}: not synced after {timeout}s: {self.reason}") from None
        if not self._sync.synced:
            if self.stopped:
                raise InformerNotReady(f"{self.name}: stopped before it synced")
            raise InformerNotReady(f"{self.name}: {self.reason}")

    # ------------------------------------------------------------------ subscribers and indexes

    def subscribe(
        self,
        *,
        queue_size: int | None = None,
        replay: bool = True,
        predicate: Predicate | None = None,
        name: str = "",
        sink: Sink | None = None,
        project: Project | None = None,
    ) -> Subscription:
        """A new subscription; with `replay` it first gets `added` (initial) events for the store.

        `predicate` narrows it to the objects it accepts (entering/leaving read as added/deleted);
        `project` gives its events' objects in a narrower form (metadata-only); `sink` takes live
        events synchronously (see `kubeloop.cache._subscription`).
        """
        store = self.store
        sub = Subscription(store, self.cluster, self.resource, maxsize=queue_size or self.queue_size,
                           predicate=predicate, name=name or self.name, on_close=self._unsubscribe, sink=sink,
                           project=project)
        if self.stopped:
            sub._end()
            return sub
        if replay and len(store):
            sub._offer_batch(store.key_snapshot(), initial=True)
        self._subs.append(sub)
        return sub

    def _adopt(self, sub: Subscription, predicate: Predicate | None, project: Project | None = None) -> None:
        """Take over a live subscription of another informer of the same kind (a broader scope
        taking a narrower informer's users over): it resyncs against this store."""
        if sub.closed:
            return
        sub._rehome(self.store, predicate, project, self._unsubscribe)
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
        self.writer.add_index(name, fn)

    def has_index(self, name: str) -> bool:
        return name in self.writer.index_functions or name in self.store.indexes

    @property
    def index_functions(self) -> dict[str, IndexFunc]:
        """The indexes added with `add_index`, by name (a broader informer taking this one's users
        over adds them to its own)."""
        return self.writer.index_functions

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
                compactor = tg.create_task(self.compactor.run(), name=f"compactor {self.name}")
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
            self._finished.set()
            self.compactor.stop()
            self._sync.close()
            for sub in list(self._subs):
                sub._end()
            self._subs.clear()

    async def compacted(self) -> None:
        """Wait until synced and every listed object is in its compact form (or the informer stopped).

        Not needed for correctness (reads work on either form); it is for measuring memory, and for
        programs that want the steady-state footprint before going on.
        """
        if not self.stopped:
            try:
                await self.wait_synced()
            except InformerNotReady:
                if not self.stopped:
                    raise
                return
        await self.compactor.wait()

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
        self.compactor.stop()
        self.writer.release()

    async def __aenter__(self) -> Informer:
        """Run in a TaskGroup of the informer's own (standalone use, tests, scripts)."""
        tg = asyncio.TaskGroup()
        await tg.__aenter__()
        self._tg = tg
        tg.create_task(self.run(), name=f"informer {self.name}")
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

    def _handle(self, ev: Any) -> None:
        self.events_handled += 1
        t = type(ev)
        if t is Apply:
            event = self.writer.apply(ev.obj, bool(self._subs))
            self.compactor.written()
            if event is not None:
                self._emit(event)
        elif t is Delete:
            event = self.writer.delete(ev.obj)
            if event is not None:
                self._emit(event)
        elif t is InitApply:
            self.writer.load(ev.obj)
        elif t is Init:
            self.writer.begin_list()
        elif t is InitDone:
            self._init_done(ev.resource_version)

    def _emit(self, ev: Event) -> None:
        for sub in self._subs:
            sub._offer(ev)

    def _init_done(self, resource_version: str) -> None:
        """The (re)list is complete: swap it in, then tell subscribers (the first list, into an
        empty store: its keys as one initial batch; otherwise the difference, as events)."""
        first = not self._sync.synced
        previous = self.writer.finish_list(resource_version)
        self.compactor.swapped()
        if first and not len(previous):
            keys = self.store.key_snapshot()
            for sub in self._subs:
                sub._offer_batch(keys, initial=True)
        else:
            emit = self._emit
            for ev in self.writer.changes_since(previous, initial=first):
                emit(ev)
        if first:
            self._sync.open(self.store.clock.monotonic())
            log.info("%s: synced (%d objects)", self.name, len(self.store))

    def __repr__(self) -> str:
        return f"Informer({self.name}, objects={len(self.store)}, ready={self.ready})"
