"""`Controller`: sources -> work queue -> workers -> ``reconcile(request, ctx)``.

One shape, fluent::

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        obj = ctx.get()                       # the primary, from the cache; None: deleted
        ...
        return Result()                       # or Result(requeue_after=60), or raise

    widgets = (
        Controller("widgets", for_="example.com/v1/Widget", reconcile=reconcile,
                   predicates=[generation_changed | deleting])
        .owns("v1/ConfigMap")
        .owns("apps/v1/Deployment")
        .watches("v1/Secret", lambda s: secret_users(s))
    )
    async with SharedCache(client) as cache:
        await widgets.run(cache)              # until widgets.stop() or cancellation

Semantics (controller-runtime's, see docs/controllers.md): a request is never reconciled by
two workers at once; changes during a reconcile queue exactly one more run; an exception retries
the request with per-key exponential backoff (5 ms doubling to 1000 s); ``TerminalError`` is
not retried; ``Result(requeue_after=s)`` resets the backoff and runs again in ``s`` seconds;
``Result(requeue=True)`` retries after the backoff. Changes seen in an informer's initial list
are queued with low priority so a restart does not delay live changes. Workers start once every
source's informer has synced.

Read your own writes (on by default): writes made through ``ctx`` are tracked; the next
reconcile of the same request waits (up to ``read_your_writes_timeout``) for the caches to show
them, and watch events caused only by those writes do not enqueue another reconcile.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubeloop.cache import (
    ADDED,
    DEFAULT_TRANSFORM,
    DELETED,
    MODIFIED,
    RESYNC,
    Event,
    IndexFunc,
    InformerHandle,
    SharedCache,
    Subscription,
    SubscriptionClosed,
    Transform,
)
from kubeloop.client import Client, ResourceRef
from kubeloop.controller.apply import AppliedMemory
from kubeloop.controller.context import Context
from kubeloop.controller.events import EventRecorder
from kubeloop.controller.logs import current_request, next_reconcile_id
from kubeloop.controller.predicates import Predicate, PredicateFn
from kubeloop.controller.readyourwrites import ObjectKey, Write, WriteTracker, rv_at_least
from kubeloop.controller.request import Request, Result, TerminalError
from kubeloop.controller.sources import (
    MapFn,
    SourceSpec,
    combine_predicates,
    mapped_requests,
    owner_requests,
)
from kubeloop.controller.tracked_client import TrackedClient
from kubeloop.metrics import READ_YOUR_WRITES_WAITS, ControllerMetrics
from kubeloop.queue import DEFAULT_PRIORITY, LOW_PRIORITY, QueueShutDown, RateLimiter, WorkQueue

__all__ = ["Controller", "ControllerError", "ReconcileFn"]

ReconcileFn = Callable[[Request, Context], Awaitable[Result | None]]
Predicates = Iterable[Predicate | PredicateFn] | Predicate | PredicateFn | None


class ControllerError(RuntimeError):
    """A controller could not start (bad configuration, caches that never synced)."""


def _rv(obj: Mapping[str, Any] | None) -> str | None:
    if obj is None:
        return None
    return (obj.get("metadata") or {}).get("resourceVersion") or None


@dataclass(eq=False)
class _Source:
    """A source bound to one cluster while the controller runs."""

    spec: SourceSpec
    cluster: str
    handle: InformerHandle
    group: str
    kind: str
    sub: Subscription | None = None


class Controller:
    """A reconcile loop over one primary kind; see the module docstring.

    Options: ``predicates`` filter the primary's changes; ``namespace``/``label_selector``/
    ``field_selector`` narrow the primary's informer; ``max_concurrent_reconciles`` (default 1);
    ``reconcile_timeout`` seconds (None: no limit; a timeout is an error, retried);
    ``rate_limiter``/``debounce`` tune the queue; ``clusters`` restricts the clusters it runs on
    (default: every cluster of the cache); ``field_manager`` for apply (default: the name).
    """

    def __init__(
        self,
        name: str,
        *,
        for_: str,
        reconcile: ReconcileFn,
        predicates: Predicates = None,
        namespace: str | None = None,
        label_selector: str | Mapping[str, str] | None = None,
        field_selector: str | Mapping[str, str] | None = None,
        transform: Transform | None = DEFAULT_TRANSFORM,
        max_concurrent_reconciles: int = 1,
        reconcile_timeout: float | None = None,
        rate_limiter: RateLimiter | None = None,
        debounce: float = 0.0,
        clusters: Sequence[str] | None = None,
        field_manager: str | None = None,
        read_your_writes: bool = True,
        read_your_writes_timeout: float = 2.0,
        cache_sync_timeout: float = 120.0,
        record_events: bool = True,
        logger: logging.Logger | None = None,
    ) -> None:
        if not name or not name.replace("-", "_").replace(".", "_").isidentifier():
            raise ValueError(f"controller name {name!r} must be non-empty letters, digits, '-', '_' or '.'")
        if max_concurrent_reconciles < 1:
            raise ValueError("max_concurrent_reconciles must be at least 1")
        ResourceRef.parse(for_)  # fail early, with the client's readable message
        call = type(reconcile).__call__ if not inspect.isfunction(reconcile) else None
        if not (inspect.iscoroutinefunction(reconcile) or inspect.iscoroutinefunction(call)):
            raise TypeError(f"reconcile must be an async function (request, ctx), not {reconcile!r}")
        self.name = name
        self.for_resource = for_
        self.reconcile_fn = reconcile
        self.max_concurrent_reconciles = max_concurrent_reconciles
        self.reconcile_timeout = reconcile_timeout
        self.clusters = list(clusters) if clusters is not None else None
        self.field_manager = field_manager or name
        self.read_your_writes = read_your_writes
        self.read_your_writes_timeout = read_your_writes_timeout
        self.cache_sync_timeout = cache_sync_timeout
        self.record_events = record_events
        self.log = logger or logging.getLogger(f"kubeloop.controller.{name}")
        self._specs: list[SourceSpec] = [SourceSpec(
            "for", for_, namespace=namespace, label_selector=label_selector, field_selector=field_selector,
            transform=transform, predicate=combine_predicates(predicates))]
        self._indexes: dict[str, IndexFunc] = {}
        self._rate_limiter = rate_limiter
        self._debounce = debounce
        self.queue: WorkQueue[Request] = WorkQueue(name, rate_limiter=rate_limiter, debounce=debounce)
        self.metrics = ControllerMetrics.for_controller(name)
        self.tracker: WriteTracker | None = WriteTracker(on_own_event=self._own_event) if read_your_writes else None
        self.applied = AppliedMemory()
        self.recorder: EventRecorder | None = None
        self.cache: SharedCache | None = None
        self._clients: dict[str, Client] = {}
        self._sources: list[_Source] = []
        self._by_resource: dict[tuple[str, str], _Source] = {}
        self._by_gk: dict[tuple[str, str, str], list[_Source]] = {}
        self._primary_gk: tuple[str, str, bool] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._done = asyncio.Event()
        self._done.set()
        self._running = False
        self._drain_timeout = 30.0
        self._ryw_waiters: list[asyncio.Future[None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        if self.tracker is not None:
            self.tracker.add_listener(self._wake_ryw_waiters)
        self.reconciles_started = 0

    def _own_event(self) -> None:
        self.metrics.own_events_skipped += 1

    # ------------------------------------------------------------------ building

    def owns(self, resource: str, *, predicates: Predicates = None, match_every_owner: bool = False,
             metadata_only: bool = True, namespace: str | None = None,
             label_selector: str | Mapping[str, str] | None = None,
             transform: Transform | None = DEFAULT_TRANSFORM) -> Controller:
        """Reconcile the primary that controls a changed ``resource`` object (via ownerReferences).

        Watched metadata-only by default (owner references are metadata; memory stays small);
        pass ``metadata_only=False`` to read the children's full objects from ``ctx.reader``.
        """
        ResourceRef.parse(resource)
        self._specs.append(SourceSpec("owns", resource, namespace=namespace, label_selector=label_selector,
                                      metadata_only=metadata_only, transform=transform,
                                      predicate=combine_predicates(predicates), match_every_owner=match_every_owner))
        return self

    def watches(self, resource: str, map_fn: MapFn, *, predicates: Predicates = None, cluster: str | None = None,
                namespace: str | None = None, label_selector: str | Mapping[str, str] | None = None,
                field_selector: str | Mapping[str, str] | None = None, metadata_only: bool = False,
                transform: Transform | None = DEFAULT_TRANSFORM) -> Controller:
        """Reconcile what ``map_fn(obj)`` returns whenever a ``resource`` object changes.

        ``cluster``: watch only that cluster (default: each cluster the controller runs on); the
        map function may return requests for any cluster.
        """
        ResourceRef.parse(resource)
        self._specs.append(SourceSpec("watches", resource, cluster=cluster, namespace=namespace,
                                      label_selector=label_selector, field_selector=field_selector,
                                      metadata_only=metadata_only, transform=transform,
                                      predicate=combine_predicates(predicates), map_fn=map_fn))
        return self

    def index(self, name: str, fn: IndexFunc) -> Controller:
        """Add an index to the primary's cache (for ``watches`` map functions: ``requests_from_index``)."""
        self._indexes[name] = fn
        return self

    @property
    def sources(self) -> list[SourceSpec]:
        """The informer scopes this controller needs (the primary first)."""
        return list(self._specs)

    # ------------------------------------------------------------------ outside access

    def enqueue(self, request: Request, *, after: float | None = None, priority: int = DEFAULT_PRIORITY) -> None:
        """Queue a reconcile of ``request`` by hand (from anywhere on the controller's event loop)."""
        if after:
            self.queue.add_after(request, after, priority)
        else:
            self.queue.add(request, priority)

    def enqueue_threadsafe(self, request: Request, *, after: float | None = None) -> None:
        """``enqueue`` from another thread (a webhook server, a callback of a sync library)."""
        loop = self._loop
        if loop is None:
            raise RuntimeError(f"{self.name}: not running; enqueue_threadsafe needs the controller's event loop")
        loop.call_soon_threadsafe(lambda: self.enqueue(request, after=after))

    def enqueue_all(self, cluster: str | None = None, *, priority: int = LOW_PRIORITY) -> int:
        """Queue every cached primary object (a resync), with low priority by default; returns how many."""
        n = 0
        for src in self._sources:
            if src.spec.role != "for" or (cluster is not None and src.cluster != cluster):
                continue
            for ns, name in src.handle.reader.keys():
                self.queue.add(Request(src.cluster, ns, name), priority)
                n += 1
        return n

    def requests_from_index(self, index: str, key: str, cluster: str | None = None) -> list[Request]:
        """Requests for the primary objects filed under ``key`` in ``index`` (a ``watches`` helper)."""
        out: list[Request] = []
        for src in self._sources:
            if src.spec.role != "for" or (cluster is not None and src.cluster != cluster):
                continue
            for ns, name in src.handle.reader.index_keys(index, key):
                out.append(Request(src.cluster, ns, name))
        return out

    def primary_store(self, cluster: str | None = None) -> Any:
        """The primary's cache reader in ``cluster`` (default: the only/first cluster)."""
        for src in self._sources:
            if src.spec.role == "for" and (cluster is None or src.cluster == cluster):
                return src.handle.reader
        raise LookupError(f"{self.name}: not running on cluster {cluster!r}")

    @property
    def ready(self) -> bool:
        """True once every source synced and the workers run."""
        return self._ready.is_set()

    async def wait_ready(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Wait until ready; False on timeout or if the controller stopped first."""
        waiter = asyncio.ensure_future(self._ready.wait())
        stopped = asyncio.ensure_future(self._done.wait()) if self._running else None
        try:
            futs = [waiter] if stopped is None else [waiter, stopped]
            await asyncio.wait(futs, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            if stopped is not None:
                stopped.cancel()
        return self._ready.is_set()

    # ------------------------------------------------------------------ lifecycle

    async def start(
        self, tg: asyncio.TaskGroup, cache: SharedCache, *, clients: Mapping[str, Client] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> bool:
        """Run the controller as a task of ``tg``; return once it is ready (True) or ``timeout`` passed
        (False, it keeps starting). A failure to start is raised by ``tg`` (a `ControllerError`)."""
        tg.create_task(self.run(cache, clients=clients), name=f"controller {self.name}")
        await asyncio.sleep(0)  # let run() mark itself running
        return await self.wait_ready(timeout)

    async def stop(self, drain_timeout: float = 30.0) -> None:
        """Stop taking work, let in-flight reconciles finish (up to ``drain_timeout``), then return."""
        self._drain_timeout = drain_timeout
        self._stop.set()
        if self._running:
            await self._done.wait()

    async def run(self, cache: SharedCache, *, clients: Mapping[str, Client] | None = None) -> None:
        """Run until ``stop()`` (or cancellation): subscribe, wait for sync, reconcile.

        ``clients``: per-cluster clients for writes (default: the cache's own clients).
        """
        if self._running:
            raise ControllerError(f"{self.name}: already running")
        clusters = self.clusters if self.clusters is not None else cache.clusters
        if not clusters:
            raise ControllerError(f"{self.name}: the cache has no cluster to run on")
        try:
            self._clients = {c: (clients or {}).get(c) or cache.client(c) for c in clusters}
        except KeyError as exc:
            raise ControllerError(f"{self.name}: {exc.args[0]}") from None
        self._running = True
        self._loop = asyncio.get_running_loop()
        self._done.clear()
        self._stop.clear()
        self.cache = cache
        if self.queue.shutting_down:  # a restart: a fresh queue
            self.queue = WorkQueue(self.name, rate_limiter=self._rate_limiter, debounce=self._debounce)
        self.recorder = EventRecorder(self.name, self._client) if self.record_events else None
        self.metrics.max_concurrent = self.max_concurrent_reconciles
        try:
            await self._open_sources(cache, clusters)
            await self._run_sources_and_workers()
        except BaseExceptionGroup as eg:
            own, rest = eg.split(ControllerError)
            if own is not None and rest is None:
                first: BaseException = own
                while isinstance(first, BaseExceptionGroup):
                    first = first.exceptions[0]
                raise first from None  # one readable error, not a group
            raise
        finally:
            self._ready.clear()
            self.queue.shutdown()
            self._close_sources(release=True)
            self._running = False
            self._loop = None
            self._done.set()
            self.log.info("controller %s stopped", self.name)

    async def _run_sources_and_workers(self) -> None:
        async with asyncio.TaskGroup() as tg:
            for src in self._sources:
                tg.create_task(self._pump(src), name=f"{self.name} source {src.spec.describe()}")
            if self.recorder is not None:
                tg.create_task(self.recorder.run(), name=f"{self.name} events")
            await self._wait_synced()
            workers = [tg.create_task(self._worker(), name=f"{self.name} worker {i}")
                       for i in range(self.max_concurrent_reconciles)]
            self._ready.set()
            self.log.info("controller %s started (%d workers; sources: %s)", self.name, len(workers),
                          "; ".join(s.describe() for s in self._specs))
            await self._stop.wait()
            self._ready.clear()
            drained = await self.queue.shutdown_and_drain(self._drain_timeout)
            if not drained:
                self.log.warning("controller %s: reconciles still running after %.1fs; cancelling them",
                                 self.name, self._drain_timeout)
            for w in workers:
                w.cancel()
            self._close_sources()
            if self.recorder is not None:
                self.recorder.close()

    # ------------------------------------------------------------------ sources

    def _client(self, cluster: str) -> Client:
        try:
            return self._clients[cluster]
        except KeyError:
            if self.cache is not None:
                return self.cache.client(cluster)
            raise

    async def _resolve_gk(self, cluster: str, resource: str) -> tuple[str, str, bool]:
        ref = ResourceRef.parse(resource)
        try:
            api = await self._client(cluster).resolve(resource)
            return api.group, api.kind, api.namespaced
        except Exception as exc:
            if ref.name[:1].isupper():  # a Kind: good enough until discovery serves it
                return ref.group, ref.name, True
            raise ControllerError(f"{self.name}: cannot resolve {resource!r} on cluster {cluster!r} ({exc}); "
                                  "name the kind as 'group/version/Kind' to start before its CRD exists") from exc

    async def _open_sources(self, cache: SharedCache, clusters: list[str]) -> None:
        self._sources = []
        self._by_resource = {}
        self._by_gk = {}
        for spec in self._specs:
            for cluster in ([spec.cluster] if spec.cluster else clusters):
                group, kind, namespaced = await self._resolve_gk(cluster, spec.resource)
                if spec.role == "for" and self._primary_gk is None:
                    self._primary_gk = (group, kind, namespaced)
                handle = await cache.informer_for(cluster, spec.resource, **spec.informer_args())
                if spec.role == "for":
                    for index_name, fn in self._indexes.items():
                        handle.add_index(index_name, fn)
                src = _Source(spec, cluster, handle, group, kind)
                # live changes go straight to the work queue (no task switch); the pump delivers the
                # initial list and what queues behind it
                src.sub = handle.subscribe(name=f"{self.name}:{spec.role}:{spec.resource}",
                                           sink=functools.partial(self._on_event, src))
                self._sources.append(src)
                self._by_resource.setdefault((cluster, spec.resource), src)
                self._by_gk.setdefault((cluster, group, kind), []).append(src)

    def _close_sources(self, release: bool = False) -> None:
        for src in self._sources:
            if src.sub is not None:
                src.sub.close()
            if release:
                src.handle.release()
        if release:
            self._sources = []

    async def _wait_synced(self) -> None:
        handles = [s.handle for s in self._sources]
        try:
            await asyncio.gather(*(h.wait_synced(self.cache_sync_timeout) for h in handles))
        except TimeoutError as exc:  # InformerNotReady is a TimeoutError
            raise ControllerError(f"{self.name}: caches did not sync within {self.cache_sync_timeout}s: {exc}") from exc

    def _source_for(self, cluster: str, resource: str) -> _Source:
        src = self._by_resource.get((cluster, resource))
        if src is None:
            known = ", ".join(sorted({r for _, r in self._by_resource})) or "none"
            raise LookupError(f"{self.name}: no cache of {resource!r} on cluster {cluster!r}; "
                              f"watch it with for_/owns/watches first (watched: {known})")
        return src

    async def _pump(self, src: _Source) -> None:
        sub = src.sub
        assert sub is not None
        handle = self._on_event
        while True:
            try:
                ev = await sub.get()
            except SubscriptionClosed:
                if not self._stop.is_set():
                    self.log.warning("controller %s: the informer of %s stopped; its changes no longer reconcile",
                                     self.name, src.spec.describe())
                return
            handle(src, ev)
            while (ev := sub.get_nowait()) is not None:  # type: ignore[assignment]
                handle(src, ev)

    def _on_event(self, src: _Source, ev: Event) -> None:
        if ev.type == RESYNC:
            return
        tracker = self.tracker
        if tracker is not None:
            key: ObjectKey = (ev.cluster, src.group, src.kind, ev.namespace, ev.name)
            if key in tracker._keys:
                old_rv = _rv(ev.old) if ev.type != ADDED else None
                new_rv = _rv(ev.new) if ev.type != DELETED else None
                tracker.on_event(key, old_rv, new_rv, lambda: self._dispatch(src, ev))
                return
        self._dispatch(src, ev)

    def _dispatch(self, src: _Source, ev: Event) -> None:
        spec = src.spec
        pred = spec.predicate
        t = ev.type
        if pred is not None:
            old = ev.old if t != ADDED else None
            new = ev.new if t != DELETED else None
            try:
                if not pred(old, new):
                    return
            except Exception:
                self.log.exception("%s: predicate failed on %s", self.name, ev)
                return
        priority = LOW_PRIORITY if ev.initial else DEFAULT_PRIORITY
        role = spec.role
        if role == "for":
            self.queue.add(Request(ev.cluster, ev.namespace, ev.name), priority)
            return
        out: set[Request] = set()
        try:
            if role == "owns":
                assert self._primary_gk is not None
                group, kind, namespaced = self._primary_gk
                owner_requests(ev.new if t != DELETED else ev.old, ev.cluster, group, kind, namespaced,
                               spec.match_every_owner, out)
                if t == MODIFIED:
                    owner_requests(ev.old, ev.cluster, group, kind, namespaced, spec.match_every_owner, out)
            else:
                assert spec.map_fn is not None
                mapped_requests(ev.new if t != DELETED else ev.old, ev.cluster, spec.map_fn, out)
                if t == MODIFIED:
                    mapped_requests(ev.old, ev.cluster, spec.map_fn, out)
        except Exception:
            self.log.exception("%s: mapping %s to requests failed", self.name, ev)
            return
        for req in out:
            self.queue.add(req, priority)

    # ------------------------------------------------------------------ cache lookups (read your writes)

    def _cached(self, key: ObjectKey) -> Mapping[str, Any] | None:
        cluster, group, kind, ns, name = key
        best = None
        for src in self._by_gk.get((cluster, group, kind), ()):
            obj = src.handle.reader.get(name, ns)
            if obj is not None:
                if not src.spec.metadata_only:
                    return obj
                best = obj
        return best

    def _read(self, key: ObjectKey) -> Mapping[str, Any] | None:
        cached = self._cached(key)
        return cached if self.tracker is None else self.tracker.overlay(key, cached)

    def _observable(self, w: Write) -> bool:
        cluster, group, kind, ns, _ = w.key
        for src in self._by_gk.get((cluster, group, kind), ()):
            scope = src.handle.scope
            if scope.namespace is not None and scope.namespace != ns:
                continue
            labels = ((w.obj or {}).get("metadata") or {}).get("labels") or {}
            if scope.label_selector and not scope.label_selector.matches(labels):
                continue
            return True
        return False

    def _wake_ryw_waiters(self) -> None:
        waiters, self._ryw_waiters = self._ryw_waiters, []
        for f in waiters:
            if not f.done():
                f.set_result(None)

    async def _await_own_writes(self, req: Request) -> None:
        tracker = self.tracker
        if tracker is None:
            return
        pending = tracker.pending(req)
        if not pending:
            return
        outstanding = []
        for w in pending:
            if not self._observable(w):
                continue
            if rv_at_least(_rv(self._cached(w.key)), w.rv):
                tracker.on_observed(w.key, w.rv)
                continue
            outstanding.append(w)
        if not outstanding:
            return
        deadline = time.monotonic() + self.read_your_writes_timeout
        loop = asyncio.get_running_loop()
        while True:
            outstanding = [w for w in outstanding if not w.seen]
            if not outstanding:
                READ_YOUR_WRITES_WAITS.labels(self.name, "caught_up").inc()
                return
            left = deadline - time.monotonic()
            if left <= 0:
                READ_YOUR_WRITES_WAITS.labels(self.name, "timeout").inc()
                self.log.debug("%s: cache did not show %d own write(s) of %s within %.1fs", self.name,
                               len(outstanding), req, self.read_your_writes_timeout)
                tracker.release(outstanding)
                return
            fut: asyncio.Future[None] = loop.create_future()
            self._ryw_waiters.append(fut)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(fut, left)

    # ------------------------------------------------------------------ workers

    async def _worker(self) -> None:
        queue = self.queue
        while True:
            try:
                req, priority = await queue.get_with_priority()
            except QueueShutDown:
                return
            try:
                await self._process(req, priority)
            except Exception:  # a bug of ours or of a logging handler: never lose the worker
                self.log.exception("%s: internal error while processing %s", self.name, req)
                queue.add_rate_limited(req, priority)
            finally:
                queue.done(req)

    async def _process(self, req: Request, priority: int) -> None:
        m = self.metrics
        queue = self.queue
        m.active_workers += 1
        started = time.perf_counter()
        self.reconciles_started += 1
        rid = next_reconcile_id()
        token = current_request.set((self.name, req, rid))
        try:
            if self.tracker is not None:
                await self._await_own_writes(req)
            client = TrackedClient(self._client(req.cluster), req.cluster, self.tracker, self._cached, owner=req)
            ctx = Context(self, req, client, rid)
            timeout = asyncio.timeout(self.reconcile_timeout) if self.reconcile_timeout else None
            try:
                if timeout is None:
                    result = await self.reconcile_fn(req, ctx)
                else:
                    async with timeout:
                        result = await self.reconcile_fn(req, ctx)
            except TerminalError as exc:
                m.error += 1
                m.errors += 1
                m.terminal_errors += 1
                queue.forget(req)
                ctx.log.error("reconcile failed permanently (not retried): %s", exc)
                return
            except TimeoutError as exc:
                m.error += 1
                m.errors += 1
                if timeout is not None and timeout.expired():
                    m.timeouts += 1
                    delay = queue.add_rate_limited(req, priority)
                    ctx.log.warning("reconcile timed out after %ss; retrying in %.3fs", self.reconcile_timeout, delay)
                else:
                    delay = queue.add_rate_limited(req, priority)
                    ctx.log.warning("reconcile failed: %r; retrying in %.3fs", exc, delay)
                return
            except Exception as exc:
                m.error += 1
                m.errors += 1
                delay = queue.add_rate_limited(req, priority)
                ctx.log.warning("reconcile failed: %s: %s; retrying in %.3fs", type(exc).__name__, exc, delay,
                            exc_info=self.log.isEnabledFor(logging.DEBUG))
                return
            if result is None:
                result = Result()
            elif not isinstance(result, Result):
                m.error += 1
                m.errors += 1
                queue.add_rate_limited(req, priority)
                ctx.log.error("reconcile returned %r; return a kubeloop.Result or None", result)
                return
            if result.requeue_after:
                queue.forget(req)
                queue.add_after(req, result.requeue_after, priority)
                m.requeue_after += 1
            elif result.requeue:
                queue.add_rate_limited(req, priority)
                m.requeue += 1
            else:
                queue.forget(req)
                m.success += 1
        finally:
            current_request.reset(token)
            m.observe_time(time.perf_counter() - started)
            m.active_workers -= 1

    def __repr__(self) -> str:
        return f"Controller({self.name}, for={self.for_resource}, sources={len(self._specs)}, ready={self.ready})"
