"""A controller while it runs: sources -> event handlers -> work queue -> workers -> ``reconcile``.

`ControllerRuntime` owns everything that changes while a controller runs (the queue, the bound
sources, the workers, read your writes, metrics); it reads the frozen `ControllerSpec` and hands
each reconcile a `Context` over a `RuntimeView`, never itself. Its ~650 lines are that one object's
life cycle (start, clusters engaged and forgotten while it runs, dispatch, workers, results, drain);
what can stand apart already does (`_sources`, `_handlers`, `_readyourwrites`, `_context`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable, Collection, Mapping
from typing import Protocol

from kubeloop.cache import CacheNotSynced, Event, SharedCache, SubscriptionClosed
from kubeloop.client import Client, ResourceRef, UnknownKind
from kubeloop.controller._apply import AppliedMemory
from kubeloop.controller._context import Context
from kubeloop.controller._events import EventRecorder
from kubeloop.controller._handlers import PrimaryKind
from kubeloop.controller._logs import current_request, next_reconcile_id
from kubeloop.controller._readyourwrites import ObjectKey, ReadYourWrites, Write
from kubeloop.controller._request import Request, Result, TerminalError
from kubeloop.controller._scope import RuntimeView
from kubeloop.controller._sources import BoundSource, SourceSet
from kubeloop.controller._spec import ControllerSpec, SourceSpec
from kubeloop.controller._targets import Targets
from kubeloop.meta import ADDED, DELETED, RESYNC, resource_version_of
from kubeloop.metrics import ControllerMetrics
from kubeloop.queue import DEFAULT_PRIORITY, LOW_PRIORITY, REAL_CLOCK, Clock, QueueShutDown, WorkQueue

_SYNC_WAIT = 10.0  # seconds a reconcile that read an unsynced cache waits for it before backing off
_FENCE_POLL = 0.1  # seconds between checks of a fence that forbids work (the stop usually comes first)
_ERRORS_REMEMBERED = 1000  # distinct reconcile errors whose repeats are counted (oldest forgotten)
_ENGAGE_RETRY_MAX = 30.0  # seconds between attempts to resolve the kinds of a cluster being engaged

HeldEvents = dict[tuple[int, str, str], tuple[SourceSpec, PrimaryKind, Event]]
"""Events of one cluster held until its sources synced: the latest per (source, namespace, name)."""


class Gate(Protocol):
    """Which requests this replica may reconcile (sharding), asked right before each one starts.

    The controller layer knows only this method; who decides (the Manager's sharding membership)
    reads `ControllerRuntime.in_flight` to learn which keys are being reconciled. A refused request
    is dropped, not parked: the gate's owner re-enqueues the cached keys it starts admitting.
    """

    def owns(self, request: Request, /) -> bool: ...


class ControllerError(RuntimeError):
    """A controller could not start (bad configuration, caches that never synced)."""


def _current_owner() -> Request | None:
    """The request whose reconcile runs in this task: the owner of the writes it makes."""
    current = current_request.get()
    return current[1] if current is not None else None


class ControllerRuntime:
    """The running state of one controller (see the module docstring); reused across restarts."""

    def __init__(self, spec: ControllerSpec) -> None:
        self.spec = spec
        self.name = spec.name
        self.log = spec.log
        self.clock: Clock = REAL_CLOCK
        self.queue: WorkQueue[Request] = self._new_queue(spec)
        self.metrics = ControllerMetrics.for_controller(spec.name)
        self.ryw: ReadYourWrites | None = None
        if spec.read_your_writes:
            self.ryw = ReadYourWrites(spec.name, timeout=spec.read_your_writes_timeout, log=self.log,
                                      on_own_event=self._own_event, suppress=self._suppress_own)
        self.applied = AppliedMemory()
        self.sources = SourceSet(spec.name)
        self.view: RuntimeView | None = None
        self.targets: Targets | None = None
        self.clients: dict[str, Client] = {}
        self.tracked: dict[str, Client] = {}
        self.ready = asyncio.Event()
        self.stopping = asyncio.Event()
        self.done = asyncio.Event()
        self.done.set()
        self.running = False
        self.drain_timeout = 30.0
        self.loop: asyncio.AbstractEventLoop | None = None
        self.reconciles_started = 0
        self._errors_seen: dict[tuple[str, str, int], int] = {}
        self.fence: Callable[[], bool] | None = None
        self.gate: Gate | None = None
        self.in_flight: set[Request] = set()  # under a gate (sharding): requests whose reconcile has started and not ended
        # cluster engagement (see `engage`): events of a cluster whose sources have not synced yet
        # are held, so map functions and reconciles see full caches of it
        self._held: dict[str, HeldEvents] = {}
        self._held_requests: dict[str, dict[Request, int]] = {}  # requests of such a cluster, from elsewhere
        self._engaging: dict[str, asyncio.Task[None]] = {}
        self._later: list[str] = []  # clusters to engage once the run's task group exists
        self._epochs: dict[str, int] = {}  # bumped when a cluster is forgotten: in-flight opens abort
        self._primary_kind: PrimaryKind | None = None
        self._given_clients: Mapping[str, Client] = {}
        self._tg: asyncio.TaskGroup | None = None

    def _new_queue(self, spec: ControllerSpec) -> WorkQueue[Request]:
        return WorkQueue(spec.name, rate_limiter=spec.rate_limiter, debounce=spec.debounce,
                         debounce_max_wait=spec.debounce_max_wait, clock=self.clock)

    def _use_clock(self, spec: ControllerSpec, clock: Clock) -> None:
        """Run on ``clock`` (the Manager's): a queue on another clock is replaced, keeping its keys."""
        self.clock = clock
        old = self.queue
        if old.clock is clock and not old.shutting_down:
            return
        self.queue = self._new_queue(spec)  # a restart, or another clock
        if not old.shutting_down:  # keys enqueued by hand before the first run are not lost
            for key in old.core.queued_keys():
                priority = old.core.priority_of(key)
                self.queue.add(key, DEFAULT_PRIORITY if priority is None else priority)

    def _own_event(self) -> None:
        self.metrics.own_events_skipped += 1

    def _suppress_own(self, w: Write) -> bool:
        """Drop the event of own write ``w``? Only a write to the reconciled object itself, unless
        ``suppress_own_writes="all"`` (see `kubeloop.controller._spec.SuppressOwnWrites`)."""
        if self.spec.suppress_own_writes == "all":
            return True
        req = w.owner
        if not isinstance(req, Request):
            return False
        cluster, group, kind, namespace, name = w.key
        if (cluster, namespace, name) != (req.cluster, req.namespace, req.name):
            return False
        return any(src.group == group and src.kind == kind for src in self.sources.primaries(cluster))

    # ------------------------------------------------------------------ lifecycle

    def _begin(self, spec: ControllerSpec, cache: SharedCache, clients: Mapping[str, Client] | None,
               clock: Clock, startup: Collection[str] | None) -> list[str]:
        """Check the configuration against ``cache``, reset the state of a previous run and return
        the clusters to open now (the others it runs on are queued for `engage`)."""
        if self.running:
            raise ControllerError(f"{self.name}: already running")
        known = cache.clusters
        if spec.clusters is None:
            clusters = known
        elif startup is None:
            clusters = list(spec.clusters)  # on its own, every cluster it names must be known
        else:
            clusters = [c for c in spec.clusters if c in known]
            missing = [c for c in spec.clusters if c not in known]
            if missing:
                self.log.warning("controller %s: cluster(s) %s not added yet; it runs there once they are",
                                 self.name, ", ".join(repr(c) for c in missing))
        clusters += [s.cluster for s in spec.sources
                     if s.cluster and s.cluster not in clusters and (startup is None or s.cluster in known)]
        if not clusters and startup is None:
            raise ControllerError(f"{self.name}: the cache has no cluster to run on")
        now = clusters if startup is None else [c for c in clusters if c in startup]
        try:
            self.clients = {c: (clients or {}).get(c) or cache.client(c) for c in clusters}
            self.tracked = {}
        except KeyError as exc:
            raise ControllerError(f"{self.name}: {exc.args[0]}") from None
        self._given_clients = clients or {}
        self.spec = spec
        self.running = True
        self.loop = asyncio.get_running_loop()
        self.done.clear()
        self.stopping.clear()
        self._use_clock(spec, clock)
        recorder = EventRecorder(self.name, self.client) if spec.record_events else None
        self.sources = SourceSet(self.name)
        self._held = {c: {} for c in now}
        self._held_requests = {}
        self._engaging = {}
        self._later = [c for c in clusters if c not in now]
        self._primary_kind = None
        if self.ryw is not None:
            self.ryw.bind(self.sources)
        self.targets = Targets(self.name, cache, lambda req: self.queue.add(req), declared=spec.targets)
        self.view = RuntimeView(self.name, spec.field_manager, spec.primary.resource, self.log, cache, self.sources,
                                self.ryw, self.applied, self.metrics, recorder, self.targets)
        self.metrics.max_concurrent = spec.max_concurrent_reconciles
        return now

    async def run(self, spec: ControllerSpec, cache: SharedCache, clients: Mapping[str, Client] | None,
                  fence: Callable[[], bool] | None = None, clock: Clock = REAL_CLOCK,
                  gate: Gate | None = None, startup: Collection[str] | None = None) -> None:
        """Run ``spec`` until `stop` (or cancellation): subscribe, wait for sync, reconcile.

        ``fence()`` is asked before each reconcile starts (leader election's `may_lead`): while
        it is False no reconcile starts and the request stays queued. ``gate.owns(request)`` is
        asked next (sharding): a request it refuses is dropped (see `Gate`). ``clock``: the time
        the queue schedules by and ``ctx.now()`` reads (`kubeloop.queue.Clock`). ``startup``: see
        `Controller.run`.
        """
        clusters = self._begin(spec, cache, clients, clock, startup)
        self.fence = fence
        self.gate = gate
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
            self._tg = None
            self._held = {}
            self._held_requests = {}
            self._later = []
            self.ready.clear()
            self.queue.shutdown()
            self.sources.close(release=True)
            if self.targets is not None:
                self.targets.close()
            self.running = False
            self.loop = None
            self.done.set()
            self.log.info("controller %s stopped", self.name)

    async def stop(self, drain_timeout: float) -> None:
        """Stop taking work, let in-flight reconciles finish (up to ``drain_timeout``), then return."""
        self.drain_timeout = drain_timeout
        self.stopping.set()
        if self.running:
            await self.done.wait()

    async def _run_sources_and_workers(self) -> None:
        assert self.view is not None
        recorder = self.view.recorder
        startup = list(self.sources)
        async with asyncio.TaskGroup() as tg:
            self._tg = tg
            for src in startup:
                tg.create_task(self._pump(src), name=f"{self.name} source {src.spec.describe()}")
            if recorder is not None:
                tg.create_task(recorder.run(), name=f"{self.name} events")
            if self.targets is not None:
                tg.create_task(self.targets.run(), name=f"{self.name} targets")
            later, self._later = self._later, []
            for cluster in later:
                if not any(s.cluster == cluster for s in startup):  # not reopened at start meanwhile
                    self._spawn_engage(cluster)
            await self._wait_synced(startup)
            for cluster in {s.cluster for s in startup}:
                self._release_held(cluster)
            workers = [tg.create_task(self._worker(), name=f"{self.name} worker {i}")
                       for i in range(self.spec.max_concurrent_reconciles)]
            self.ready.set()
            self.log.info("controller %s started (%d workers; sources: %s)", self.name, len(workers),
                          "; ".join(s.describe() for s in self.spec.sources))
            await self.stopping.wait()
            self.ready.clear()
            drained = await self.queue.shutdown_and_drain(self.drain_timeout)
            if not drained:
                self.log.warning("controller %s: reconciles still running after %.1fs; cancelling them",
                                 self.name, self.drain_timeout)
            for w in workers:
                w.cancel()
            for task in self._engaging.values():
                task.cancel()
            self.sources.close()
            if self.targets is not None:
                self.targets.close()
            if recorder is not None:
                recorder.close()

    def forget_cluster(self, cluster: str) -> None:
        """``cluster`` is removed: drop its queued requests, its sources and its targets."""
        self._epochs[cluster] = self._epochs.get(cluster, 0) + 1
        task = self._engaging.pop(cluster, None)
        if task is not None:
            task.cancel()
        self._held.pop(cluster, None)
        self._held_requests.pop(cluster, None)
        if cluster in self._later:
            self._later.remove(cluster)
        self.queue.discard_if(lambda req: req.cluster == cluster)
        self.sources.drop_cluster(cluster)
        if self.targets is not None:
            self.targets.drop_cluster(cluster)
        self.clients.pop(cluster, None)
        self.tracked.pop(cluster, None)

    # ------------------------------------------------------------------ clusters engaged at run time

    def runs_on(self, cluster: str) -> bool:
        """Whether ``cluster`` is one this controller watches (all, its ``clusters``, or a source's)."""
        return bool(self.spec.sources_on(cluster))

    def engage(self, cluster: str) -> None:
        """Start this controller's sources on ``cluster`` (added, or replaced, while it runs), in the
        background: its events are held until they all synced, then flow into the one queue. A
        cluster that does not answer never blocks the others (`unsynced_clusters` names it)."""
        if not self.running or self.stopping.is_set() or not self.runs_on(cluster):
            return
        if cluster in self._engaging or cluster in self._later or any(s.cluster == cluster for s in self.sources):
            return  # already on it
        if self.view is not None and cluster not in self.clients:
            self.clients[cluster] = self._given_clients.get(cluster) or self.view.cache.client(cluster)
        if self._tg is None:
            self._later.append(cluster)  # still opening the start-up sources
        else:
            self._spawn_engage(cluster)

    @property
    def unsynced_clusters(self) -> list[str]:
        """Clusters it runs on whose sources have not all synced yet (their events wait)."""
        return sorted({*self._held, *self._later})

    def _spawn_engage(self, cluster: str) -> None:
        assert self._tg is not None
        self._held.setdefault(cluster, {})
        self._engaging[cluster] = self._tg.create_task(self._engage(cluster), name=f"{self.name} engage {cluster}")

    async def _engage(self, cluster: str) -> None:
        """Open the sources on ``cluster`` (resolving kinds until the cluster answers), pump them, wait
        for them to sync (no time limit: the informers say why not), then release the held events."""
        assert self.view is not None and self._tg is not None
        cache = self.view.cache
        delay = 0.5
        try:
            while True:
                if not cache.has_cluster(cluster):
                    return
                try:
                    bound = await self._open_on(cache, cluster)
                    break
                except Exception as exc:  # discovery down: retry until the cluster answers (or is removed)
                    log = self.log.warning if delay == 0.5 else self.log.debug
                    log("controller %s: cannot open its sources on cluster %r yet (%s); retrying", self.name,
                        cluster, exc)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, _ENGAGE_RETRY_MAX)
            if bound is None:
                return  # the cluster was removed meanwhile
            for src in bound:
                self._tg.create_task(self._pump(src), name=f"{self.name} source {cluster} {src.spec.describe()}")
            timeout = self.spec.cache_sync_timeout
            while True:
                try:
                    await asyncio.gather(*(s.handle.wait_synced(timeout) for s in bound))
                    break
                except TimeoutError as exc:  # InformerNotReady: not fatal here; keep waiting
                    if any(s.handle.informer.stopped for s in bound) or not cache.has_cluster(cluster):
                        return  # removed, or the cache is closing
                    self.log.warning("controller %s: its sources on cluster %r have not synced after %.0fs (%s); "
                                     "its other clusters are not affected", self.name, cluster, timeout, exc)
            self._release_held(cluster)
            self.log.info("controller %s: cluster %r engaged (%d sources synced)", self.name, cluster, len(bound))
        except Exception:  # a bug of ours: never take the controller down for one cluster
            self.log.exception("controller %s: engaging cluster %r failed", self.name, cluster)
        finally:
            if self._engaging.get(cluster) is asyncio.current_task():
                del self._engaging[cluster]

    def _release_held(self, cluster: str) -> None:
        """``cluster``'s sources synced: dispatch the events held meanwhile (map functions now see full caches)."""
        held = self._held.pop(cluster, None)
        for spec, primary, ev in (held or {}).values():
            self.dispatch(spec, primary, ev)
        for req, priority in self._held_requests.pop(cluster, {}).items():
            self.queue.add(req, priority)

    # ------------------------------------------------------------------ sources

    def client(self, cluster: str) -> Client:
        """The client for writes on ``cluster``."""
        try:
            return self.clients[cluster]
        except KeyError:
            if self.view is not None:
                return self.view.cache.client(cluster)
            raise

    async def _resolve(self, cluster: str, resource: str) -> PrimaryKind:
        ref = ResourceRef.parse(resource)
        try:
            api = await self.client(cluster).resolve(resource)
            return PrimaryKind(api.group, api.kind, api.namespaced)
        except UnknownKind:  # a typo in a built-in group: nothing will ever serve it
            raise
        except Exception as exc:
            if ref.name[:1].isupper():  # a Kind: good enough until discovery serves it
                return PrimaryKind(ref.group, ref.name, True)
            raise ControllerError(f"{self.name}: cannot resolve {resource!r} on cluster {cluster!r} ({exc}); "
                                  "name the kind as 'group/version/Kind' to start before its CRD exists") from exc

    async def _open_sources(self, cache: SharedCache, clusters: list[str]) -> None:
        for cluster in clusters:
            await self._open_on(cache, cluster)

    async def _open_on(self, cache: SharedCache, cluster: str) -> list[BoundSource] | None:
        """Bind this controller's sources on ``cluster`` (the primary's first); None if the cluster
        was removed meanwhile. Kinds are resolved first, so a failure leaves nothing half-open."""
        spec = self.spec
        epoch = self._epochs.get(cluster, 0)
        sources = spec.sources_on(cluster)
        if self._primary_kind is None:
            self._primary_kind = await self._resolve(cluster, spec.primary.resource)
        kinds = [await self._resolve(cluster, source.resource) for source in sources]
        bound: list[BoundSource] = []
        for source, kind in zip(sources, kinds, strict=True):
            if self._epochs.get(cluster, 0) != epoch or not cache.has_cluster(cluster):
                break
            handle = await cache.informer_for(cluster, source.resource, **source.informer_args())
            if self._epochs.get(cluster, 0) != epoch:
                handle.release()
                break
            if source is spec.primary:
                for index_name, fn in spec.indexes:
                    handle.add_index(index_name, fn)
            src = BoundSource(source, cluster, handle, kind.group, kind.kind, self._primary_kind)
            # live changes go straight to the work queue (no task switch); the pump delivers the
            # initial list and what queues behind it
            src.sub = handle.subscribe(name=f"{self.name}:{source.role}:{source.resource}",
                                       sink=functools.partial(self.on_event, src))
            self.sources.add(src)
            bound.append(src)
        else:
            return bound
        self.sources.drop(bound)  # removed while opening: give back what this call took
        return None

    async def _wait_synced(self, sources: list[BoundSource]) -> None:
        timeout = self.spec.cache_sync_timeout
        try:
            await asyncio.gather(*(s.handle.wait_synced(timeout) for s in sources))
        except TimeoutError as exc:  # InformerNotReady is a TimeoutError
            raise ControllerError(f"{self.name}: caches did not sync within {timeout}s: {exc}") from exc

    async def _pump(self, src: BoundSource) -> None:
        sub = src.sub
        assert sub is not None
        handle = self.on_event
        while True:
            while (ev := sub.get_nowait()) is not None:  # what is queued, without a task switch each
                handle(src, ev)
            try:
                ev = await sub.get()
            except SubscriptionClosed:
                if not self.stopping.is_set() and not src.dropped:
                    self.log.warning("controller %s: the informer of %s stopped; its changes no longer reconcile",
                                     self.name, src.spec.describe())
                return
            handle(src, ev)

    def on_event(self, src: BoundSource, ev: Event) -> None:
        """One change of a source: held or dropped by read your writes, else dispatched."""
        if ev.type == RESYNC:
            return
        ryw = self.ryw
        if ryw is not None:
            key: ObjectKey = (ev.cluster, src.group, src.kind, ev.namespace, ev.name)
            if ryw.tracker.tracks(key):
                old_rv = resource_version_of(ev.old) if ev.type != ADDED else None
                new_rv = resource_version_of(ev.new) if ev.type != DELETED else None
                ryw.tracker.on_event(key, old_rv, new_rv, lambda: self.dispatch(src.spec, src.primary, ev))
                return
        self.dispatch(src.spec, src.primary, ev)

    def dispatch(self, spec: SourceSpec, primary: PrimaryKind, ev: Event) -> None:
        """Filter ``ev`` through the source's predicate and queue the requests its handler names.

        An event of a cluster whose sources have not all synced is held until they have (the
        latest per object): a map function typically reads the primary's cache or an index
        (``requests_from_index``), and a partial one would silently map it to nothing.
        """
        held = self._held.get(ev.cluster)
        if held is not None:
            held[(id(spec), ev.namespace, ev.name)] = (spec, primary, ev)
            return
        pred = spec.predicate
        t = ev.type
        if pred is not None:
            try:
                if not pred(ev.old if t != ADDED else None, ev.new if t != DELETED else None):
                    return
            except Exception:
                self.log.exception("%s: predicate failed on %s", self.name, ev)
                return
        try:
            requests = spec.handler.requests(ev, primary)
        except Exception:
            self.log.exception("%s: mapping %s to requests failed", self.name, ev)
            return
        priority = LOW_PRIORITY if ev.initial else DEFAULT_PRIORITY
        add = self.queue.add
        for req in requests:
            add(req, priority)

    # ------------------------------------------------------------------ workers

    async def _fenced(self) -> bool:
        """True (after waiting, bounded by `stop`) if the fence forbids starting work now."""
        fence = self.fence
        if fence is None or fence():
            return False
        self.log.warning("controller %s: not starting reconciles: leadership is not (or no longer) held",
                         self.name)
        while not fence() and not self.stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), _FENCE_POLL)
        return not fence()

    async def _worker(self) -> None:
        queue = self.queue
        while True:
            try:
                req, priority = await queue.get_with_priority()
            except QueueShutDown:
                return
            try:
                if await self._fenced():
                    queue.add(req, priority)  # not lost: runs after done() if we lead again
                    return
                gate = self.gate
                if gate is None:
                    await self._process(req, priority)
                elif gate.owns(req):
                    self.in_flight.add(req)  # no await since the gate's answer: the two agree
                    try:
                        await self._process(req, priority)
                    finally:
                        self.in_flight.discard(req)
                else:
                    queue.forget(req)  # another replica's key (or not yet ours): its owner runs it
            except Exception:  # a bug of ours or of a logging handler: never lose the worker
                self.log.exception("%s: internal error while processing %s", self.name, req)
                queue.add_rate_limited(req, priority)
            finally:
                queue.done(req)

    def tracked_client(self, cluster: str) -> Client:
        """The client a reconcile on ``cluster`` writes through: with the read-your-writes hook (one per run)."""
        client = self.tracked.get(cluster)
        if client is None:
            client = self.client(cluster)
            if self.ryw is not None:
                client = client.with_write_hook(self.ryw.hook(cluster, _current_owner))
            self.tracked[cluster] = client
        return client

    async def _process(self, req: Request, priority: int) -> None:
        if req.cluster in self._held:  # its cluster is being engaged: it runs once its caches there synced
            self._held_requests.setdefault(req.cluster, {})[req] = priority
            return
        m = self.metrics
        m.active_workers += 1
        started = time.perf_counter()
        self.reconciles_started += 1
        rid = next_reconcile_id()
        token = current_request.set((self.name, req, rid))
        try:
            assert self.view is not None
            if not self.view.cache.has_cluster(req.cluster):  # removed while queued or running
                self.queue.forget(req)
                return
            if self.ryw is not None:
                await self.ryw.wait(req)
            ctx = Context(self.view, req, self.tracked_client(req.cluster), rid, clock=self.clock)
            result = await self._reconcile(req, priority, ctx)
            if self.targets is not None:
                self.targets.finish(req, ctx.targets_asked, success=result is not None)
            if result is not None:
                self._requeue(req, priority, result)
        finally:
            current_request.reset(token)
            m.observe_time(time.perf_counter() - started)
            m.active_workers -= 1

    async def _reconcile(self, req: Request, priority: int, ctx: Context) -> Result | None:
        """Call the user's reconcile; on failure count, log and requeue here and return None."""
        m, queue, limit = self.metrics, self.queue, self.spec.reconcile_timeout
        timeout = asyncio.timeout(limit) if limit else None
        try:
            if timeout is None:
                result = await self.spec.reconcile(req, ctx)
            else:
                async with timeout:
                    result = await self.spec.reconcile(req, ctx)
        except TerminalError as exc:
            m.error += 1
            m.errors += 1
            m.terminal_errors += 1
            queue.forget(req)
            ctx.log.error("reconcile failed permanently (not retried): %s", exc)
            return None
        except CacheNotSynced as exc:
            await self._await_sync(req, priority, exc, ctx)
            return None
        except TimeoutError as exc:
            m.error += 1
            m.errors += 1
            delay = queue.add_rate_limited(req, priority)
            if timeout is not None and timeout.expired():
                m.timeouts += 1
                ctx.log.warning("reconcile timed out after %ss; retrying in %.3fs", limit, delay)
            else:
                ctx.log.warning("reconcile failed: %r; retrying in %.3fs", exc, delay)
            return None
        except Exception as exc:
            m.error += 1
            m.errors += 1
            delay = queue.add_rate_limited(req, priority)
            seen = self._seen_error(exc)
            if seen == 1:
                ctx.log.error("reconcile failed: %s: %s; retrying in %.3fs", type(exc).__name__, exc, delay,
                              exc_info=exc)
            else:
                ctx.log.warning("reconcile failed: %s: %s; retrying in %.3fs (%d times; traceback logged the "
                                "first time)", type(exc).__name__, exc, delay, seen,
                                exc_info=exc if self.log.isEnabledFor(logging.DEBUG) else None)
            return None
        if result is None:
            return Result()
        if not isinstance(result, Result):
            m.error += 1
            m.errors += 1
            queue.add_rate_limited(req, priority)
            ctx.log.error("reconcile returned %r; return a kubeloop.Result or None", result)
            return None
        return result

    async def _await_sync(self, req: Request, priority: int, exc: CacheNotSynced, ctx: Context) -> None:
        """A reconcile read a cache still listing: wait for it (bounded), then run again."""
        ctx.log.info("waiting for %s before reconciling", exc.what)
        synced = False
        if exc.wait_synced is not None:
            try:
                async with asyncio.timeout(_SYNC_WAIT):
                    await exc.wait_synced(_SYNC_WAIT)
                synced = True
            except Exception as wait_exc:  # timeout, or the informer failed: retry with backoff
                ctx.log.warning("%s did not sync within %.0fs (%s); retrying later", exc.what, _SYNC_WAIT,
                                wait_exc)
        if synced:
            self.queue.add(req, priority)  # runs again as soon as this run is done
        else:
            self.queue.add_rate_limited(req, priority)

    def _seen_error(self, exc: BaseException) -> int:
        """How many times this error (its type and where it was raised) has failed a reconcile.

        The first occurrence is logged with its traceback, the repeats one line each: a bug that
        fails every reconcile shows where it is once without flooding the log.
        """
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        where = (tb.tb_frame.f_code.co_filename, tb.tb_lineno) if tb is not None else ("", 0)
        key = (type(exc).__qualname__, *where)
        seen = self._errors_seen.get(key, 0) + 1
        if seen == 1 and len(self._errors_seen) >= _ERRORS_REMEMBERED:
            self._errors_seen.pop(next(iter(self._errors_seen)))
        self._errors_seen[key] = seen
        return seen

    def _requeue(self, req: Request, priority: int, result: Result) -> None:
        m, queue = self.metrics, self.queue
        if result.requeue_after is not None:  # 0 included: "again now" (see Result)
            queue.forget(req)
            queue.add_after(req, result.requeue_after, priority)
            m.requeue_after += 1
        elif result.requeue:
            queue.add_rate_limited(req, priority)
            m.requeue += 1
        else:
            queue.forget(req)
            m.success += 1
