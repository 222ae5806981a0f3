"""`SharedCache`: one live informer per scope, shared, created on demand, collected when unused.

    async with SharedCache({"default": client}) as cache:
        pods = await cache.informer_for("default", "v1/Pod", namespace="team-a")
        await pods.wait_synced(timeout=30)
        sub = pods.subscribe()
        pod = pods.get("web-0", "team-a")
        ...
        pods.release()           # or: async with cache.use("default", "v1/Pod") as pods: ...

- The key of an informer is its `Scope` (cluster, resolved group/version/plural, namespace,
  selectors, metadata-only, transform and filter identity). Equal scopes share one informer.
- A request whose scope is covered by a running informer's (`Scope.covers`: a namespace inside an
  all-namespaces informer, a stricter label selector, ...) is served from it: its handle filters
  reads and events locally (objects moving in or out of the narrower scope read as added/deleted)
  and no new watch is opened. The other order gives the same result: a broader informer, once
  synced, takes over the users (reads, subscriptions, indexes) of every narrower one it covers,
  and those stop (their subscribers get a resync against the broader store).
- Handles are reference counted; an informer nobody holds is stopped after `grace_period`
  seconds and dropped (its memory with it). Asking again within the grace period reuses it.
- Every informer task belongs to the cache's TaskGroup: leaving ``async with`` stops them all and
  awaits them, so no watch outlives the cache.
- A kind that is not served yet (CRD missing) gets an informer all the same: it waits, not ready,
  and starts when discovery serves the kind. Other informers are unaffected.

The handle users hold (`InformerHandle`) and the cache's record of one informer are in
`_handle.py`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Unpack

from kubeloop import metrics
from kubeloop.cache._codec import Codec
from kubeloop.cache._handle import InformerHandle, _Entry
from kubeloop.cache._informer import Informer, InformerNotReady
from kubeloop.cache._scope import Predicate, Scope, Selection, SelectionKeywords
from kubeloop.cache._source import ClientSource
from kubeloop.cache._transform import Filter
from kubeloop.client import ApiResource, Client, ResourceLike, ResourceRef, UnknownKind
from kubeloop.meta import DEFAULT_CLUSTER
from kubeloop.watch import WatchConfig, WatchState

__all__ = ["SharedCache"]

log = logging.getLogger("kubeloop.cache")


_list = list


def resource_key(res: ApiResource) -> str:
    """``group/version/plural`` (core group as ``core``), as the emulator's stats name it."""
    return f"{res.group or 'core'}/{res.version}/{res.plural}"


class SharedCache:
    """Informers shared by scope across every user in the process (see the module docstring).

    `clients`: one `Client`, or a mapping cluster name -> `Client` (`add_cluster` adds more later).
    `grace_period`: seconds an unused informer is kept before it is stopped. `watch_config`,
    `codec` and `queue_size` apply to every informer created. `discovery_poll_interval`: how often
    discovery is checked for kinds that informers are waiting for (CRD not installed yet).
    """

    def __init__(
        self,
        clients: Client | Mapping[str, Client] | None = None,
        *,
        grace_period: float = 30.0,
        watch_config: WatchConfig | None = None,
        codec: Codec | str | None = None,
        queue_size: int = 1024,
        discovery_poll_interval: float = 2.0,
    ) -> None:
        if clients is None:
            self._clients: dict[str, Client] = {}
        elif isinstance(clients, Client):
            self._clients = {DEFAULT_CLUSTER: clients}
        else:
            self._clients = dict(clients)
        self.grace_period = grace_period
        self.watch_config = watch_config
        self.codec = codec
        self.queue_size = queue_size
        self.discovery_poll_interval = discovery_poll_interval
        self._entries: dict[Scope, _Entry] = {}
        self._absent: dict[str, str] = {}  # cluster -> why it is not known (see `explain_absent`)
        self._tg: asyncio.TaskGroup | None = None
        self._poller: asyncio.Task[None] | None = None
        self._closing = False
        metrics.LIVE_CACHES.add(self)

    # ---- clusters
    @property
    def clusters(self) -> list[str]:
        return list(self._clients)

    def add_cluster(self, name: str, client: Client) -> None:
        """Make another cluster available (its informers are created on demand)."""
        if name in self._clients and self._clients[name] is not client:
            raise ValueError(f"cluster {name!r} is already known with another client")
        self._clients[name] = client

    def has_cluster(self, name: str) -> bool:
        """Whether ``name`` is a known cluster (False once `remove_cluster` removed it)."""
        return name in self._clients

    def remove_cluster(self, name: str) -> Client:
        """Forget a cluster: stop its informers now (their watches close; handles still held read
        an empty, stopped informer) and return its client (closing it is the caller's business)."""
        client = self.client(name)
        for entry in [e for e in self._entries.values() if e.scope.cluster == name]:
            self._stop(entry)
        del self._clients[name]
        return client

    def client(self, cluster: str = DEFAULT_CLUSTER) -> Client:
        """The client of ``cluster``; KeyError naming the known ones (and why this one is not, when
        whoever adds clusters said so with `explain_absent`)."""
        try:
            return self._clients[cluster]
        except KeyError:
            why = self._absent.get(cluster)
            raise KeyError(f"unknown cluster {cluster!r} (known: {', '.join(self._clients) or 'none'})"
                           + (f": {why}" if why else "")) from None

    def explain_absent(self, cluster: str, why: str | None) -> None:
        """Say why ``cluster`` is not known (its kubeconfig Secret was skipped, and why), so that
        whoever asks for it learns the cause, not only that the name is unknown; None forgets it."""
        if why is None:
            self._absent.pop(cluster, None)
        else:
            self._absent[cluster] = why

    # ---- lifetime
    async def __aenter__(self) -> SharedCache:
        tg = asyncio.TaskGroup()
        await tg.__aenter__()
        self._tg = tg
        self._closing = False
        self._poller = tg.create_task(self._poll_missing_kinds(), name="shared cache: discovery poll")
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        self._closing = True
        if self._poller is not None:
            self._poller.cancel()
            self._poller = None
        for entry in list(self._entries.values()):
            self._stop(entry)
        tg, self._tg = self._tg, None
        if tg is not None:
            if e is not None and not isinstance(e, asyncio.CancelledError):
                # the body failed: our tasks are stopped already; let its exception propagate as
                # it is rather than wrapped in an ExceptionGroup
                et = e = tb = None
            await tg.__aexit__(et, e, tb)

    # ---- the one entry point
    async def informer_for(
        self,
        cluster: str = DEFAULT_CLUSTER,
        resource: ResourceLike = "",
        selection: Selection | None = None,
        *,
        filter: Filter | None = None,
        **keywords: Unpack[SelectionKeywords],
    ) -> InformerHandle:
        """A handle on the one live informer for this scope (created and started on first use).

        What it keeps: ``selection`` and/or its fields as keywords (`Selection`; ``namespace=None``
        means all namespaces). Never waits for the informer to sync (use `wait_synced`) and never
        fails for a kind that is not served yet.
        """
        sel = Selection.merged(selection, keywords)
        if self._tg is None or self._closing:
            raise RuntimeError("SharedCache is not running: use `async with SharedCache(...) as cache:`")
        client = self.client(cluster)
        api: ApiResource | None
        try:
            api = await client.resolve(resource)
        except UnknownKind:  # a typo in a built-in group: nothing will ever serve it
            raise
        except Exception as exc:  # not served yet (CRD missing), or discovery is down: wait in the informer
            api = None
            log.info("%s: %s is not resolvable yet (%s); its informer will wait for it", cluster, resource, exc)
        if api is not None:
            res_name = resource_key(api)
            if not api.namespaced:
                sel = dataclasses.replace(sel, namespace=None)
        else:
            ref = ResourceRef.parse(resource) if isinstance(resource, str) else resource
            res_name = str(ref)
        scope = Scope.of(cluster, res_name, sel, filter=filter)
        entry = self._entries.get(scope)
        if entry is None and api is not None and not isinstance(resource, ApiResource):
            # an informer created while the kind was not served yet is keyed by the name as given
            ref = ResourceRef.parse(resource) if isinstance(resource, str) else resource
            entry = self._entries.get(dataclasses.replace(scope, resource=str(ref)))
            if entry is not None:
                scope = entry.scope
        predicate: Predicate | None = None
        if entry is None:
            broad = self._find_cover(scope)
            if broad is not None:
                entry = broad
                predicate = broad.scope.narrowing(scope)
        if entry is None:
            entry = self._start(scope, client, api if api is not None else resource)
        self._acquire(entry)
        return InformerHandle(self, entry, scope, predicate)

    @asynccontextmanager
    async def use(self, cluster: str = DEFAULT_CLUSTER, resource: ResourceLike = "",
                  selection: Selection | None = None, *, filter: Filter | None = None,
                  **keywords: Unpack[SelectionKeywords]) -> AsyncIterator[InformerHandle]:
        """``async with cache.use(cluster, resource, ...) as handle:``: `informer_for` + `release`."""
        handle = await self.informer_for(cluster, resource, Selection.merged(selection, keywords), filter=filter)
        try:
            yield handle
        finally:
            handle.release()

    # ---- readiness
    def informers(self) -> list[Informer]:
        """Every live informer."""
        return [e.informer for e in self._entries.values()]

    def not_ready(self, clusters: Iterable[str] | None = None) -> dict[str, str]:
        """Scope description -> reason, for every informer in use (on ``clusters``, default all) that
        is not ready (for /readyz)."""
        wanted = None if clusters is None else set(clusters)
        return {str(e.scope): e.informer.reason for e in self._entries.values()
                if e.refs > 0 and not e.informer.ready and (wanted is None or e.scope.cluster in wanted)}

    @property
    def ready(self) -> bool:
        """True when every informer in use is ready."""
        return not self.not_ready()

    async def wait_synced(self, *handles: InformerHandle, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """Wait until these handles (default: every informer in use) are synced, or raise
        `InformerNotReady` naming each one that is not, with its reason."""
        informers = [h.informer for h in handles] if handles else [e.informer for e in self._entries.values()
                                                                   if e.refs > 0]
        results = await asyncio.gather(*(i.wait_synced(timeout) for i in informers), return_exceptions=True)
        failed = [str(r) for r in results if isinstance(r, BaseException)]
        if failed:
            raise InformerNotReady("; ".join(failed))

    def open_informers(self) -> dict[tuple[str, str], int]:
        """(cluster, resource) -> how many informers are running (what the metrics report)."""
        out: dict[tuple[str, str], int] = {}
        for e in _list(self._entries.values()):
            key = (e.scope.cluster, e.scope.resource)
            out[key] = out.get(key, 0) + 1
        return out

    def stats(self) -> list[dict[str, Any]]:
        """One row per live informer: scope, users, objects, readiness, subscribers, events."""
        return [{
            "scope": str(e.scope), "users": e.refs, "objects": len(e.informer.store),
            "synced": e.informer.synced, "ready": e.informer.ready, "reason": e.informer.reason,
            "state": e.informer.state.value, "subscribers": len(e.informer.subscriptions),
            "events": e.informer.events_handled,
        } for e in self._entries.values()]

    # ---- internals
    def _find_cover(self, scope: Scope) -> _Entry | None:
        best: _Entry | None = None
        for entry in self._entries.values():
            if entry.informer.stopped:
                continue
            if entry.scope.covers(scope):
                # prefer the narrowest cover (fewest objects to filter), then a synced one
                if best is None or (len(entry.informer.store), not entry.informer.synced) < (
                        len(best.informer.store), not best.informer.synced):
                    best = entry
        return best

    def _start(self, scope: Scope, client: Client, resource: ResourceLike) -> _Entry:
        assert self._tg is not None
        name = str(scope)
        forbidden_logged = False  # once per stretch of 403s, until a request succeeds

        def on_error(verb: str, exc: BaseException) -> None:
            nonlocal forbidden_logged
            if getattr(exc, "code", None) == 403:
                if not forbidden_logged:
                    forbidden_logged = True
                    log.error("%s: %s FORBIDDEN: %s; the informer stays not ready until the permission is "
                              "granted", name, verb, getattr(exc, "message", None) or exc)

        def on_success() -> None:
            nonlocal forbidden_logged
            forbidden_logged = False

        source = ClientSource(
            client, resource, namespace=scope.namespace,
            label_selector=str(scope.label_selector) or None,
            field_selector=str(scope.field_selector) or None,
            metadata_only=scope.metadata_only, on_error=on_error, on_success=on_success)
        informer = Informer(source, cluster=scope.cluster, resource=scope.resource, transform=scope.transform,
                            filter=scope.filter, watch_config=self.watch_config, codec=self.codec,
                            queue_size=self.queue_size, name=name)
        entry = _Entry(scope, informer)
        if any(scope.covers(e.scope) for e in self._entries.values() if not e.informer.stopped):
            self._tg.create_task(self._take_over(entry), name=f"informer {name}: take over narrower scopes")
        self._entries[scope] = entry
        entry.task = self._tg.create_task(self._run(entry), name=f"informer {name}")
        log.debug("%s: informer started", name)
        return entry

    async def _take_over(self, broad: _Entry) -> None:
        """Once ``broad`` is synced, move the users of every narrower informer it covers onto it and
        stop those: sharing must not depend on the order informers were asked for (a namespaced
        controller added before a cluster-wide one must not keep a second watch for good)."""
        try:
            await broad.informer.wait_synced(None)
        except Exception:
            return  # stopped before it synced: the narrower informers keep serving
        if self._entries.get(broad.scope) is not broad or self._closing:
            return
        for narrow in _list(self._entries.values()):
            if narrow is broad or narrow.informer.stopped or not broad.scope.covers(narrow.scope):
                continue
            try:
                for name, fn in narrow.informer.index_functions.items():
                    broad.informer.add_index(name, fn)
            except ValueError as exc:
                log.warning("%s: not taken over by %s: %s", narrow.scope, broad.scope, exc)
                continue
            handles, narrow.handles = narrow.handles, []
            for handle in handles:
                handle._move_to(broad, broad.scope.narrowing(handle.scope))
                self._acquire(broad)
            narrow.refs = 0
            log.info("%s: served by %s from now on; its own watch is closed", narrow.scope, broad.scope)
            self._stop(narrow)

    async def _poll_missing_kinds(self) -> None:
        """Wake informers waiting for a kind as soon as discovery serves it (CRD installed), rather
        than when their watch backoff (up to a minute) happens to end."""
        while True:
            await asyncio.sleep(self.discovery_poll_interval)
            for entry in list(self._entries.values()):
                informer = entry.informer
                if informer.state is not WatchState.WAITING_FOR_RESOURCE:
                    continue
                source = informer.watcher.source
                if not isinstance(source, ClientSource):
                    continue
                try:
                    await source.client.resolve(source.resource)
                except Exception:
                    continue
                log.info("%s: the kind is served now; starting", entry.scope)
                informer.wake()

    async def _run(self, entry: _Entry) -> None:
        try:
            await entry.informer.run()
        except Exception:  # never take the other informers down with us
            log.exception("%s: informer crashed", entry.scope)
        finally:
            if self._entries.get(entry.scope) is entry:
                del self._entries[entry.scope]

    def _acquire(self, entry: _Entry) -> None:
        entry.refs += 1
        if entry.timer is not None:
            entry.timer.cancel()
            entry.timer = None

    def _release(self, entry: _Entry) -> None:
        entry.refs -= 1
        if entry.refs > 0 or entry.informer.stopped:
            return
        if self.grace_period <= 0 or self._closing:
            self._collect(entry)
            return
        loop = asyncio.get_running_loop()
        entry.timer = loop.call_later(self.grace_period, self._collect, entry)

    def _collect(self, entry: _Entry) -> None:
        entry.timer = None
        if entry.refs > 0:
            return
        log.debug("%s: unused for %.1fs, stopping", entry.scope, self.grace_period)
        metrics.CACHES_COLLECTED.labels(entry.scope.cluster, entry.scope.resource).inc()
        self._stop(entry)

    def _stop(self, entry: _Entry) -> None:
        if entry.timer is not None:
            entry.timer.cancel()
            entry.timer = None
        if self._entries.get(entry.scope) is entry:
            del self._entries[entry.scope]
        entry.informer.stop()
        entry.informer.release_memory()
