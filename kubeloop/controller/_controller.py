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
them, and ``ctx.get()``/``ctx.reader()``/``ctx.owned()`` show them at once. The watch event of a
write to the reconciled object itself does not enqueue another reconcile; a write to a child
does, as in controller-runtime (``suppress_own_writes="all"`` drops those too).

Shape: a `Controller` is a specification: the builder keeps a frozen `ControllerSpec`
(``controller.spec``; each builder call replaces it). Each ``run()`` makes a fresh `ControllerRun`
(queue, workers, one engagement per cluster) in the running event loop and drops it when it ends,
so one `Controller` (defined at module level, say) runs again and again, in any event loop. The
methods about running state (``queue``, ``enqueue``, ``ready``, ...) speak of the current run. A
reconcile sees its run only through its `Context`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from kubeloop.cache import (
    DEFAULT_TRANSFORM,
    CacheReader,
    Filter,
    IndexFunc,
    Selection,
    SharedCache,
    Transform,
)
from kubeloop.client import Client
from kubeloop.controller._context import ResourceArg, resource_name
from kubeloop.controller._errors import ControllerError
from kubeloop.controller._handlers import EnqueueForObject, EnqueueForOwner, EnqueueMapped, MapFn
from kubeloop.controller._request import Request
from kubeloop.controller._run import ControllerRun, Gate
from kubeloop.controller._sources import BoundSource
from kubeloop.controller._spec import (
    ControllerSpec,
    Predicates,
    PrimaryWrites,
    ReconcileFn,
    SourceSpec,
    SuppressOwnWrites,
    Target,
    combine_predicates,
)
from kubeloop.metrics import ControllerMetrics
from kubeloop.queue import DEFAULT_PRIORITY, LOW_PRIORITY, REAL_CLOCK, Clock, RateLimiter, WorkQueue

__all__ = ["Controller", "ControllerError", "ReconcileFn"]


class Controller:
    """A reconcile loop over one primary kind; see the module docstring.

    Options: ``predicates`` filter the primary's changes; ``namespace``/``label_selector``/
    ``field_selector`` narrow the primary's informer; ``max_concurrent_reconciles`` (default 1);
    ``transform``/``filter`` shape and select what the primary's informer stores;
    ``reconcile_timeout`` seconds (None: no limit; a timeout is an error, retried);
    ``rate_limiter`` (default: per-key backoff and a 10 qps / burst 100 overall bucket, as
    controller-runtime), ``debounce``/``debounce_max_wait`` tune the queue;
    ``suppress_own_writes`` which own writes' events are dropped (see `SuppressOwnWrites`); ``clusters`` restricts the clusters it runs on
    (default: every cluster of the cache); ``field_manager`` for apply (default: the name);
    ``writes``: other kinds the reconcile writes through ``ctx.client`` (``["v1/Secret"]``), for the
    RBAC rules ``kubeloop manifests`` derives (docs/manifests.md); ``targets``: the kinds the
    reconcile reads with ``ctx.watch_target`` (``["helm.toolkit.fluxcd.io/v2/HelmRelease"]``), so
    their read rules are derived too; once declared, reading another kind is a `TargetNotDeclared`
    error (None, the default: any kind, no rule derived); a `Target` entry also says where they are
    read (one namespace, other clusters only); ``primary_writes`` what the reconcile writes of its
    primary (``"object"``, the default; ``"status"``; ``"none"``), for the derived rules.

    Every kind (``for_``, ``owns``, ``watches``, ``writes``, ``targets``) is a ``group/version/Kind``
    name or a typed resource class (`kubeloop.resources.CustomResource`: ``for_=WebApp``), resolved
    to its name here, once: the spec holds names only.
    """

    def __init__(
        self,
        name: str,
        *,
        for_: ResourceArg,
        reconcile: ReconcileFn,
        predicates: Predicates = None,
        namespace: str | None = None,
        label_selector: str | Mapping[str, str] | None = None,
        field_selector: str | Mapping[str, str] | None = None,
        transform: Transform | None = DEFAULT_TRANSFORM,
        filter: Filter | None = None,
        max_concurrent_reconciles: int = 1,
        reconcile_timeout: float | None = None,
        rate_limiter: RateLimiter | None = None,
        debounce: float = 0.0,
        debounce_max_wait: float | None = None,
        clusters: Sequence[str] | None = None,
        field_manager: str | None = None,
        read_your_writes: bool = True,
        read_your_writes_timeout: float = 2.0,
        suppress_own_writes: SuppressOwnWrites = "reconciled_object",
        cache_sync_timeout: float = 120.0,
        record_events: bool = True,
        logger: logging.Logger | None = None,
        writes: Sequence[ResourceArg] = (),
        targets: Sequence[ResourceArg | Target] | None = None,
        primary_writes: PrimaryWrites = "object",
    ) -> None:
        if isinstance(targets, str) or isinstance(writes, str):
            raise TypeError(f"writes= and targets= take a list of kinds such as [{targets or writes!r}], not a string")
        primary = SourceSpec(resource_name(for_), EnqueueForObject(),
                             Selection(namespace, label_selector, field_selector, transform=transform),
                             filter=filter, predicate=combine_predicates(predicates))
        self._init(ControllerSpec(
            name, reconcile, (primary,), max_concurrent_reconciles=max_concurrent_reconciles,
            reconcile_timeout=reconcile_timeout, rate_limiter=rate_limiter, debounce=debounce,
            debounce_max_wait=debounce_max_wait,
            clusters=tuple(clusters) if clusters is not None else None, field_manager=field_manager or name,
            read_your_writes=read_your_writes, read_your_writes_timeout=read_your_writes_timeout,
            suppress_own_writes=suppress_own_writes, cache_sync_timeout=cache_sync_timeout, record_events=record_events,
            logger=logger, writes=tuple(resource_name(w) for w in writes),
            targets=tuple(t if isinstance(t, Target) else Target(resource_name(t)) for t in targets)
            if targets is not None else None, primary_writes=primary_writes))

    def _init(self, spec: ControllerSpec) -> None:
        self._spec = spec
        self._metrics = ControllerMetrics.for_controller(spec.name)
        self._run: ControllerRun | None = None  # the current run (None: not running)
        # the latest run's queue, kept after that run ends: the metrics collector holds queues weakly,
        # and its workqueue_* counters stay on /metrics until a next run's queue replaces them
        self._queue: WorkQueue[Request] | None = None
        self._pending: dict[Request, tuple[float | None, int]] = {}  # enqueued by hand while no run runs (one per key)
        self._waiters: list[asyncio.Future[None]] = []  # `wait_ready` callers waiting for a run to start

    @classmethod
    def from_spec(cls, spec: ControllerSpec) -> Controller:
        """A controller running ``spec`` (e.g. ``dataclasses.replace(other.spec, reconcile=wrapped)``)."""
        controller = cls.__new__(cls)
        controller._init(spec)
        return controller

    # ------------------------------------------------------------------ building

    @property
    def spec(self) -> ControllerSpec:
        """The frozen specification (replaced by each builder call)."""
        return self._spec

    def _replace(self, **changes: Any) -> Controller:
        if self._run is not None:
            raise ControllerError(f"{self.name}: cannot change a running controller; build it before run()")
        self._spec = dataclasses.replace(self._spec, **changes)
        return self

    def _with_source(self, source: SourceSpec) -> Controller:
        return self._replace(sources=(*self._spec.sources, source))

    def owns(self, resource: ResourceArg, *, predicates: Predicates = None, match_every_owner: bool = False,
             metadata_only: bool = True, namespace: str | None = None,
             label_selector: str | Mapping[str, str] | None = None,
             transform: Transform | None = DEFAULT_TRANSFORM, filter: Filter | None = None) -> Controller:
        """Reconcile the primary that controls a changed ``resource`` object (via ownerReferences).

        Watched metadata-only by default (owner references are metadata; memory stays small);
        pass ``metadata_only=False`` to read the children's full objects from ``ctx.reader``.
        """
        return self._with_source(SourceSpec(
            resource_name(resource), EnqueueForOwner(match_every_owner),
            Selection(namespace, label_selector, metadata_only=metadata_only, transform=transform), filter=filter,
            predicate=combine_predicates(predicates)))

    def watches(self, resource: ResourceArg, map_fn: MapFn, *, predicates: Predicates = None, cluster: str | None = None,
                namespace: str | None = None, label_selector: str | Mapping[str, str] | None = None,
                field_selector: str | Mapping[str, str] | None = None, metadata_only: bool = False,
                transform: Transform | None = DEFAULT_TRANSFORM, filter: Filter | None = None) -> Controller:
        """Reconcile what ``map_fn(obj)`` returns whenever a ``resource`` object changes.

        ``cluster``: watch only that cluster (default: each cluster the controller runs on); the
        map function may return requests for any cluster.
        """
        return self._with_source(SourceSpec(
            resource_name(resource), EnqueueMapped(map_fn),
            Selection(namespace, label_selector, field_selector, metadata_only, transform), cluster=cluster,
            filter=filter, predicate=combine_predicates(predicates)))

    def index(self, name: str, fn: IndexFunc) -> Controller:
        """Add an index to the primary's cache (for ``watches`` map functions: ``requests_from_index``)."""
        return self._replace(indexes=(*self._spec.indexes, (name, fn)))

    @property
    def name(self) -> str:
        """The controller's name (the spec's; also names its metrics, logger and queue)."""
        return self._spec.name

    @property
    def clusters(self) -> list[str] | None:
        """The clusters it runs on (None: every cluster of the cache)."""
        clusters = self._spec.clusters
        return list(clusters) if clusters is not None else None

    @property
    def cache_sync_timeout(self) -> float:
        """Seconds the sources' informers may take to sync before starting fails."""
        return self._spec.cache_sync_timeout

    @property
    def sources(self) -> list[SourceSpec]:
        """The informer scopes this controller needs (the primary first)."""
        return list(self._spec.sources)

    # ------------------------------------------------------------------ the current run

    @property
    def queue(self) -> WorkQueue[Request]:
        """The current run's work queue, or the latest run's once it ended (each run has its own;
        `RuntimeError` before the first run)."""
        if self._queue is None:
            raise RuntimeError(f"controller {self.name} has not run yet: a run makes its queue")
        return self._queue

    @property
    def metrics(self) -> ControllerMetrics:
        """Its counters (controller-runtime's metrics), summed over all its runs."""
        return self._metrics

    @property
    def reconciles_started(self) -> int:
        """Reconciles started since the controller was built (all runs): those finished, and those running."""
        return sum(self._metrics.time_counts) + self._metrics.active_workers

    @property
    def running(self) -> bool:
        """True from `run`'s start until it returns."""
        return self._run is not None

    def enqueue(self, request: Request, *, after: float | None = None, priority: int = DEFAULT_PRIORITY) -> None:
        """Queue a reconcile of ``request`` by hand (from anywhere on the controller's event loop); while
        no run runs, it is kept (once per request) for the next run."""
        run = self._run
        if run is None:
            self._pending[request] = (after, priority)
        elif after:
            run.queue.add_after(request, after, priority)
        else:
            run.queue.add(request, priority)

    def enqueue_threadsafe(self, request: Request, *, after: float | None = None) -> None:
        """``enqueue`` from another thread (a webhook server, a callback of a sync library)."""
        run = self._run
        if run is None:
            raise RuntimeError(f"{self.name}: not running; enqueue_threadsafe needs the controller's event loop")
        run.loop.call_soon_threadsafe(lambda: self.enqueue(request, after=after))

    def enqueue_all(self, cluster: str | None = None, *, priority: int = LOW_PRIORITY,
                    where: Callable[[Request], bool] | None = None) -> int:
        """Queue every cached primary object (a resync), with low priority by default; returns how
        many. ``where``: only the requests it accepts (sharding re-enqueues the keys it gained)."""
        n = 0
        for req in self.cached_requests(cluster):
            if where is None or where(req):
                self.enqueue(req, priority=priority)
                n += 1
        return n

    def _primaries(self, cluster: str | None) -> list[BoundSource]:
        run = self._run
        return run.view.sources.primaries(cluster) if run is not None else []

    def cached_requests(self, cluster: str | None = None) -> list[Request]:
        """A request for every cached primary object (what `enqueue_all` queues; none when not running)."""
        return [Request(src.cluster, ns, name) for src in self._primaries(cluster) for ns, name in src.store.keys()]

    @property
    def in_flight(self) -> frozenset[Request]:
        """The requests being reconciled right now (counted under a sharding gate)."""
        run = self._run
        return frozenset(run.in_flight) if run is not None else frozenset()

    def requests_from_index(self, index: str, key: str, cluster: str | None = None) -> list[Request]:
        """Requests for the primary objects filed under ``key`` in ``index`` (a ``watches`` helper)."""
        return [Request(src.cluster, ns, name) for src in self._primaries(cluster)
                for ns, name in src.store.index_keys(index, key)]

    def primary_store(self, cluster: str | None = None) -> CacheReader:
        """The primary's cache reader in ``cluster`` (default: the only/first cluster)."""
        for src in self._primaries(cluster):
            return src.store
        raise LookupError(f"{self.name}: not running on cluster {cluster!r}")

    @property
    def ready(self) -> bool:
        """True once every source synced and the workers run (until it stops)."""
        run = self._run
        return run is not None and run.ready.is_set()

    async def wait_ready(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Wait until ready (a run that has not started yet included); False on timeout or if the run
        stopped first."""
        try:
            async with asyncio.timeout(timeout):
                while (run := self._run) is None:  # woken when a run starts
                    started = asyncio.get_running_loop().create_future()
                    self._waiters.append(started)
                    try:
                        await started
                    finally:
                        self._waiters.remove(started)
                ready, done = asyncio.ensure_future(run.ready.wait()), asyncio.ensure_future(run.done.wait())
                try:
                    await asyncio.wait([ready, done], return_when=asyncio.FIRST_COMPLETED)
                finally:
                    ready.cancel()
                    done.cancel()
        except TimeoutError:
            pass
        return self.ready

    # ------------------------------------------------------------------ lifecycle

    async def start(
        self, tg: asyncio.TaskGroup, cache: SharedCache, *, clients: Mapping[str, Client] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> bool:
        """Run the controller as a task of ``tg``; return once it is ready (True) or ``timeout`` passed
        (False, it keeps starting). A failure to start is raised by ``tg`` (a `ControllerError`)."""
        tg.create_task(self.run(cache, clients=clients), name=f"controller {self.name}")
        return await self.wait_ready(timeout)

    def engage_cluster(self, cluster: str) -> None:
        """``cluster`` was added to the cache while this controller runs: if it runs there (no
        ``clusters`` list, or one naming it, or a source pinned to it), open its sources there in the
        background; their requests flow into the one queue once they synced. Never blocks, and a
        cluster that does not answer delays nothing else (`unsynced_clusters` names it).
        `kubeloop.manager.Manager.add_cluster` and ``replace_cluster`` call this."""
        if self._run is not None:
            self._run.engage(cluster)

    @property
    def unsynced_clusters(self) -> list[str]:
        """Clusters it runs on whose sources have not all synced yet (their events wait for them)."""
        return self._run.unsynced_clusters if self._run is not None else []

    def forget_cluster(self, cluster: str) -> None:
        """``cluster`` was removed from the cache: drop its queued requests, its sources and the
        targets watched there (`kubeloop.manager.Manager.remove_cluster` calls this)."""
        if self._run is not None:
            self._run.forget_cluster(cluster)

    async def stop(self, drain_timeout: float = 30.0) -> None:
        """Stop taking work, let in-flight reconciles finish (up to ``drain_timeout``), then return."""
        run = self._run
        if run is not None:
            run.stop(drain_timeout)
            await run.done.wait()

    async def run(self, cache: SharedCache, *, clients: Mapping[str, Client] | None = None,
                  fence: Callable[[], bool] | None = None, clock: Clock = REAL_CLOCK,
                  gate: Gate | None = None,
                  startup_clusters: Collection[str] | None = None) -> None:
        """Run until ``stop()`` (or cancellation): subscribe, wait for sync, reconcile. Each call is a
        fresh `ControllerRun` (queue, workers, clusters engaged), dropped when it returns.

        ``clients``: per-cluster clients for writes (default: the cache's own clients).
        ``fence``: asked before each reconcile starts; while False nothing starts (the Manager
        passes leader election's `LeaderElector.may_lead`, so a leader that stalled past its
        lease starts no reconcile when it resumes). ``gate``: asked next, whether this replica
        owns the request (sharding; see `kubeloop.controller.Gate`).
        ``clock``: the time its queue schedules by and ``ctx.now()`` reads (the Manager passes its
        own; `kubeloop.testing.VirtualClock` in tests).
        ``startup_clusters``: the clusters whose sources must sync before the workers start (bounded
        by ``cache_sync_timeout``, as controller-runtime); the other clusters it runs on, and those
        added later (`engage_cluster`), are engaged in the background, and a listed cluster not added
        yet is engaged when it is. None (the default): every cluster it runs on must be known and
        sync first. The Manager passes the clusters known when it started.
        """
        if self._run is not None:
            raise ControllerError(f"{self.name}: already running")
        run = self._run = ControllerRun(self._spec, cache, clients=clients, metrics=self._metrics, clock=clock,
                                        fence=fence, gate=gate)
        self._queue = run.queue
        try:
            pending, self._pending = self._pending, {}
            for request, (after, priority) in pending.items():
                self.enqueue(request, after=after, priority=priority)
            for started in self._waiters:
                if not started.done():
                    started.set_result(None)
            await run.run(startup_clusters)
        finally:
            self._run = None

    def __repr__(self) -> str:
        return (f"Controller({self.name}, for={self._spec.primary.resource}, sources={len(self._spec.sources)}, "
                f"ready={self.ready})")
