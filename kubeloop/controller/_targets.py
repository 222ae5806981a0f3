"""Dynamic targets: ``await ctx.watch_target(resource, name, namespace=..., cluster=...)``.

A parent (the object being reconciled) names, at run time, objects of any kind in any cluster
that it depends on: its *targets*. The call returns the target from a cache and guarantees that
a later change of it re-reconciles the parent. The data path::

    target event (informer of {cluster, kind}) -> TargetIndex: target -> parents
        -> the parents' Requests -> the controller's one work queue

- `TargetIndex` (sans-IO) is the bookkeeping: which parent watches which targets, which
  targets each {cluster, kind} cache still serves. Interest is per parent, and what the last
  *successful* reconcile asked for replaces what the parent watched before (a failed reconcile
  only adds: it may have stopped before asking for everything it needs). A deleted parent's
  reconcile asks for nothing, so it releases everything it watched.
- `Targets` (one per running controller) is the thin async shell: it resolves the kind through
  that cluster's discovery, takes a handle on the `SharedCache` informer of {cluster, kind}
  (created on first use, shared with every other controller and parent), subscribes to it, and
  gives the handle back when no parent of the controller watches a target there any more. The
  `SharedCache` stops the informer (closing its watch) once nobody holds it for its grace period.

Nothing here waits for a cache: a worker is never held by one parent's target. A cache that has
not listed yet raises `TargetNotSynced` (a `CacheNotSynced`: the run parks the request without a
worker and runs it again once the cache synced); the parents that asked are queued again when it
syncs, and also as soon as its list is refused, so that they fail with `TargetForbidden` at once
(a 401 or 403 is known from the first answer) and back off on their own, the others unaffected.

Why one cache per {cluster, kind}, all namespaces: one watch serves every target of that kind
in that cluster, whatever namespaces parents point into, and a new namespace costs nothing; the
price is list/watch permission at the cluster scope (a namespaced cache per target namespace
would need only namespaced RBAC but one watch per namespace). Cluster-wide is what the Go
implementations of this pattern do, and what the RBAC of a fleet controller grants anyway. A
controller whose targets of a kind all live in one namespace declares it
(``targets=[Target(kind, namespace=...)]``): that kind's caches then watch only that namespace, which
a ServiceAccount allowed only there can list.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from kubeloop.cache import (
    CacheNotSynced,
    Event,
    FrozenDict,
    InformerHandle,
    InformerNotReady,
    SharedCache,
    Subscription,
    SubscriptionClosed,
)
from kubeloop.client import ApiResource, ClientConnectionError, ResourceRef, UnknownResource
from kubeloop.controller._request import Request
from kubeloop.controller._spec import Target
from kubeloop.meta import DEFAULT_CLUSTER, RESYNC
from kubeloop.metrics import LIVE_TARGETS

__all__ = [
    "ClusterUnreachable",
    "KindNotServed",
    "TargetError",
    "TargetForbidden",
    "TargetIndex",
    "TargetNotDeclared",
    "TargetNotSynced",
    "Targets",
    "UnknownCluster",
]

log = logging.getLogger("kubeloop.controller")

CacheKey = tuple[str, str]
"""(cluster, ``group/version/plural``): one target cache."""
TargetKey = tuple[str, str, str, str]
"""(cluster, ``group/version/plural``, namespace, name): one target ("" namespace: cluster-scoped)."""


class TargetError(Exception):
    """``watch_target`` could not watch the target; the reconcile fails and is retried with backoff."""


class UnknownCluster(TargetError, LookupError):
    """The target's cluster is not (or no longer) known to the cache."""


class KindNotServed(TargetError, LookupError):
    """The target's kind is not served by that cluster's API (CRD not installed, or a typo)."""


class ClusterUnreachable(TargetError, ConnectionError):
    """The target's cluster did not answer (discovery of the kind failed to connect)."""


class TargetNotDeclared(TargetError, LookupError):
    """The controller declares its targets' kinds (``Controller(targets=[...])``) and this one is not
    among them: the RBAC rules derived from that list would not let it read the kind."""


class TargetNotSynced(TargetError, CacheNotSynced):
    """The target's cache has not finished its first list yet. Uncaught, the run does not count it
    as an error: it parks the request, without holding a worker, and runs it again once the cache
    synced (or its list failed); caught, the parent is queued again when the cache syncs."""


class TargetForbidden(TargetError, PermissionError):
    """The target's cluster refuses to list the kind to these credentials (401: not accepted; 403:
    no list/watch permission at the scope of its cache). Known from the first answer: the reconcile fails
    at once and that parent backs off; the message is the server's."""


def resource_key(api: ApiResource) -> str:
    """``group/version/plural`` (core group as ``core``), as the cache and the emulator's stats name it."""
    return f"{api.group or 'core'}/{api.version}/{api.plural}"


class TargetIndex:
    """Which parents watch which targets (sans-IO): the index target events are looked up in."""

    def __init__(self) -> None:
        self._parents: dict[TargetKey, set[Request]] = {}
        self._targets: dict[Request, set[TargetKey]] = {}
        self._per_cache: dict[CacheKey, int] = {}  # targets (with at least one parent) in each cache

    def __len__(self) -> int:
        """The number of distinct targets watched."""
        return len(self._parents)

    def parents(self, target: TargetKey) -> Iterable[Request]:
        """The parents watching ``target`` (a copy: safe to iterate while the index changes)."""
        return tuple(self._parents.get(target, ()))

    def parents_in(self, cache: CacheKey) -> set[Request]:
        """The parents watching any target in ``cache``."""
        return {p for t, ps in self._parents.items() if (t[0], t[1]) == cache for p in ps}

    def targets(self, parent: Request) -> frozenset[TargetKey]:
        """What ``parent`` watches."""
        return frozenset(self._targets.get(parent, ()))

    def watches_any(self, parent: Request) -> bool:
        """Whether ``parent`` watches anything (asked after every reconcile: no copy)."""
        return parent in self._targets

    def caches(self) -> dict[CacheKey, int]:
        """Each cache in use and how many targets it serves."""
        return dict(self._per_cache)

    def add(self, parent: Request, target: TargetKey) -> None:
        """``parent`` watches ``target`` from now on."""
        mine = self._targets.setdefault(parent, set())
        if target in mine:
            return
        mine.add(target)
        parents = self._parents.get(target)
        if parents is None:
            parents = self._parents[target] = set()
            cache: CacheKey = (target[0], target[1])
            self._per_cache[cache] = self._per_cache.get(cache, 0) + 1
        parents.add(parent)

    def replace(self, parent: Request, targets: Iterable[TargetKey]) -> list[CacheKey]:
        """``parent`` watches exactly ``targets`` now; returns the caches no target needs any more."""
        wanted = set(targets)
        for t in wanted:
            self.add(parent, t)
        old = self._targets.get(parent)
        if old is None:
            return []
        unused: list[CacheKey] = []
        for t in old - wanted:
            self._unlink(parent, t, unused)
        old &= wanted
        if not old:
            del self._targets[parent]
        return unused

    def drop_cluster(self, cluster: str) -> tuple[list[CacheKey], set[Request]]:
        """Forget every target in ``cluster`` and every parent in it. Returns the caches now unused
        and the parents elsewhere that watched a target there (to reconcile again: it is gone)."""
        unused: list[CacheKey] = []
        for parent in [p for p in self._targets if p.cluster == cluster]:
            unused += self.replace(parent, ())
        orphaned: set[Request] = set()
        for target in [t for t in self._parents if t[0] == cluster]:
            for parent in self._parents[target].copy():
                orphaned.add(parent)
                self._targets[parent].discard(target)
                if not self._targets[parent]:
                    del self._targets[parent]
                self._unlink(parent, target, unused, owned=False)
        return unused, orphaned

    def _unlink(self, parent: Request, target: TargetKey, unused: list[CacheKey], owned: bool = True) -> None:
        if owned:
            self._targets[parent].discard(target)
        parents = self._parents.get(target)
        if parents is None:
            return
        parents.discard(parent)
        if parents:
            return
        del self._parents[target]
        cache: CacheKey = (target[0], target[1])
        left = self._per_cache[cache] - 1
        if left:
            self._per_cache[cache] = left
        else:
            del self._per_cache[cache]
            unused.append(cache)


@dataclass(eq=False)
class _TargetCache:
    handle: InformerHandle
    sub: Subscription
    pump: asyncio.Task[None] | None = None
    waiter: asyncio.Task[None] | None = None  # until the first list is in


class Targets:
    """The dynamic targets of one running controller (see the module docstring).

    ``enqueue(request)`` puts a parent's request on the controller's work queue. `run` (a task of
    the controller's) owns the tasks that deliver what a subscription queued (its first list,
    and the live events behind it); live events otherwise reach the index at once (a sink).
    """

    def __init__(self, controller: str, cache: SharedCache, enqueue: Callable[[Request], None], *,
                 declared: Collection[str | Target] | None = None) -> None:
        self.controller = controller
        self.declared = None if declared is None else tuple(d if isinstance(d, Target) else Target(d) for d in declared)
        self._declared: dict[tuple[str, str], Target] = {}  # (group, Kind or plural): versions do not matter
        for d in self.declared or ():
            ref = ResourceRef.parse(d.kind)
            self._declared[(ref.group, ref.name)] = d
        self.cache = cache
        self.index = TargetIndex()
        self._enqueue = enqueue
        self._caches: dict[CacheKey, _TargetCache] = {}
        self._tg: asyncio.TaskGroup | None = None
        self._closed = asyncio.Event()
        self.caches_opened = 0
        self.caches_released = 0
        LIVE_TARGETS.add(self)

    async def run(self) -> None:
        """Deliver the target caches' queued events until `close`."""
        self._closed.clear()
        try:
            async with asyncio.TaskGroup() as tg:
                self._tg = tg
                await self._closed.wait()
        finally:
            self._tg = None
            self.close()

    def watched(self) -> int:
        """How many distinct targets the controller's parents watch."""
        return len(self.index)

    def open_caches(self) -> list[CacheKey]:
        """The {cluster, resource} caches this controller holds for its targets."""
        return list(self._caches)

    async def watch(self, parent: Request, asked: set[TargetKey], resource: str, name: str,
                    namespace: str | None, cluster: str | None) -> FrozenDict | None:
        """Watch a target for ``parent`` (recorded in ``asked``) and return it from the cache."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"watch_target needs a non-empty object name, not {name!r}")
        cluster = cluster or parent.cluster
        try:
            client = self.cache.client(cluster)
        except KeyError as exc:  # its message names the known clusters, and why this one is not known
            raise UnknownCluster(f"cannot watch {resource} {name!r}: {exc.args[0]}") from None
        try:
            api = await client.resolve(resource)
        except UnknownResource as exc:
            raise KindNotServed(f"cannot watch {resource} {name!r} on cluster {cluster!r}: {exc}") from exc
        except ClientConnectionError as exc:
            raise ClusterUnreachable(f"cannot watch {resource} {name!r}: cluster {cluster!r} at "
                                     f"{client.config.server} does not answer: {exc}") from exc
        decl = self._declaration(api, resource, name)
        if api.namespaced:
            ns = namespace if namespace is not None else parent.namespace
            if not ns:
                raise ValueError(f"{resource} is namespaced: watch_target({resource!r}, {name!r}) needs a namespace")
        elif namespace:
            raise ValueError(f"{resource} is cluster-scoped: watch_target({resource!r}, {name!r}) takes no namespace")
        else:
            ns = ""
        scope = None
        if decl is not None:
            if decl.remote and cluster == DEFAULT_CLUSTER:
                raise TargetNotDeclared(f"cannot watch {resource} {name!r} in the manager's own cluster: controller "
                                        f"{self.controller!r} declares {decl!r} (remote: other clusters only)")
            if decl.namespace is not None and api.namespaced:
                if ns != decl.namespace:
                    raise TargetNotDeclared(f"cannot watch {resource} {name!r} in namespace {ns!r}: controller "
                                            f"{self.controller!r} declares {decl!r} (that namespace only)")
                scope = decl.namespace
        key: CacheKey = (cluster, resource_key(api))
        tc = await self._open(key, api, scope)
        target: TargetKey = (*key, ns, name)
        self.index.add(parent, target)
        asked.add(target)
        handle = tc.handle
        if not handle.synced:
            denied = handle.informer.access_error
            if denied is not None:
                where = f"in namespace {scope!r}" if scope else "at the cluster scope"
                raise TargetForbidden(f"cannot watch {resource} {name!r}: cluster {cluster!r} refuses to list "
                                      f"{key[1]} {where} to these credentials: {denied}")
            raise TargetNotSynced(f"the cache of {key[1]} on cluster {cluster!r} ({handle.reason})",
                                  functools.partial(handle.wait_synced, fail_fast=True))
        return handle.get(name, ns)

    def _declaration(self, api: ApiResource, resource: str, name: str) -> Target | None:
        """The `Target` declaring ``api`` (None when the controller declares none); `TargetNotDeclared`
        when it declares targets without this kind."""
        if self.declared is None:
            return None
        decl = self._declared.get((api.group, api.kind)) or self._declared.get((api.group, api.plural))
        if decl is None:
            raise TargetNotDeclared(f"cannot watch {resource} {name!r}: controller {self.controller!r} declares "
                                    f"targets={[d.kind for d in self.declared or ()]!r} without it; add it there "
                                    "(the RBAC rules `kubeloop manifests` derives come from that list)")
        return decl

    def finish(self, parent: Request, asked: set[TargetKey], success: bool) -> None:
        """A reconcile of ``parent`` ended: after a success, what it asked for is what it watches."""
        if not success:
            return  # what it asked for is watched already (`watch`); what it did not ask for is kept
        if not asked and not self.index.watches_any(parent):
            return
        for key in self.index.replace(parent, asked):
            self._close(key)

    def drop_cluster(self, cluster: str) -> None:
        """Forget ``cluster``: its targets, its parents, and the caches held there. Parents elsewhere
        that watched a target there are reconciled again (their target is gone)."""
        unused, orphaned = self.index.drop_cluster(cluster)
        for key in unused:
            self._close(key)
        for key in [k for k in self._caches if k[0] == cluster]:
            self._close(key)
        for parent in orphaned:
            self._enqueue(parent)

    def close(self) -> None:
        """Release every cache (the controller stops)."""
        for key in list(self._caches):
            self._close(key)
        self.index = TargetIndex()
        self._closed.set()

    async def _open(self, key: CacheKey, api: ApiResource, namespace: str | None) -> _TargetCache:
        tc = self._caches.get(key)
        if tc is not None:
            return tc
        if self._tg is None:
            raise TargetError(f"{self.controller} is not running (or stopping): no new target cache")
        handle = await self.cache.informer_for(key[0], api, namespace=namespace)
        tc = self._caches.get(key)
        if tc is not None:  # another reconcile opened it while we waited
            handle.release()
            return tc

        def on_event(ev: Event) -> None:
            self._on_event(key, handle, ev)

        sub = handle.subscribe(replay=False, name=f"{self.controller}:targets:{key[1]}", sink=on_event)
        tc = self._caches[key] = _TargetCache(handle, sub)
        tc.pump = self._tg.create_task(self._pump(key, tc), name=f"{self.controller} targets {key[1]}@{key[0]}")
        if not handle.synced:
            tc.waiter = self._tg.create_task(self._await_sync(key, tc),
                                             name=f"{self.controller} targets {key[1]}@{key[0]}: first list")
        self.caches_opened += 1
        log.debug("%s: watching targets of %s on cluster %r", self.controller, key[1], key[0])
        return tc

    async def _await_sync(self, key: CacheKey, tc: _TargetCache) -> None:
        """Queue the parents waiting for this cache when its first list is refused (they fail with
        `TargetForbidden` and back off), and again once it synced (they read it)."""
        handle = tc.handle
        try:
            await handle.wait_synced(None, fail_fast=True)
        except InformerNotReady:
            if handle.informer.stopped or self._caches.get(key) is not tc:
                return  # stopped or released: the pump reopens on next use
            self._wake_parents(key)
            try:
                await handle.wait_synced(None)  # the permission may be granted later
            except InformerNotReady:
                return
        if self._caches.get(key) is tc:
            self._wake_parents(key)

    def _wake_parents(self, key: CacheKey) -> None:
        for parent in self.index.parents_in(key):
            self._enqueue(parent)

    async def _pump(self, key: CacheKey, tc: _TargetCache) -> None:
        sub, handle = tc.sub, tc.handle
        while True:
            try:
                ev = await sub.get()
            except SubscriptionClosed:
                if self._caches.get(key) is tc:  # the informer stopped under us: reopen on next use
                    log.warning("%s: the cache of %s on cluster %r stopped; its parents are reconciled again",
                                self.controller, key[1], key[0])
                    self._close(key)
                    self._wake_parents(key)
                return
            self._on_event(key, handle, ev)
            while (ev := sub.get_nowait()) is not None:  # type: ignore[assignment]
                self._on_event(key, handle, ev)

    def _on_event(self, key: CacheKey, handle: InformerHandle, ev: Event) -> None:
        if ev.type == RESYNC or (ev.initial and not handle.synced):
            return  # the first list: whoever asked waits for it and reads the full cache
        for parent in self.index.parents((key[0], key[1], ev.namespace, ev.name)):
            self._enqueue(parent)

    def _close(self, key: CacheKey) -> None:
        tc = self._caches.pop(key, None)
        if tc is None:
            return
        tc.sub.close()  # its pump returns
        if tc.waiter is not None:
            tc.waiter.cancel()
        tc.handle.release()
        self.caches_released += 1
        log.debug("%s: no target of %s on cluster %r is watched any more", self.controller, key[1], key[0])
