"""`Manager`: many controllers in one process over one shared cache, with leader election, probes,
metrics and graceful shutdown (controller-runtime's Manager).

    manager = Manager(health_port=8081, metrics_port=8080,       # cluster from kubeconfig/in-cluster
                      leader_election=LeaderElection("widgets-operator"))
    manager.add(widgets)                                            # a Controller
    manager.add(reports, needs=[manager.informer("v1/Pod", indexes={...})])
    await manager.run(handle_signals=True)                          # until SIGTERM/SIGINT

Start-up: probes and metrics server -> the default cluster reachable (bounded retry; other clusters
are probed in the background) -> one `SharedCache` ->
every informer any controller (or `informer()`) needs starts at once, on every replica (warm
standby) -> controllers that do not need leadership start -> leader election -> leader-only
controllers start on the leader. Each controller starts its workers once *its* caches synced: a
slow or forbidden informer delays only the controllers that use it. Equal scopes share one watch.

Clusters: ``default`` (the ``client`` or the kubeconfig) is needed: unreachable at start, the
manager fails. Other clusters may come and go (`add_cluster`/`remove_cluster` while running,
`ClustersFromSecrets`): one that is unreachable only delays what uses it (its informers report why
in `cluster_readiness`), never the whole manager. Controllers run on every cluster (or those they
list), also on clusters added while they run: they engage them in the background (docs/targets.md).

Leadership lost: leader-only controllers stop at once (in-flight reconciles are cancelled), the
caches stay warm and the manager campaigns again. Shutdown (`stop()`, or the first SIGTERM/SIGINT
with ``handle_signals``): stop taking work, let in-flight reconciles finish within
``graceful_shutdown_timeout``, release the lease, close the watches. A second signal exits at once.

This module is over 450 lines because the Manager is one state machine (start-up order, clusters
coming and going, leadership or shard membership, readiness, shutdown) over one set of fields: the
cluster methods change the same task group, cache and controllers the start-up and shutdown steps
do. Each step is a short method, and the parts with a life of their own are modules of their own
(election: `_leader.py`/`_lease.py`; sharding: `_sharding.py`/`_membership.py`/`_rendezvous.py`;
clusters from Secrets: `_clusters.py`; probes, signals, managed informers).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Unpack

from kubeloop.cache import Filter, IndexFunc, InformerHandle, Selection, SelectionKeywords, SharedCache
from kubeloop.client import ApiError, Client, KubeloopClientError, Unauthorized
from kubeloop.config import ClusterConfig, load_config
from kubeloop.controller import Controller, Request, ResourceArg, resource_name
from kubeloop.manager._informers import ManagedInformer
from kubeloop.manager._leader import LeaderElector
from kubeloop.manager._lease import LeaderElection
from kubeloop.manager._membership import ShardMember
from kubeloop.manager._probes import ProbeServer
from kubeloop.manager._sharding import Sharding, key_of
from kubeloop.manager._signals import ShutdownSignals
from kubeloop.meta import DEFAULT_CLUSTER
from kubeloop.queue import REAL_CLOCK, Clock, check_clock

__all__ = ["Manager", "ManagerError", "Runnable"]

log = logging.getLogger("kubeloop.manager")

Runnable = Callable[["Manager"], Awaitable[None]]
"""Background work the manager runs (and cancels at shutdown): ``async def fn(manager) -> None``."""

ReadyCheck = Callable[[], str | bool | None]
"""A readiness/health check: None/True/"" when fine, False or a reason string when not."""


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


class ManagerError(RuntimeError):
    """The manager could not start or a component failed; ``str()`` is one readable line."""


@dataclass(eq=False)
class _ControllerEntry:
    controller: Controller
    leader_only: bool
    needs: list[ManagedInformer]
    task: asyncio.Task[None] | None = None


@dataclass(eq=False)
class _RunnableEntry:
    name: str
    fn: Runnable
    leader_only: bool
    task: asyncio.Task[None] | None = None


@dataclass
class _Checks:
    healthz: dict[str, ReadyCheck] = field(default_factory=dict)
    readyz: dict[str, ReadyCheck] = field(default_factory=dict)


def _check_reason(check: ReadyCheck) -> str | None:
    try:
        got = check()
    except Exception as exc:
        return f"check raised {type(exc).__name__}: {exc}"
    if got is None or got is True or got == "":
        return None
    return "failed" if got is False else str(got)


def _check_coordination(leader_election: object, sharding: object) -> None:
    """One replica at a time (`LeaderElection`) or keys spread over replicas (`Sharding`), not both."""
    if leader_election is not None and not isinstance(leader_election, LeaderElection):
        raise TypeError(f"leader_election takes a kubeloop.LeaderElection(name, ...) or None, "
                        f"not {leader_election!r}")
    if sharding is not None and not isinstance(sharding, Sharding):
        raise TypeError(f"sharding takes a kubeloop.Sharding(name, ...) or None, not {sharding!r}")
    if sharding is not None and leader_election is not None:
        raise ValueError("choose leader_election or sharding, not both: sharding already decides which "
                         "replica runs each key")


class Manager:
    """Runs controllers over shared caches (see the module docstring).

    Clusters: ``client`` (the ``default`` cluster), or, without one, the cluster found by
    `kubeloop.config.load_config` (``kubeconfig``, ``context``, ``namespace``: explicit path, then
    ``KUBECONFIG``, in-cluster, ``~/.kube/config``); `add_cluster`/`remove_cluster` add and remove
    more, before start or while running (docs/targets.md).

    Leader election: ``leader_election`` is a `LeaderElection` value (the Lease's name, namespace,
    identity, timings; one value instead of six keyword arguments, validated where it is built).
    The Lease lives in its ``namespace`` or, when that is None, the default cluster's default
    namespace. Controllers need leadership unless added with ``leader_election=False``.

    Sharding: ``sharding`` is a `Sharding` value (instead of leader election): every replica runs
    the controllers that would need leadership, each reconciling only the keys it owns among the
    live replicas (or, in ``"broadcast"`` mode, every key); see docs/sharding.md.

    Endpoints: ``health_port`` serves ``/healthz`` and ``/readyz``, ``metrics_port`` serves
    ``/metrics`` (None: off; 0: a free port, see `health_url`/`metrics_url`; equal ports share one
    server), bound to ``bind_address``.

    ``clock``: the time the controllers schedule by (their queues, ``requeue_after``, debounce,
    backoff) and ``ctx.now()`` reads; `kubeloop.testing.VirtualClock` in tests. Leases, probes and
    HTTP stay on real time.
    """

    def __init__(
        self,
        client: Client | None = None,
        *,
        kubeconfig: str | None = None,
        context: str | None = None,
        namespace: str | None = None,
        leader_election: LeaderElection | None = None,
        health_port: int | None = None,
        metrics_port: int | None = None,
        bind_address: str = "0.0.0.0",
        graceful_shutdown_timeout: float = 30.0,
        connect_timeout: float = 30.0,
        cache_grace_period: float = 30.0,
        cache_options: Mapping[str, Any] | None = None,
        readiness_log_interval: float = 1.0,
        clock: Clock = REAL_CLOCK,
        sharding: Sharding | None = None,
    ) -> None:
        self._owned: list[Client] = []
        if client is None:
            client = Client(load_config(kubeconfig, context=context, namespace=namespace))
            self._owned.append(client)
        self._clients: dict[str, Client] = {DEFAULT_CLUSTER: client}
        self._namespace = namespace
        _check_coordination(leader_election, sharding)
        self.leader_election = leader_election
        self.sharding = sharding
        self.shard_member: ShardMember | None = None
        self._probes = ProbeServer(health_port=health_port, metrics_port=metrics_port, host=bind_address,
                                   readiness=self.readiness, liveness=self.liveness, details=self._details)
        self.graceful_shutdown_timeout = graceful_shutdown_timeout
        self.connect_timeout = connect_timeout
        self.cache_grace_period = cache_grace_period
        self.cache_options = dict(cache_options or {})
        self.readiness_log_interval = readiness_log_interval
        self.clock = check_clock(clock)
        self.cache: SharedCache | None = None
        self.elector: LeaderElector | None = None
        self._controllers: list[_ControllerEntry] = []
        self._runnables: list[_RunnableEntry] = []
        self._informers: list[ManagedInformer] = []
        self._warm: list[InformerHandle] = []
        self._checks = _Checks()
        self._tg: asyncio.TaskGroup | None = None
        self._state = "new"
        self._failure: str | None = None
        self._stop_requested = asyncio.Event()
        self._started = asyncio.Event()
        self._done = asyncio.Event()
        self._leading_changed = asyncio.Event()
        self._leader_work_running = False
        self._task: asyncio.Task[None] | None = None
        self._aux: dict[str, asyncio.Task[None]] = {}
        self._started_at = 0.0
        self._unreachable: dict[str, str] = {}  # remote cluster -> why it could not be reached yet
        self._static_clusters: set[str] = {DEFAULT_CLUSTER}  # what controllers/informers started on

    # ------------------------------------------------------------------ building

    @property
    def clusters(self) -> list[str]:
        return list(self._clients)

    def client(self, cluster: str = DEFAULT_CLUSTER) -> Client:
        """The client of ``cluster``."""
        try:
            return self._clients[cluster]
        except KeyError:
            raise KeyError(f"unknown cluster {cluster!r} (known: {', '.join(self._clients)})") from None

    @property
    def namespace(self) -> str:
        """The default namespace (``--namespace``, else the kubeconfig context's or the pod's)."""
        return self._namespace or self._clients[DEFAULT_CLUSTER].default_namespace

    def add_cluster(self, name: str, client: Client | ClusterConfig | None = None, *, kubeconfig: str | None = None,
                    context: str | None = None) -> Client:
        """Add a cluster, before start or while running; returns its client.

        ``client``: a `Client` (yours: `remove_cluster` leaves it open), or a `ClusterConfig` or
        ``kubeconfig`` path (+ ``context``) the manager makes a client of (and closes on removal).
        Controllers run on it unless their ``clusters`` list leaves it out; added while running,
        the running ones engage it: their sources there start in the background and feed their one
        queue once synced. Its reachability is checked in the background: unreachable, it is
        reported by `cluster_readiness`, never fatal, and delays nothing on the other clusters.
        """
        if self._state in ("stopping", "stopped"):
            raise RuntimeError(f"cannot add a cluster: the manager is already {self._state}")
        if not name or not isinstance(name, str):
            raise ValueError(f"a cluster needs a non-empty name, not {name!r}")
        if name in self._clients:
            raise ValueError(f"cluster {name!r} already added")
        if client is None:
            if kubeconfig is None:
                raise TypeError("add_cluster needs a client, a ClusterConfig or a kubeconfig path")
            client = load_config(kubeconfig, context=context)
        if isinstance(client, ClusterConfig):
            client = Client(client)
            self._owned.append(client)
        elif not isinstance(client, Client):
            raise TypeError(f"add_cluster takes a kubeloop.Client or a ClusterConfig, not {type(client).__name__}")
        self._clients[name] = client
        if self.cache is not None and self._tg is not None:
            self.cache.add_cluster(name, client)
            self._probe_cluster(self._tg, name, client)
            log.info("cluster %r added (%s)", name, client.config.server)
            for e in self._controllers:
                e.controller.engage_cluster(name)  # those running there open their sources (in the background)
            self._aux[f"warm {name}"] = self._tg.create_task(self._warm_cluster(name), name=f"cluster {name}: warm")
        return client

    async def _warm_cluster(self, name: str) -> None:
        """Open the informers of `informer()` (those on every cluster) and keep those every controller
        needs on a cluster added at run time, on every replica (warm standby: a leader-only
        controller that starts later finds them synced)."""
        assert self.cache is not None
        try:
            for inf in self._informers:
                await inf.open_cluster(self.cache, name)
            for e in self._controllers:
                for spec in e.controller.spec.sources_on(name):
                    self._warm.append(await self.cache.informer_for(name, spec.resource, **spec.informer_args()))
        except Exception as exc:  # the controllers' own engagement retries and reports
            log.warning("cluster %r: cannot keep its informers warm: %s", name, exc)
        finally:
            if self._aux.get(f"warm {name}") is asyncio.current_task():
                del self._aux[f"warm {name}"]

    async def remove_cluster(self, name: str) -> None:
        """Remove a cluster while running (or before start): its informers stop (their watches
        close), the controllers drop its queued requests, sources and targets (parents that watched a
        target there are reconciled again), and its client is closed if the manager made it."""
        client = self._detach(name)
        if client is not None:
            await client.close()

    async def replace_cluster(self, name: str, client: Client | ClusterConfig) -> Client:
        """Swap a cluster's client (new credentials, new server): `remove_cluster` then `add_cluster`,
        with no moment in between where the name is unknown. The controllers reopen their sources on
        the new client (engaged as a new cluster); its target caches are rebuilt on demand."""
        old = self._detach(name)
        try:
            return self.add_cluster(name, client)
        finally:
            if old is not None:
                await old.close()

    def _detach(self, name: str) -> Client | None:
        """Forget cluster ``name`` everywhere now; returns its client if the manager must close it."""
        if name == DEFAULT_CLUSTER:
            raise ValueError("the default cluster cannot be removed")
        try:
            client = self._clients.pop(name)
        except KeyError:
            raise KeyError(f"unknown cluster {name!r} (known: {', '.join(self._clients)})") from None
        for e in self._controllers:
            e.controller.forget_cluster(name)
        for inf in self._informers:
            inf.drop_cluster(name)
        for handle in [h for h in self._warm if h.cluster == name]:
            handle.release()
            self._warm.remove(handle)
        for task in (self._aux.pop(f"cluster {name}", None), self._aux.pop(f"warm {name}", None)):
            if task is not None:
                task.cancel()  # a warm-up in flight takes no more handles
        self._unreachable.pop(name, None)
        if self.cache is not None and name in self.cache.clusters:
            self.cache.remove_cluster(name)
        log.info("cluster %r removed", name)
        if client in self._owned:
            self._owned.remove(client)
            return client
        return None

    def add(self, controller: Controller, *, leader_election: bool = True,
            needs: Iterable[ManagedInformer] = ()) -> Controller:
        """Run ``controller`` (before start). ``leader_election=False``: it runs on every replica.

        ``needs``: informers (from `informer`) its workers must wait for, besides its own sources.
        """
        self._require_new("add a controller")
        if any(e.controller.name == controller.name for e in self._controllers):
            raise ValueError(f"a controller named {controller.name!r} is already added (names must be unique)")
        self._controllers.append(_ControllerEntry(controller, leader_election, list(needs)))
        return controller

    def add_runnable(self, fn: Runnable, *, name: str | None = None, leader_election: bool = False) -> None:
        """Run ``await fn(manager)`` in the background (cancelled at shutdown; on the leader only
        with ``leader_election=True``, cancelled when leadership is lost). An exception stops the
        manager with an error."""
        self._require_new("add a runnable")
        self._runnables.append(_RunnableEntry(name or str(getattr(fn, "__name__", "runnable")), fn, leader_election))

    def informer(self, resource: ResourceArg, selection: Selection | None = None, *, cluster: str | None = None,
                 indexes: Mapping[str, IndexFunc] | None = None, filter: Filter | None = None,
                 **keywords: Unpack[SelectionKeywords]) -> ManagedInformer:
        """An informer (with ``indexes``) kept open for the manager's life; see `ManagedInformer`.

        What it keeps: ``selection`` and/or its fields as keywords (`kubeloop.cache.Selection`), and
        of those only the objects ``filter`` accepts (as on a controller's sources). Same scope as a
        controller's source: the same watch. ``cluster`` None: every cluster. ``resource``: a
        ``group/version/Kind`` name or a typed resource class (`kubeloop.resources.CustomResource`).
        """
        self._require_new("add an informer")
        inf = ManagedInformer(resource_name(resource), Selection.merged(selection, keywords), cluster=cluster,
                              indexes=indexes or {}, filter=filter)
        self._informers.append(inf)
        return inf

    def add_healthz_check(self, name: str, check: ReadyCheck) -> None:
        """A liveness check for ``/healthz``: return None/True when fine, False or a reason when not."""
        self._checks.healthz[name] = check

    def add_readyz_check(self, name: str, check: ReadyCheck) -> None:
        """A readiness check for ``/readyz`` (same convention as `add_healthz_check`)."""
        self._checks.readyz[name] = check

    @property
    def controllers(self) -> list[Controller]:
        return [e.controller for e in self._controllers]

    @property
    def informers(self) -> list[ManagedInformer]:
        """The informers `informer()` declared (what `kubeloop manifests` derives read rules from)."""
        return list(self._informers)

    @property
    def runnables(self) -> list[str]:
        return [r.name for r in self._runnables]

    @property
    def runnable_reads(self) -> list[tuple[str, str | None]]:
        """(resource, namespace or None) the runnables list and watch, from each one's ``reads``
        attribute (`ClustersFromSecrets` declares its Secrets): what `kubeloop manifests` grants them."""
        return [(str(r), ns) for e in self._runnables for r, ns in getattr(e.fn, "reads", ())]

    def _require_new(self, what: str) -> None:
        if self._state != "new":
            raise RuntimeError(f"cannot {what}: the manager is already {self._state}")

    # ------------------------------------------------------------------ state

    @property
    def is_leader(self) -> bool:
        """True while leader-only work may run (always, without leader election)."""
        return self.elector.is_leader if self.elector is not None else self._state == "running"

    @property
    def health_url(self) -> str | None:
        """Where ``/healthz`` and ``/readyz`` answer once started (None: off, or not started)."""
        return self._probes.health_url

    @property
    def metrics_url(self) -> str | None:
        """Where ``/metrics`` answers once started (None: off, or not started)."""
        return self._probes.metrics_url

    @property
    def state(self) -> str:
        """new, starting, running, stopping or stopped."""
        return self._state

    @property
    def failure(self) -> str | None:
        """Why the manager stopped with an error (None: it did not)."""
        return self._failure

    async def idle(self, timeout: float = 30.0, *, settle: float = 0.05) -> None:  # noqa: ASYNC109
        """Wait until no controller has work to do now: no ready key in any queue and no reconcile
        running, for ``settle`` seconds in a row (work arriving meanwhile restarts the wait).

        For tests ("the operator has caught up"), not for production logic. Keys delayed into the
        future (``requeue_after``, error backoff) do not count, so a periodic controller is idle
        between its runs. Raises `TimeoutError` after ``timeout`` seconds.
        """
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(timeout):
            quiet_since: float | None = None
            while True:
                busy = any(c.queue.core.depth or c.queue.processing_count for c in self.controllers)
                now = loop.time()
                if busy:
                    quiet_since = None
                elif quiet_since is None:
                    quiet_since = now
                elif now - quiet_since >= settle:
                    return
                await asyncio.sleep(min(settle, 0.01) if settle > 0 else 0)

    def _informer_reasons(self, clusters: Iterable[str]) -> list[str]:
        cache = self.cache
        if cache is None:
            return []
        reasons = []
        for scope, reason in cache.not_ready(clusters).items():
            if reason.startswith("forbidden"):
                reason = f"{reason}; {permission_hint(scope)}"
            reasons.append(f"informer {scope}: {reason}")
        return reasons

    def cluster_readiness(self) -> dict[str, list[str]]:
        """Per cluster besides those the controllers started on (added at run time, e.g. by
        `ClustersFromSecrets`, or used by targets only): why it is not ready (empty: ready), including
        controllers still engaging it; and each cluster a controller's ``clusters`` names that is not
        added yet. Such a cluster never makes the manager unready."""
        out: dict[str, list[str]] = {}
        for name in self._clients:
            if name in self._static_clusters:
                continue
            reasons = [f"unreachable: {self._unreachable[name]}"] if name in self._unreachable else []
            reasons += [f"controller {c.name}: its sources here have not synced yet (its other clusters "
                        "are not affected)" for c in self.controllers if name in c.unsynced_clusters]
            out[name] = reasons + self._informer_reasons([name])
        for c in self.controllers:
            for name in c.clusters or ():
                if name not in self._clients:
                    out.setdefault(name, []).append(f"not added yet: controller {c.name} runs on it once it is")
        return out

    def readiness(self) -> list[str]:
        """Why the manager is not ready (an empty list: ready). What ``/readyz`` answers.

        Counts the informers of the clusters controllers started on; the other clusters' are in
        `cluster_readiness` (one unreachable remote cluster must not take the manager out of service).
        """
        if self._state != "running":
            return [f"manager is {self._state}"]
        reasons = self._informer_reasons(self._static_clusters)
        leading = self.is_leader
        for e in self._controllers:
            if (not e.leader_only or leading) and not e.controller.ready:
                reasons.append(f"controller {e.controller.name}: starting (waiting for its caches)")
        member = self.shard_member
        if member is not None and not member.known.is_set():
            reasons.append(f"{member.description}: membership not known yet"
                           + (f" ({member.last_error})" if member.last_error else ""))
        elector = self.elector
        if elector is not None and not elector.known.is_set():
            reasons.append(f"leader election: {elector.description}: leader not known yet"
                           + (f" ({elector.last_error})" if elector.last_error else ""))
        for name, check in self._checks.readyz.items():
            why = _check_reason(check)
            if why:
                reasons.append(f"{name}: {why}")
        return reasons

    @property
    def ready(self) -> bool:
        return not self.readiness()

    def liveness(self) -> list[str]:
        """Why the manager is not healthy (an empty list: healthy). What ``/healthz`` answers."""
        reasons = [f"manager failed: {self._failure}"] if self._failure else []
        for name, check in self._checks.healthz.items():
            why = _check_reason(check)
            if why:
                reasons.append(f"{name}: {why}")
        return reasons

    async def wait_ready(self, timeout: float | None = None, *, interval: float = 0.02) -> bool:  # noqa: ASYNC109
        """Wait until ready (False on timeout or when the manager stopped first)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._state == "running" and self.ready:
                return True
            if self._state == "stopped" or (deadline is not None and time.monotonic() >= deadline):
                return False
            await asyncio.sleep(interval)

    async def wait_leader(self, timeout: float | None = None, *, interval: float = 0.02) -> bool:  # noqa: ASYNC109
        """Wait until this manager leads and its leader-only controllers are ready."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self.is_leader and self._leader_work_running and all(
                    e.controller.ready for e in self._controllers if e.leader_only):
                return True
            if self._state == "stopped" or (deadline is not None and time.monotonic() >= deadline):
                return False
            await asyncio.sleep(interval)

    # ------------------------------------------------------------------ lifetime

    async def run(self, *, handle_signals: bool = False) -> None:
        """Run until `stop()` (or, with ``handle_signals``, SIGTERM/SIGINT); raise `ManagerError`
        if the manager could not start or a component failed."""
        if handle_signals:
            with ShutdownSignals(lambda _sig: self.stop()):
                await self._run()
        else:
            await self._run()

    async def start(self, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """Run in the background; return once everything is launched (not necessarily synced:
        see `wait_ready`). Raises `ManagerError` if start-up failed."""
        self._task = asyncio.create_task(self._run(), name="kubeloop manager")
        started = asyncio.ensure_future(self._started.wait())
        try:
            await asyncio.wait([started, self._task], timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            started.cancel()
        if self._task.done():
            self._task.result()  # raises the start-up failure
            raise ManagerError("the manager stopped during start-up")
        if not self._started.is_set():
            await self.close()
            raise ManagerError(f"the manager did not start within {timeout}s")

    def stop(self) -> None:
        """Ask for a graceful shutdown (returns at once; `run()` returns when it is done)."""
        self._stop_requested.set()

    async def close(self) -> None:
        """Shut down gracefully and wait for it; raise `ManagerError` if the manager had failed.

        The lifecycle convention of every long-lived kubeloop object: `stop()` asks and returns at
        once, ``await close()`` stops and waits, ``async with`` closes at the end of the block."""
        self.stop()
        task = self._task
        if task is not None:
            self._task = None
            await task
        elif self._state not in ("new", "stopped"):
            await self._done.wait()

    async def __aenter__(self) -> Manager:
        await self.start()
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        if e is None:
            await self.close()
            return
        with contextlib.suppress(ManagerError):  # the body's exception wins
            await self.close()

    def _fail(self, message: str) -> None:
        if self._failure is None:
            self._failure = message
            log.error("manager: %s", message)
        self.stop()

    async def _run(self) -> None:
        if self._state != "new":
            raise ManagerError(f"a Manager runs once (this one is {self._state})")
        self._state = "starting"
        self._started_at = time.monotonic()
        try:
            try:
                await self._probes.start()
            except OSError as exc:
                raise ManagerError(str(exc.strerror or exc)) from None
            await self._check_cluster(DEFAULT_CLUSTER, self._clients[DEFAULT_CLUSTER])
            if self._stop_requested.is_set():
                return  # stopped (a signal) while waiting for an unreachable cluster
            async with SharedCache(self._clients, grace_period=self.cache_grace_period,
                                   **self.cache_options) as cache:
                self.cache = cache
                async with asyncio.TaskGroup() as tg:
                    self._tg = tg
                    try:
                        await self._launch(tg, cache)
                    except Exception as exc:
                        self._fail(f"start-up failed: {exc}")
                    self._state = "running"
                    self._started.set()
                    await self._stop_requested.wait()
                    self._state = "stopping"
                    await self._shutdown()
                self._tg = None
        finally:
            self._state = "stopped"
            self._started.set()
            await self._probes.stop()
            for client in self._owned:
                await client.close()
            self._done.set()
            log.info("manager stopped%s", f" with an error: {self._failure}" if self._failure else "")
        if self._failure:
            raise ManagerError(self._failure)

    async def _check_cluster(self, name: str, client: Client, *, forever: bool = False) -> None:
        """Reach the cluster (GET /version) with a bounded retry (``forever``: until it answers,
        noting why not in `cluster_readiness`); one-line error naming the URL."""
        url = client.config.server
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
            left = deadline - time.monotonic()
            if forever:
                self._unreachable[name] = f"{url}: {err}"
                if attempt == 1:
                    log.warning("cluster %r at %s not reachable (%s); what uses it waits", name, url, err)
                await asyncio.sleep(min(30.0, 0.5 * 2 ** min(attempt, 6)))
                continue
            if left <= 0:
                raise ManagerError(f"cannot reach cluster {name!r} at {url} (gave up after {attempt} attempts "
                                   f"in {self.connect_timeout:g}s): {err}") from None
            log.warning("cluster %r at %s not reachable yet (%s); retrying", name, url, err)
            with contextlib.suppress(TimeoutError):  # a stop request ends the wait
                await asyncio.wait_for(self._stop_requested.wait(), min(1.0, left))
            if self._stop_requested.is_set():
                return

    def _probe_cluster(self, tg: asyncio.TaskGroup, name: str, client: Client) -> None:
        """Check a remote cluster in the background: unreachable, it is reported, never fatal."""
        if f"cluster {name}" in self._aux:
            return
        async def probe() -> None:
            try:
                await self._check_cluster(name, client, forever=True)
            except ManagerError as exc:  # rejected credentials: reported, and the informers say so too
                self._unreachable[name] = str(exc)
                log.error("%s", exc)
            else:
                self._unreachable.pop(name, None)
            finally:
                self._aux.pop(f"cluster {name}", None)

        self._unreachable[name] = "not checked yet"
        self._aux[f"cluster {name}"] = tg.create_task(probe(), name=f"cluster {name}: reachability")

    async def _launch(self, tg: asyncio.TaskGroup, cache: SharedCache) -> None:
        for name, client in self._clients.items():
            if name != DEFAULT_CLUSTER:
                self._probe_cluster(tg, name, client)
        known = cache.clusters
        self._static_clusters = {DEFAULT_CLUSTER}
        for inf in self._informers:
            self._static_clusters.update([inf.cluster] if inf.cluster else known)
        for e in self._controllers:
            self._static_clusters.update(c for c in e.controller.clusters or known if c in known)
        # every informer anyone needs starts now, on every replica: warm standby (a cluster a
        # controller names that is not added yet is engaged when it is)
        for inf in self._informers:
            await inf.open(cache)
        for e in self._controllers:
            c = e.controller
            clusters = c.clusters if c.clusters is not None else known
            for spec in c.sources:
                for cluster in [spec.cluster] if spec.cluster else clusters:
                    if cluster in known:
                        self._warm.append(await cache.informer_for(cluster, spec.resource, **spec.informer_args()))
        for e in self._controllers:
            if not e.leader_only:
                self._start_controller(tg, e)
        for r in self._runnables:
            if not r.leader_only:
                self._start_runnable(tg, r)
        if self.sharding is not None:
            self._start_sharding(tg)
        if self.leader_election is not None:
            self.elector = LeaderElector(self._clients[DEFAULT_CLUSTER], self.leader_election,
                                         on_change=lambda _leading: self._leading_changed.set())
            self._aux["elector"] = tg.create_task(self._guard("leader election", self.elector.run()),
                                                  name="leader election")
            self._aux["leadership"] = tg.create_task(self._guard("leadership", self._follow_leadership(tg)),
                                                     name="leadership")
        else:
            self._start_leader_work(tg)
        self._aux["readiness"] = tg.create_task(self._guard("readiness log", self._log_readiness()),
                                                name="readiness log")
        n_leader = sum(e.leader_only for e in self._controllers)
        log.info("manager started: %d controller(s)%s, %d informer(s) shared%s%s",
                 len(self._controllers),
                 f" ({n_leader} after leader election on {self.elector.description})" if self.elector else "",
                 len(cache.informers()),
                 f"; probes on {self.health_url}" if self.health_url else "",
                 f"; metrics on {self.metrics_url}/metrics" if self.metrics_url else "")

    async def _guard(self, what: str, aw: Awaitable[None]) -> None:
        """Run a background part; an exception fails the manager (never the TaskGroup's owner)."""
        try:
            await aw
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._fail(f"{what} failed: {type(exc).__name__}: {exc}")

    # ------------------------------------------------------------------ controllers and leadership

    def _start_controller(self, tg: asyncio.TaskGroup, e: _ControllerEntry) -> None:
        async def run() -> None:
            for inf in e.needs:
                await inf.wait_synced(e.controller.cache_sync_timeout)
            fence = self.elector.may_lead if e.leader_only and self.elector is not None else None
            gate = self.shard_member if e.leader_only else None
            # the clusters known at start sync before its workers start; later ones are engaged
            await e.controller.run(self.cache, clients=self._clients, fence=fence,  # type: ignore[arg-type]
                                   clock=self.clock, gate=gate, startup_clusters=self._static_clusters)

        e.task = tg.create_task(self._guard(f"controller {e.controller.name}", run()),
                                name=f"controller {e.controller.name}")

    def _start_runnable(self, tg: asyncio.TaskGroup, r: _RunnableEntry) -> None:
        async def run() -> None:
            result = r.fn(self)
            if inspect.isawaitable(result):
                await result

        r.task = tg.create_task(self._guard(f"runnable {r.name}", run()), name=f"runnable {r.name}")

    def _start_leader_work(self, tg: asyncio.TaskGroup) -> None:
        for e in self._controllers:
            if e.leader_only:
                self._start_controller(tg, e)
        for r in self._runnables:
            if r.leader_only:
                self._start_runnable(tg, r)
        self._leader_work_running = True

    async def _stop_leader_work(self, drain_timeout: float) -> None:
        self._leader_work_running = False
        await asyncio.gather(*(self._stop_controller(e, drain_timeout) for e in self._controllers if e.leader_only),
                             *(self._cancel(r.task) for r in self._runnables if r.leader_only))

    async def _stop_controller(self, e: _ControllerEntry, drain_timeout: float) -> None:
        task, e.task = e.task, None
        if task is None:
            return
        if e.controller.ready and not task.done():
            try:
                await asyncio.wait_for(e.controller.stop(drain_timeout), drain_timeout + 5.0)
            except TimeoutError:
                log.warning("controller %s did not stop within %.1fs; cancelling it", e.controller.name,
                            drain_timeout + 5.0)
        await self._cancel(task)

    @staticmethod
    async def _cancel(task: asyncio.Task[None] | None) -> None:
        if task is None:
            return
        if not task.done():
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def _follow_leadership(self, tg: asyncio.TaskGroup) -> None:
        """Start leader-only work when elected, stop it at once when the lease is lost."""
        elector = self.elector
        assert elector is not None
        while True:
            await self._leading_changed.wait()
            self._leading_changed.clear()
            if elector.is_leader and not self._leader_work_running:
                self._start_leader_work(tg)
            elif not elector.is_leader and self._leader_work_running:
                log.warning("leadership lost: stopping leader-only controllers now (caches stay warm)")
                await self._stop_leader_work(0.0)

    # ------------------------------------------------------------------ sharding

    def _start_sharding(self, tg: asyncio.TaskGroup) -> None:
        """Join the sharding group; the controllers that need leadership are gated by it."""
        assert self.sharding is not None
        gated = [e.controller for e in self._controllers if e.leader_only]

        def in_flight() -> list[Request]:
            return [r for c in gated for r in c.in_flight]

        def keys() -> list[str]:
            return sorted({key_of(r.cluster, r.namespace, r.name) for c in gated if c.ready
                           for r in c.cached_requests()})

        def on_gain() -> None:
            member = self.shard_member
            for c in gated:
                if c.ready and member is not None:
                    c.enqueue_all(where=member.owns)

        self.shard_member = ShardMember(self._clients[DEFAULT_CLUSTER], self.sharding, in_flight=in_flight,
                                        on_gain=on_gain, keys=keys)
        self._aux["sharding"] = tg.create_task(self._guard("sharding", self.shard_member.run()), name="sharding")

    def _details(self) -> list[str]:
        """Lines ``/readyz?verbose`` adds (the shard map)."""
        member = self.shard_member
        return [member.detail()] if member is not None else []

    async def _log_readiness(self) -> None:
        """Log readiness changes: INFO while starting up, WARNING for reasons that outlast start-up."""
        last: list[str] | None = None
        last_level = logging.INFO
        grace = 3 * self.readiness_log_interval
        while True:
            reasons = self.readiness()
            starting = time.monotonic() - self._started_at < grace and last != []
            level = logging.INFO if not reasons or starting else logging.WARNING
            if reasons != last or level > last_level:
                if reasons:
                    log.log(level, "not ready: %s", "; ".join(reasons))
                else:
                    log.info("ready")
                last, last_level = reasons, level
            await asyncio.sleep(self.readiness_log_interval)

    async def _shutdown(self) -> None:
        """Stop taking work, drain in-flight reconciles, release the lease, drop the caches."""
        timeout = self.graceful_shutdown_timeout
        log.info("shutting down: letting in-flight reconciles finish (up to %.1fs)", timeout)
        await self._cancel(self._aux.pop("leadership", None))
        await asyncio.gather(*(self._stop_controller(e, timeout) for e in self._controllers),
                             *(self._cancel(r.task) for r in self._runnables))
        self._leader_work_running = False
        if self.shard_member is not None:
            await self._cancel(self._aux.pop("sharding", None))
            await self.shard_member.leave()
        if self.elector is not None:
            await self._cancel(self._aux.pop("elector", None))
            if self.leader_election is not None and self.leader_election.release_on_cancel:
                await self.elector.release()
        await self._cancel(self._aux.pop("readiness", None))
        for key in [k for k in self._aux if k.startswith(("cluster ", "warm "))]:
            await self._cancel(self._aux.pop(key, None))
        for inf in self._informers:
            inf.close()
        for handle in self._warm:
            handle.release()
        self._warm.clear()

    def __repr__(self) -> str:
        return (f"Manager(clusters={self.clusters}, controllers={[c.name for c in self.controllers]}, "
                f"state={self._state}, leader={self.is_leader})")
