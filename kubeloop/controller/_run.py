"""One run of a controller: sources -> event handlers -> work queue -> workers -> ``reconcile``.

`Controller.run` (and so the Manager) makes a fresh `ControllerRun` each time the controller runs
and drops it when the run ends. Its queue, workers, cluster engagements, read-your-writes memory,
event recorder and targets live exactly as long as the run, in the event loop it runs in: nothing
is reset for a next run, and the same `Controller` (a specification) runs again, in another event
loop too (controller-runtime's builder vs ``internal/controller``; kube-runtime's ``applier``).

The run reads the frozen `ControllerSpec` and hands each reconcile a `Context` over its `RunView`,
never itself. What can stand apart does: one `ClusterEngagement` per cluster it runs on
(`_engagement`: sources, pumps, what waits for their sync), read your writes behind its seam
(`_readyourwrites`: ``on_event``, ``client``, ``wait``, ``read``), the event -> request step
(`dispatch`). What is left here is the run's own life: start, the workers and what a reconcile's
result does to the queue, drain.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Collection, Mapping
from typing import Protocol

from kubeloop.cache import CacheNotSynced, Event, SharedCache
from kubeloop.client import Client, ResourceRef, UnknownKind
from kubeloop.controller._apply import AppliedMemory
from kubeloop.controller._context import Context
from kubeloop.controller._engagement import ClusterEngagement
from kubeloop.controller._errors import ControllerError
from kubeloop.controller._handlers import PrimaryKind
from kubeloop.controller._logs import RepeatedErrors, RequestLogger, current_request, next_reconcile_id
from kubeloop.controller._readyourwrites import ReadYourWrites
from kubeloop.controller._recorder import EventRecorder
from kubeloop.controller._request import Request, Result, TerminalError
from kubeloop.controller._scope import RunView
from kubeloop.controller._sources import BoundSource, SourceSet
from kubeloop.controller._spec import ControllerSpec, SourceSpec
from kubeloop.controller._targets import Targets
from kubeloop.meta import ADDED, DELETED, RESYNC
from kubeloop.metrics import ControllerMetrics
from kubeloop.queue import DEFAULT_PRIORITY, LOW_PRIORITY, Clock, QueueShutDown, WorkQueue

__all__ = ["ControllerRun", "Gate", "dispatch"]

_SYNC_WAIT = 10.0  # seconds a request that read an unsynced cache is parked for it before backing off
_FENCE_POLL = 0.1  # seconds between checks of a fence that forbids work (the stop usually comes first)


class Gate(Protocol):
    """Which requests this replica may reconcile (sharding), asked right before each one starts.

    The controller layer knows only this method; who decides (the Manager's sharding membership)
    reads `Controller.in_flight` to learn which keys are being reconciled. A refused request is
    dropped, not parked: the gate's owner re-enqueues the cached keys it starts admitting.
    """

    def owns(self, request: Request, /) -> bool: ...


def dispatch(source: SourceSpec, primary: PrimaryKind, ev: Event, add: Callable[[Request, int], None],
             log: logging.Logger, controller: str = "") -> None:
    """Filter ``ev`` through ``source``'s predicate and ``add`` the requests its handler names (an
    initial-list change with low priority, so a restart does not delay live changes)."""
    pred = source.predicate
    t = ev.type
    if pred is not None:
        try:
            if not pred(ev.old if t != ADDED else None, ev.new if t != DELETED else None):
                return
        except Exception:
            log.exception("%s: predicate failed on %s", controller, ev)
            return
    try:
        requests = source.handler.requests(ev, primary)
    except Exception:
        log.exception("%s: mapping %s to requests failed", controller, ev)
        return
    priority = LOW_PRIORITY if ev.initial else DEFAULT_PRIORITY
    for req in requests:
        add(req, priority)


def _one_error(eg: BaseExceptionGroup[BaseException]) -> BaseException:
    """The error to raise for a failed run: a `ControllerError` (or the only error) on its own, one
    readable exception rather than a TaskGroup's group; several different ones stay a group."""
    own, rest = eg.split(ControllerError)
    leaves: list[BaseException] = []
    pending: list[BaseException] = [own if own is not None and rest is None else eg]
    while pending:
        e = pending.pop(0)
        if isinstance(e, BaseExceptionGroup):
            pending[:0] = e.exceptions
        else:
            leaves.append(e)
    if (own is not None and rest is None) or len(leaves) == 1:
        return leaves[0]
    return eg


class ControllerRun:
    """One run of one controller (see the module docstring); `Controller.run` makes it."""

    def __init__(self, spec: ControllerSpec, cache: SharedCache, *, clients: Mapping[str, Client] | None,
                 metrics: ControllerMetrics, clock: Clock, fence: Callable[[], bool] | None = None,
                 gate: Gate | None = None) -> None:
        self.spec = spec
        self.clock = clock
        self.fence = fence
        self.gate = gate
        self.queue: WorkQueue[Request] = WorkQueue(spec.name, rate_limiter=spec.rate_limiter, debounce=spec.debounce,
                                                   debounce_max_wait=spec.debounce_max_wait, clock=clock)
        self._clients = clients or {}  # given per-cluster clients for writes (the Manager's: a live mapping)
        sources = SourceSet(spec.name)
        ryw = None
        if spec.read_your_writes:
            ryw = ReadYourWrites(spec.name, sources, timeout=spec.read_your_writes_timeout, log=spec.log,
                                 suppress=spec.suppress_own_writes, on_own_event=self._own_event)
        self.view = RunView(spec.name, spec.field_manager, spec.primary.resource, spec.log, cache, sources, ryw,
                            AppliedMemory(), metrics, EventRecorder(spec.name, self.client) if spec.record_events
                            else None, Targets(spec.name, cache, self.queue.add, declared=spec.targets))
        self.engagements: dict[str, ClusterEngagement] = {}
        self.in_flight: set[Request] = set()  # under a gate (sharding): requests whose reconcile has started and not ended
        self.ready = asyncio.Event()
        self.done = asyncio.Event()
        self._stop: asyncio.Future[float] = asyncio.get_running_loop().create_future()  # its result: the drain timeout
        self._errors = RepeatedErrors()
        self._parked: dict[Request, asyncio.Task[None]] = {}  # requests waiting (without a worker) for a cache
        self._tg: asyncio.TaskGroup | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def log(self) -> logging.Logger:
        return self.spec.log

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the run runs in."""
        return self._stop.get_loop()

    @property
    def stopping(self) -> bool:
        return self._stop.done()

    def _own_event(self) -> None:
        self.view.metrics.own_events_skipped += 1

    # ------------------------------------------------------------------ clients and kinds

    def client(self, cluster: str) -> Client:
        """The client for writes on ``cluster`` (the given one, else the cache's)."""
        return self._clients.get(cluster) or self.view.cache.client(cluster)

    def write_client(self, cluster: str) -> Client:
        """What a reconcile on ``cluster`` writes through: with the read-your-writes hook."""
        ryw = self.view.ryw
        return self.client(cluster) if ryw is None else ryw.client(cluster, self.client)

    async def resolve(self, cluster: str, resource: str) -> PrimaryKind:
        """The group and kind of ``resource`` by ``cluster``'s discovery (a ``group/version/Kind`` name
        is good enough while it is not served yet)."""
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

    async def primary_kind(self, cluster: str) -> PrimaryKind:
        """The primary kind, resolved by the first cluster that asks (owner references match it)."""
        sources = self.view.sources
        if sources.primary_kind is None:
            sources.primary_kind = await self.resolve(cluster, self.spec.primary.resource)
        return sources.primary_kind

    # ------------------------------------------------------------------ lifecycle

    def _clusters(self, startup: Collection[str] | None) -> tuple[list[str], list[str]]:
        """(clusters whose sources must sync before the workers start, clusters engaged in the
        background); see `Controller.run` for ``startup``."""
        spec, known = self.spec, self.view.cache.clusters
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
        try:
            for c in clusters:
                self.client(c)
        except KeyError as exc:
            raise ControllerError(f"{self.name}: {exc.args[0]}") from None
        now = clusters if startup is None else [c for c in clusters if c in startup]
        return now, [c for c in clusters if c not in now]

    async def run(self, startup: Collection[str] | None) -> None:
        """Run until `stop` (or cancellation): engage the clusters, wait for sync, reconcile.

        ``fence()`` is asked before each reconcile starts (leader election's `may_lead`): while
        it is False no reconcile starts and the request stays queued. ``gate.owns(request)`` is
        asked next (sharding): a request it refuses is dropped (see `Gate`).
        """
        try:
            now, later = self._clusters(startup)
            self.view.metrics.max_concurrent = self.spec.max_concurrent_reconciles
            await self._run(now, later)
        except BaseExceptionGroup as eg:
            raise _one_error(eg) from None
        finally:
            self.ready.clear()
            self.queue.shutdown()
            for eng in self.engagements.values():
                eng.close()
            self.engagements.clear()
            self.view.targets.close()
            self.done.set()
            self.log.info("controller %s stopped", self.name)

    async def _run(self, now: list[str], later: list[str]) -> None:
        view, spec = self.view, self.spec
        async with asyncio.TaskGroup() as tg:
            self._tg = tg
            if view.recorder is not None:
                tg.create_task(view.recorder.run(), name=f"{self.name} events")
            tg.create_task(view.targets.run(), name=f"{self.name} targets")
            startup = []
            for cluster in now:
                eng = self.engagements[cluster] = ClusterEngagement(self, cluster)
                if await eng.open():
                    eng.start(tg, sync_timeout=spec.cache_sync_timeout)
                    startup.append(eng)
            for cluster in later:
                self.engage(cluster)
            await asyncio.gather(*(eng.settled.wait() for eng in startup))
            workers = [tg.create_task(self._worker(), name=f"{self.name} worker {i}")
                       for i in range(spec.max_concurrent_reconciles)]
            self.ready.set()
            self.log.info("controller %s started (%d workers; sources: %s)", self.name, len(workers),
                          "; ".join(s.describe() for s in spec.sources))
            drain_timeout = await self._stop
            self.ready.clear()
            if not await self.queue.shutdown_and_drain(drain_timeout):
                self.log.warning("controller %s: reconciles still running after %.1fs; cancelling them",
                                 self.name, drain_timeout)
            for w in workers:
                w.cancel()
            for parked in self._parked.values():
                parked.cancel()
            for eng in self.engagements.values():
                eng.close()
            view.targets.close()
            if view.recorder is not None:
                view.recorder.close()
        self._tg = None

    def stop(self, drain_timeout: float) -> None:
        """Stop taking work; in-flight reconciles get ``drain_timeout`` seconds to finish (then are
        cancelled). Returns at once: await ``done``."""
        if not self._stop.done():
            self._stop.set_result(drain_timeout)

    # ------------------------------------------------------------------ clusters engaged at run time

    def engage(self, cluster: str) -> None:
        """Engage ``cluster`` (added, or replaced, while the run runs) in the background: its events
        and requests wait for its sources to sync, then flow into the one queue. A cluster that does
        not answer never blocks the others (`unsynced_clusters` names it)."""
        tg = self._tg
        if tg is None or self.stopping or not self.spec.sources_on(cluster) or cluster in self.engagements:
            return  # not running, not one of ours, or already on it
        eng = self.engagements[cluster] = ClusterEngagement(self, cluster)
        eng.start_later(tg)

    def forget_cluster(self, cluster: str) -> None:
        """``cluster`` is removed: its engagement ends (sources, held events and requests), its queued
        requests are dropped and its targets released."""
        eng = self.engagements.pop(cluster, None)
        if eng is not None:
            eng.close()
        self.queue.discard_if(lambda req: req.cluster == cluster)
        self.view.targets.drop_cluster(cluster)
        if self.view.ryw is not None:
            self.view.ryw.forget_cluster(cluster)

    @property
    def unsynced_clusters(self) -> list[str]:
        """Clusters it runs on whose sources have not all synced yet (their events wait)."""
        return sorted(c for c, eng in self.engagements.items() if eng.holding)

    # ------------------------------------------------------------------ events

    def sink(self, src: BoundSource) -> Callable[[Event], None]:
        """Where ``src``'s changes go: through read your writes (when on), then `dispatch`."""
        deliver = functools.partial(self.dispatch, src)
        ryw = self.view.ryw
        return deliver if ryw is None else functools.partial(ryw.on_event, src.group, src.kind, deliver)

    def dispatch(self, src: BoundSource, ev: Event) -> None:
        """One change of a source: held while its cluster's sources sync (see `ClusterEngagement`),
        else turned into requests on the queue."""
        if ev.type == RESYNC:
            return
        eng = self.engagements.get(ev.cluster)
        if eng is not None and eng.held is not None:
            eng.hold_event(src, ev)
            return
        spec = self.spec
        dispatch(src.spec, src.primary, ev, self.queue.add, spec.log, spec.name)

    # ------------------------------------------------------------------ workers

    async def _fenced(self) -> bool:
        """True (after waiting, bounded by `stop`) if the fence forbids starting work now."""
        fence = self.fence
        if fence is None or fence():
            return False
        self.log.warning("controller %s: not starting reconciles: leadership is not (or no longer) held",
                         self.name)
        while not fence() and not self.stopping:
            await asyncio.wait([self._stop], timeout=_FENCE_POLL)
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

    async def _process(self, req: Request, priority: int) -> None:
        eng = self.engagements.get(req.cluster)
        if eng is not None and eng.hold_request(req, priority):
            return  # its cluster is being engaged: it runs once its caches there synced
        view = self.view
        m = view.metrics
        m.active_workers += 1
        started = time.perf_counter()
        rid = next_reconcile_id()
        token = current_request.set((self.name, req, rid))
        try:
            if not view.cache.has_cluster(req.cluster):  # removed while queued or running
                self.queue.forget(req)
                return
            if view.ryw is not None:
                await view.ryw.wait(req)
            ctx = Context(view, req, self.write_client(req.cluster), rid, clock=self.clock)
            result = await self._reconcile(req, priority, ctx)
            view.targets.finish(req, ctx.targets_asked, success=result is not None)
            if result is not None:
                self._requeue(req, priority, result)
        finally:
            current_request.reset(token)
            m.observe_time(time.perf_counter() - started)
            m.active_workers -= 1

    async def _reconcile(self, req: Request, priority: int, ctx: Context) -> Result | None:
        """Call the user's reconcile; on failure count, log and requeue here and return None."""
        m, queue, limit = self.view.metrics, self.queue, self.spec.reconcile_timeout
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
            self._park(req, priority, exc, ctx)
            return None
        except TimeoutError as exc:
            m.error += 1
            m.errors += 1
            retry = self._retry(req, priority)
            if timeout is not None and timeout.expired():
                m.timeouts += 1
                ctx.log.warning("reconcile timed out after %ss; %s", limit, retry)
            else:
                ctx.log.warning("reconcile failed: %r; %s", exc, retry)
            return None
        except Exception as exc:
            m.error += 1
            m.errors += 1
            retry = self._retry(req, priority)
            seen = self._errors.count(exc)
            if seen == 1:
                ctx.log.error("reconcile failed: %s: %s; %s", type(exc).__name__, exc, retry, exc_info=exc)
            else:
                ctx.log.warning("reconcile failed: %s: %s; %s (%d times; traceback logged the first time)",
                                type(exc).__name__, exc, retry, seen,
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

    def _retry(self, req: Request, priority: int) -> str:
        """Queue a failed request again after its backoff; what happens to it, for the log line
        (stopping, the queue takes nothing: the request runs when the controller next starts, as
        every object is listed again then)."""
        if self.queue.shutting_down:
            return "not retried now: the controller is stopping (its next start lists every object again)"
        return f"retrying in {self.queue.add_rate_limited(req, priority):.3f}s"

    def _park(self, req: Request, priority: int, exc: CacheNotSynced, ctx: Context) -> None:
        """A reconcile read a cache still listing: the worker moves on, and the request runs again
        once that cache synced (or failed, or after `_SYNC_WAIT`: then with backoff)."""
        tg = self._tg
        if exc.wait_synced is None or tg is None or self.stopping:
            ctx.log.info("%s has not synced; %s", exc.what, self._retry(req, priority))
            return
        if req in self._parked:
            return  # already parked: that waiter queues it again
        ctx.log.info("waiting for %s before reconciling (the worker goes on with other requests)", exc.what)
        self._parked[req] = tg.create_task(self._unpark(req, priority, exc, ctx.log), name=f"{self.name} parked {req}")

    async def _unpark(self, req: Request, priority: int, exc: CacheNotSynced, log: RequestLogger) -> None:
        assert exc.wait_synced is not None
        try:
            async with asyncio.timeout(_SYNC_WAIT):
                await exc.wait_synced(_SYNC_WAIT)
        except Exception as wait_exc:  # the informer failed or stopped, or the wait timed out: with backoff
            # a failure the next reconcile meets says itself why (a refused target: TargetForbidden)
            level = logging.WARNING if isinstance(wait_exc, TimeoutError) and "not synced after" in str(wait_exc) \
                else logging.DEBUG
            log.log(level, "%s did not sync (%s); retrying later", exc.what, wait_exc)
            self.queue.add_rate_limited(req, priority)
        else:
            self.queue.add(req, priority)  # runs again as soon as no worker has it
        finally:
            del self._parked[req]

    def _requeue(self, req: Request, priority: int, result: Result) -> None:
        m, queue = self.view.metrics, self.queue
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
