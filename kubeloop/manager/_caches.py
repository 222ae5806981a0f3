"""The Manager's ``caches`` runnable: its clusters reached, one `SharedCache`, the informers kept warm.

At start: the ``default`` cluster answers ``GET /version`` (connection errors and 5xx retried for
``connect_timeout`` seconds; a 401 fails at once), every other cluster is checked in the
background (unreachable, it is reported by `Manager.cluster_readiness` and delays only what uses
it), then one `SharedCache` opens every informer a controller or `Manager.informer` needs, on every
replica: the warm standby (a replica that is not the leader keeps its caches synced, so a
hand-over reconciles from memory). A cluster added at run time gets the same: a background check,
and its informers kept warm. Its readiness: the informers of the clusters known at start (other
clusters never make the manager unready).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import Any

from kubeloop.cache import InformerHandle, SharedCache
from kubeloop.client import ApiError, Client, KubeloopClientError, Unauthorized
from kubeloop.controller import Controller
from kubeloop.manager._errors import ManagerError
from kubeloop.manager._informers import ManagedInformer
from kubeloop.manager._runnable import Stop
from kubeloop.meta import DEFAULT_CLUSTER, Backoff

__all__ = ["Caches", "permission_hint"]

log = logging.getLogger("kubeloop.manager")

_RECONNECT = Backoff(1.0, 30.0, jitter=0, reset_after=None)
"""Waits between attempts to reach an unreachable cluster: 1 s doubling to 30 s."""


def permission_hint(scope: str) -> str:
    """The RBAC rule an informer of ``scope`` (as `Scope.describe` writes it) needs."""
    parts = scope.split()
    resource = parts[0].partition(":")[2] if parts else ""
    group, _, rest = resource.partition("/")
    plural = rest.rpartition("/")[2] or resource
    group = "" if group == "core" else group
    ns = next((p.partition("=")[2] for p in parts[1:] if p.startswith("namespace=")), None)
    where = f'in namespace "{ns}"' if ns else "at the cluster scope"
    return f'needs RBAC permission to list and watch resource "{plural}" in API group "{group}" {where}'


class Caches:
    """The ``caches`` runnable (see the module docstring). ``clients``: the manager's clusters (its
    live mapping); ``controllers()``: the controllers whose sources are kept warm."""

    name = "caches"
    needs_leader = False

    def __init__(self, clients: Mapping[str, Client], controllers: Callable[[], list[Controller]], *,
                 connect_timeout: float, grace_period: float, options: Mapping[str, Any]) -> None:
        self.clients = clients
        self._controllers = controllers
        self.connect_timeout = connect_timeout
        self.grace_period = grace_period
        self.options = dict(options)
        self.informers: list[ManagedInformer] = []
        self.cache: SharedCache | None = None
        self.static: set[str] = {DEFAULT_CLUSTER}  # the clusters known at start (what readiness counts)
        self.unreachable: dict[str, str] = {}  # remote cluster -> why it could not be reached yet
        self._warm: list[InformerHandle] = []
        self._tasks: dict[str, asyncio.Task[None]] = {}  # per cluster: "check <name>", "warm <name>"
        self._tg: asyncio.TaskGroup | None = None

    # ------------------------------------------------------------------ the runnable

    async def run(self, stop: Stop) -> None:
        await self.reach(DEFAULT_CLUSTER, self.clients[DEFAULT_CLUSTER], stop=stop)
        if stop.is_set():
            return  # stopped (a signal) while waiting for an unreachable cluster
        async with SharedCache(self.clients, grace_period=self.grace_period, **self.options) as cache:
            self.cache = cache
            try:
                async with asyncio.TaskGroup() as tg:
                    self._tg = tg
                    for name, client in self.clients.items():
                        if name != DEFAULT_CLUSTER:
                            self._check(name, client)
                    await self._open(cache)
                    tellers = [tg.create_task(self._tell(stop, synced)) for synced in
                               [*(h.wait_synced() for h in self._warm), *(i.wait_synced() for i in self.informers)]]
                    stop.started()
                    await stop.wait()
                    self._tg = None
                    for task in [*tellers, *self._tasks.values()]:
                        task.cancel()
            finally:
                self._tg = None
                for inf in self.informers:
                    inf.close()
                for handle in self._warm:
                    handle.release()
                self._warm.clear()

    async def _open(self, cache: SharedCache) -> None:
        """Every informer anyone needs, now, on every replica (a cluster a controller names that is not
        added yet is engaged when it is)."""
        known = cache.clusters
        controllers = self._controllers()
        self.static = {DEFAULT_CLUSTER}
        for inf in self.informers:
            self.static.update([inf.cluster] if inf.cluster else known)
        for c in controllers:
            self.static.update(x for x in c.clusters or known if x in known)
        for inf in self.informers:
            await inf.open(cache)
        for c in controllers:
            clusters = c.clusters if c.clusters is not None else known
            for spec in c.sources:
                for cluster in [spec.cluster] if spec.cluster else clusters:
                    if cluster in known:
                        self._warm.append(await spec.open(cache, cluster))

    @staticmethod
    async def _tell(stop: Stop, synced: Coroutine[Any, Any, None]) -> None:
        """Tell the manager when an informer opened at start has synced (readiness waits for it)."""
        with contextlib.suppress(Exception):  # InformerNotReady: stopped; the readiness says why
            await synced
        stop.changed()

    def readiness(self) -> list[str]:
        """The informers of the clusters known at start that are not ready, and why."""
        return self.informer_reasons(self.static)

    def informer_reasons(self, clusters: Iterable[str]) -> list[str]:
        """Why the informers on ``clusters`` are not ready (a forbidden one names the permission)."""
        cache = self.cache
        if cache is None:
            return []
        reasons = []
        for scope, reason in cache.not_ready(clusters).items():
            if reason.startswith("forbidden"):
                reason = f"{reason}; {permission_hint(scope)}"
            reasons.append(f"informer {scope}: {reason}")
        return reasons

    # ------------------------------------------------------------------ clusters at run time

    def add_cluster(self, name: str, client: Client) -> bool:
        """A cluster added while running: the cache knows it and it is checked in the background.
        False when the caches do not run (yet, or any more): the start-up does it all then."""
        if self.cache is None or self._tg is None:
            return False
        self.cache.add_cluster(name, client)
        self._check(name, client)
        return True

    def warm(self, name: str) -> None:
        """Keep the informers of `Manager.informer` (those on every cluster) and those every controller
        needs on ``name`` warm, on every replica (a leader-only controller that starts later finds
        them synced)."""
        if self._tg is not None:
            self._tasks[f"warm {name}"] = self._tg.create_task(self._warm_cluster(name), name=f"cluster {name}: warm")

    async def _warm_cluster(self, name: str) -> None:
        assert self.cache is not None
        try:
            for inf in self.informers:
                await inf.open_cluster(self.cache, name)
            for c in self._controllers():
                for spec in c.spec.sources_on(name):
                    self._warm.append(await spec.open(self.cache, name))
        except Exception as exc:  # the controllers' own engagement retries and reports
            log.warning("cluster %r: cannot keep its informers warm: %s", name, exc)
        finally:
            if self._tasks.get(f"warm {name}") is asyncio.current_task():
                del self._tasks[f"warm {name}"]

    def remove_cluster(self, name: str) -> None:
        """Forget ``name``: its informers are given back and stopped, its background work cancelled."""
        for inf in self.informers:
            inf.drop_cluster(name)
        for handle in [h for h in self._warm if h.cluster == name]:
            handle.release()
            self._warm.remove(handle)
        for task in (self._tasks.pop(f"check {name}", None), self._tasks.pop(f"warm {name}", None)):
            if task is not None:
                task.cancel()  # a warm-up in flight takes no more handles
        self.unreachable.pop(name, None)
        if self.cache is not None and name in self.cache.clusters:
            self.cache.remove_cluster(name)

    # ------------------------------------------------------------------ reachability

    def _check(self, name: str, client: Client) -> None:
        """Check a remote cluster in the background: unreachable, it is reported, never fatal."""
        assert self._tg is not None
        if f"check {name}" in self._tasks:
            return

        async def check() -> None:
            try:
                await self.reach(name, client)
            except ManagerError as exc:  # rejected credentials: reported, and the informers say so too
                self.unreachable[name] = str(exc)
                log.error("%s", exc)
            else:
                self.unreachable.pop(name, None)
            finally:
                self._tasks.pop(f"check {name}", None)

        self.unreachable[name] = "not checked yet"
        self._tasks[f"check {name}"] = self._tg.create_task(check(), name=f"cluster {name}: reachability")

    async def reach(self, name: str, client: Client, *, stop: Stop | None = None) -> None:
        """Reach the cluster (GET /version). With ``stop`` (the default cluster at start): retried for
        ``connect_timeout`` seconds or until stopped, then a one-line `ManagerError` naming the URL;
        without: retried until it answers, noting why not in ``unreachable``."""
        url = client.config.server
        forever = stop is None
        deadline = float("inf") if forever else time.monotonic() + self.connect_timeout
        attempt = 0
        while True:
            attempt += 1
            try:
                await client.request_json("GET", "/version")
                return
            except Unauthorized as exc:
                raise ManagerError(f"cluster {name!r} at {url} rejected the credentials: {exc}") from None
            except ApiError as exc:
                if exc.code is not None and exc.code < 500 and exc.code != 429:
                    return  # the server answers: reachable (a 403/404 on /version is its business)
                err: BaseException = exc
            except (KubeloopClientError, OSError) as exc:
                err = exc
            if stop is None:
                self.unreachable[name] = f"{url}: {err}"
                if attempt == 1:
                    log.warning("cluster %r at %s not reachable (%s); what uses it waits", name, url, err)
                await asyncio.sleep(_RECONNECT.delay(attempt - 1))
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                raise ManagerError(f"cannot reach cluster {name!r} at {url} (gave up after {attempt} attempts "
                                   f"in {self.connect_timeout:g}s): {err}") from None
            log.warning("cluster %r at %s not reachable yet (%s); retrying", name, url, err)
            with contextlib.suppress(TimeoutError):  # a stop request ends the wait
                await asyncio.wait_for(stop.wait(), min(1.0, left))
            if stop.is_set():
                return
