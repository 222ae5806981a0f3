"""A cluster engagement: one controller run on one cluster, from opening its sources to forgetting it.

multicluster-runtime's ``Aware.Engage(ctx, name, cluster)``, ended by cancelling the context, is
the model: the run makes one `ClusterEngagement` per cluster it runs on (at start, or when a
cluster is added while it runs), and forgetting the cluster is closing that one object. It owns
what concerns its cluster alone:

- its sources: the kinds resolved through the cluster's discovery (the primary's first), one
  shared informer per source, subscribed (`BoundSource`, registered in the run's `SourceSet`);
- its task and the TaskGroup under it, in which its pumps run (an informer's first list, and
  what queues behind it, reaches the run through them);
- what waits for its caches: until every source synced, the run's events of this cluster are
  held here (the latest per object: a map function usually reads the primary's cache or an index,
  and a partial one would silently map a change to nothing), and so are the requests of this
  cluster the workers take meanwhile (from map functions elsewhere, or by hand). Once synced, the
  held events are dispatched and the held requests queued.

At the run's start, the engagements of the clusters known then are opened one after another (a
kind that cannot be resolved fails the start with one readable error) and must sync within
``cache_sync_timeout`` before the workers start. A cluster engaged later (`ControllerRun.engage`)
retries until it answers and is never fatal: a cluster that does not answer delays nothing else.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from kubeloop.cache import Event, SubscriptionClosed
from kubeloop.controller._errors import ControllerError
from kubeloop.controller._request import Request
from kubeloop.controller._sources import BoundSource
from kubeloop.meta import Backoff

if TYPE_CHECKING:
    from kubeloop.controller._run import ControllerRun

__all__ = ["ENGAGE_RETRY_MAX", "ClusterEngagement"]

ENGAGE_RETRY_MAX = 30.0
"""Seconds between attempts, at most, to open the sources of a cluster engaged at run time."""

HeldEvents = dict[tuple[int, str, str], tuple[BoundSource, Event]]
"""Events held until the sources synced: the latest per (source, namespace, name)."""


class ClusterEngagement:
    """One controller run on one cluster (see the module docstring)."""

    def __init__(self, run: ControllerRun, cluster: str) -> None:
        self.run = run
        self.cluster = cluster
        self.sources: list[BoundSource] = []
        self.held: HeldEvents | None = {}  # None once the sources synced (the run's event path checks it)
        self._held_requests: dict[Request, int] = {}
        self._task: asyncio.Task[None] | None = None
        self.settled = asyncio.Event()  # set once its sources synced, or it was closed: nothing more to wait for
        self.closed = False

    @property
    def holding(self) -> bool:
        """True until this cluster's sources have all synced (its events and requests wait here)."""
        return self.held is not None

    @property
    def _log(self) -> logging.Logger:
        return self.run.spec.log

    # ------------------------------------------------------------------ the life of an engagement

    async def open(self) -> bool:
        """Bind this cluster's sources (kinds resolved first, so a failure leaves nothing half-open);
        False if the engagement was closed (the cluster removed) meanwhile."""
        run = self.run
        spec, cache, cluster = run.spec, run.view.cache, self.cluster
        sources = spec.sources_on(cluster)
        primary = await run.primary_kind(cluster)
        kinds = [await run.resolve(cluster, source.resource) for source in sources]
        for source, kind in zip(sources, kinds, strict=True):
            if self.closed or not cache.has_cluster(cluster):
                break
            try:
                handle = await source.open(cache, cluster)
            except BaseException:
                self._drop_sources()  # an attempt that fails leaves nothing half-open (a retry starts clean)
                raise
            if self.closed:
                handle.release()
                break
            if source is spec.primary:
                for index_name, fn in spec.indexes:
                    handle.add_index(index_name, fn)
            src = BoundSource(source, cluster, handle, kind.group, kind.kind, primary)
            # live changes go straight to the work queue (no task switch); the pump delivers the
            # initial list and what queues behind it
            src.sink = run.sink(src)
            src.sub = handle.subscribe(name=f"{spec.name}:{source.role}:{source.resource}", sink=src.sink)
            self.sources.append(src)
            run.view.sources.add(src)
        else:
            return True
        self._drop_sources()
        return False

    def start(self, tg: asyncio.TaskGroup, *, sync_timeout: float | None) -> None:
        """Serve the opened sources as a task of ``tg`` (the run's): see `serve`."""
        self._task = tg.create_task(self.serve(sync_timeout), name=f"{self.run.spec.name} cluster {self.cluster}")

    def start_later(self, tg: asyncio.TaskGroup) -> None:
        """Open and serve as a task of ``tg``, retrying until the cluster answers (a cluster engaged
        while the run runs): never fails the run."""
        self._task = tg.create_task(self._engage(), name=f"{self.run.spec.name} engage {self.cluster}")

    async def serve(self, sync_timeout: float | None) -> None:
        """Pump the sources (in this engagement's own TaskGroup), wait for them to sync, release what
        waited, then keep pumping until closed. ``sync_timeout``: fail with a `ControllerError` when
        they have not synced by then (at the run's start); None: keep waiting, warning every
        ``cache_sync_timeout`` (an engagement at run time: the informers say why not)."""
        async with asyncio.TaskGroup() as tg:
            for src in self.sources:
                tg.create_task(self._pump(src), name=f"{self.run.spec.name} source {self.cluster} {src.spec.describe()}")
            if await self._wait_synced(limit=sync_timeout):
                self._release()
                if sync_timeout is None:
                    self._log.info("controller %s: cluster %r engaged (%d sources synced)", self.run.spec.name,
                                   self.cluster, len(self.sources))

    async def _engage(self) -> None:
        run, cluster = self.run, self.cluster
        backoff = Backoff(0.5, ENGAGE_RETRY_MAX, jitter=0, reset_after=None)
        attempt = 0
        try:
            while True:
                if self.closed or not run.view.cache.has_cluster(cluster):
                    return
                try:
                    opened = await self.open()
                    break
                except Exception as exc:  # discovery down: retry until the cluster answers (or is removed)
                    log = self._log.warning if attempt == 0 else self._log.debug
                    log("controller %s: cannot open its sources on cluster %r yet (%s); retrying", run.spec.name,
                        cluster, exc)
                    await asyncio.sleep(backoff.delay(attempt))
                    attempt += 1
            if opened:
                await self.serve(None)
        except Exception:  # a bug of ours: never take the controller down for one cluster
            self._log.exception("controller %s: engaging cluster %r failed", run.spec.name, cluster)

    async def _wait_synced(self, *, limit: float | None) -> bool:
        """True once every source synced; False if the engagement ended first. ``limit``: see `serve`."""
        run, sources = self.run, self.sources
        period = run.spec.cache_sync_timeout if limit is None else limit
        while True:
            try:
                await asyncio.gather(*(s.handle.wait_synced(period) for s in sources))
                return not self.closed
            except TimeoutError as exc:  # InformerNotReady is a TimeoutError
                if limit is not None:
                    raise ControllerError(f"{run.spec.name}: caches did not sync within {limit}s: {exc}") from exc
                if self.closed or any(s.handle.informer.stopped for s in sources) or \
                        not run.view.cache.has_cluster(self.cluster):
                    return False  # removed, or the cache is closing
                self._log.warning("controller %s: its sources on cluster %r have not synced after %.0fs (%s); "
                                  "its other clusters are not affected", run.spec.name, self.cluster, period, exc)

    async def _pump(self, src: BoundSource) -> None:
        sub, sink = src.sub, src.sink
        assert sub is not None and sink is not None
        while True:
            while (ev := sub.get_nowait()) is not None:  # what is queued, without a task switch each
                sink(ev)
            try:
                ev = await sub.get()
            except SubscriptionClosed:
                if not src.dropped:
                    self._log.warning("controller %s: the informer of %s stopped; its changes no longer reconcile",
                                      self.run.spec.name, src.spec.describe())
                return
            sink(ev)

    def _release(self) -> None:
        """The sources synced: dispatch the events held meanwhile (map functions now see full caches)
        and queue the requests that waited."""
        held, self.held = self.held, None
        self.settled.set()
        for src, ev in (held or {}).values():
            self.run.dispatch(src, ev)
        requests, self._held_requests = self._held_requests, {}
        for req, priority in requests.items():
            self.run.queue.add(req, priority)

    # ------------------------------------------------------------------ what waits for the caches

    def hold_event(self, src: BoundSource, ev: Event) -> None:
        """Keep ``ev`` (the latest per object) until the sources synced; while `held` is not None."""
        assert self.held is not None
        self.held[(id(src.spec), ev.namespace, ev.name)] = (src, ev)

    def hold_request(self, req: Request, priority: int) -> bool:
        """Keep ``req`` (taken by a worker) until the sources synced (True), or let it run (False)."""
        if self.held is None:
            return False
        self._held_requests[req] = priority
        return True

    # ------------------------------------------------------------------ the end

    def close(self) -> None:
        """Forget this cluster, now: its sources are given back (their subscriptions close), what it
        held is dropped and its task is cancelled (its pumps with it)."""
        self.closed = True
        self.held = None
        self._held_requests = {}
        self.settled.set()
        self._drop_sources()
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def _drop_sources(self) -> None:
        sources, self.sources = self.sources, []
        self.run.view.sources.drop(sources)
