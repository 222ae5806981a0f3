"""`Manager`: many controllers in one process over one shared cache, with leader election, probes,
metrics and graceful shutdown (controller-runtime's Manager).

    manager = Manager(health_port=8081, metrics_port=8080,       # cluster from kubeconfig/in-cluster
                      leader_election=LeaderElection("widgets-operator"))
    manager.add(widgets)                                            # a Controller
    manager.add(reports, needs=[manager.informer("v1/Pod", indexes={...})])
    manager.add_runnable(ClustersFromSecrets("fleet"))              # any Runnable, or async fn(manager)
    await manager.run(handle_signals=True)                          # until SIGTERM/SIGINT

The Manager runs runnables (`_runnable`): everything it does is one, in a group, and the groups
start in a fixed order and stop in the reverse one: ``servers`` (probes and metrics; webhook
servers) -> ``caches`` (the default cluster reached, one `SharedCache`, every informer anyone
needs opened on every replica: warm standby) -> ``others`` (what runs on every replica) ->
``election`` (leader election or sharding) -> ``leader`` (what needs leadership: started when
elected, stopped at once when the lease is lost; at once under sharding or without election).
Each controller starts its workers once *its* caches synced: a slow or forbidden informer delays
only the controllers that use it. Equal scopes share one watch.

Its life is one phase value (`_phase`: new -> starting -> running -> stopping -> stopped, with an
explicit table of moves), and waiting for readiness or leadership waits on the changes the
runnables report, not on a timer.

Clusters: ``default`` (the ``client`` or the kubeconfig) is needed: unreachable at start, the
manager fails. Other clusters may come and go (`add_cluster`/`remove_cluster` while running,
`ClustersFromSecrets`): one that is unreachable only delays what uses it (its informers report why
in `cluster_readiness`), never the whole manager. Controllers run on every cluster (or those they
list), also on clusters added while they run: they engage them in the background (docs/targets.md).

Shutdown (`stop()`, or the first SIGTERM/SIGINT with ``handle_signals``): stop taking work, let
in-flight reconciles finish within ``graceful_shutdown_timeout``, release the lease, close the
watches. A second signal exits at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Unpack

from kubeloop.cache import Filter, IndexFunc, Selection, SelectionKeywords, SharedCache
from kubeloop.client import Client
from kubeloop.config import ClusterConfig, load_config
from kubeloop.controller import Controller, ResourceArg, resource_name
from kubeloop.manager._caches import Caches
from kubeloop.manager._controllers import ControllerRunnable
from kubeloop.manager._coordination import Election, ShardingRunnable, check_coordination
from kubeloop.manager._errors import ManagerError
from kubeloop.manager._informers import ManagedInformer
from kubeloop.manager._leader import LeaderElector
from kubeloop.manager._lease import LeaderElection
from kubeloop.manager._membership import ShardMember
from kubeloop.manager._phase import Lifecycle, Phase
from kubeloop.manager._probes import Probes, ProbeServer, ReadinessLog
from kubeloop.manager._runnable import GROUPS, FunctionRunnable, Runnable, RunnableFn, RunnableGroup
from kubeloop.manager._sharding import Sharding
from kubeloop.manager._signals import ShutdownSignals
from kubeloop.manager._webhooks import (
    ServedWebhooks,
    StorageVersionMigration,
    WebhookCertificates,
    WebhookInstall,
    WebhookOptions,
    WebhookServing,
)
from kubeloop.meta import DEFAULT_CLUSTER
from kubeloop.queue import REAL_CLOCK, Clock, check_clock

if TYPE_CHECKING:
    from kubeloop.webhooks import CertificateSource, Webhooks, WebhookServer

__all__ = ["Manager", "ManagerError"]

log = logging.getLogger("kubeloop.manager")

ReadyCheck = Callable[[], str | bool | None]
"""A readiness/health check: None/True/"" when fine, False or a reason string when not."""


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


def _is_runnable(obj: object) -> bool:
    return callable(getattr(obj, "run", None)) and callable(getattr(obj, "readiness", None)) and \
        hasattr(obj, "needs_leader") and hasattr(obj, "name")


class Manager:
    """Runs controllers and other runnables over shared caches (see the module docstring).

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
        webhook_options: WebhookOptions | None = None,
    ) -> None:
        check_coordination(leader_election, sharding)
        self._owned: list[Client] = []  # clients the manager made (closed at the end, or on removal)
        if client is None:
            client = Client(load_config(kubeconfig, context=context, namespace=namespace))
            self._owned.append(client)
        self._clients: dict[str, Client] = {DEFAULT_CLUSTER: client}
        self._namespace = namespace
        self.leader_election = leader_election
        self.sharding = sharding
        self.graceful_shutdown_timeout = graceful_shutdown_timeout
        self._webhooks = ServedWebhooks(webhook_options or WebhookOptions(), bind_address, connect_timeout)
        self.clock = check_clock(clock)
        self._life = Lifecycle()
        self._checks = _Checks()
        self._controllers: list[ControllerRunnable] = []  # in the order added (also in their groups)
        self._groups = {name: RunnableGroup(name, wait_started=name in ("servers", "caches")) for name in GROUPS}
        self._probes = ProbeServer(health_port=health_port, metrics_port=metrics_port, host=bind_address,
                                   readiness=self.readiness, liveness=self.liveness, details=self._details)
        self._caches = Caches(self._clients, lambda: self.controllers, connect_timeout=connect_timeout,
                              grace_period=cache_grace_period, options=cache_options or {})
        self._coordination: Election | ShardingRunnable | None = None
        if leader_election is not None:
            self._coordination = Election(client, leader_election, lambda _leading: self._life.changed())
        elif sharding is not None:
            self._coordination = ShardingRunnable(client, sharding, self._gated)
        self._task: asyncio.Task[None] | None = None
        self._groups["servers"].add(Probes(self._probes))
        self._groups["caches"].add(self._caches)
        self._groups["others"].add(ReadinessLog(self.readiness, readiness_log_interval))
        if self._coordination is not None:
            self._groups["election"].add(self._coordination)

    # ------------------------------------------------------------------ clusters

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

    @property
    def cache(self) -> SharedCache | None:
        """The shared cache (None before the ``caches`` group started)."""
        return self._caches.cache

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
        phase = self._life.phase
        if phase in (Phase.STOPPING, Phase.STOPPED):
            raise RuntimeError(f"cannot add a cluster: the manager is already {phase}")
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
        if self._caches.add_cluster(name, client):
            log.info("cluster %r added (%s)", name, client.config.server)
            for c in self.controllers:
                c.engage_cluster(name)  # those running there open their sources (in the background)
            self._caches.warm(name)
        return client

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
        for c in self.controllers:
            c.forget_cluster(name)
        self._caches.remove_cluster(name)
        log.info("cluster %r removed", name)
        if client in self._owned:
            self._owned.remove(client)
            return client
        return None

    # ------------------------------------------------------------------ building

    def add(self, controller: Controller, *, leader_election: bool = True,
            needs: Iterable[ManagedInformer] = ()) -> Controller:
        """Run ``controller`` (before start). ``leader_election=False``: it runs on every replica.

        ``needs``: informers (from `informer`) its workers must wait for, besides its own sources.
        """
        self._require_new("add a controller")
        if any(c.name == controller.name for c in self.controllers):
            raise ValueError(f"a controller named {controller.name!r} is already added (names must be unique)")
        runnable = ControllerRunnable(controller, needs_leader=leader_election, needs=list(needs), begin=self._begin)
        self._controllers.append(runnable)
        self._groups["leader" if leader_election else "others"].add(runnable)
        return controller

    def add_runnable(self, runnable: Runnable | RunnableFn, *, name: str | None = None,
                     leader_election: bool | None = None, group: Literal["servers", "others"] = "others") -> None:
        """Run ``runnable`` (before start), in its group (see `kubeloop.manager.Runnable`).

        A `Runnable` says itself whether it needs leadership (``needs_leader``: then it runs in the
        ``leader`` group); ``group="servers"`` starts one that serves (a webhook server) with the probe
        server, before the caches. A function ``async def fn(manager)`` runs until it returns or the
        manager stops (it is cancelled then; named ``name``, or after the function), on the leader
        only with ``leader_election=True`` (cancelled when leadership is lost). An exception from
        either stops the manager with an error.
        """
        self._require_new("add a runnable")
        if group not in ("servers", "others"):
            raise ValueError(f"group must be 'servers' or 'others', not {group!r}")
        if _is_runnable(runnable):
            if name is not None or leader_election is not None:
                raise TypeError("a Runnable declares its name and needs_leader itself; name= and leader_election= "
                                "are for a function")
            r: Runnable = runnable  # type: ignore[assignment]
        elif callable(runnable):
            r = FunctionRunnable(runnable, self, name=name or str(getattr(runnable, "__name__", "runnable")),
                                 needs_leader=bool(leader_election))
        else:
            raise TypeError(f"add_runnable takes a kubeloop.manager.Runnable or an async function (manager), "
                            f"not {runnable!r}")
        if r.needs_leader and group != "others":
            raise ValueError(f"{r.name}: a runnable that needs leadership runs in the leader group, not {group!r}")
        self._groups["leader" if r.needs_leader else group].add(r)

    def add_webhooks(self, webhooks: Webhooks, certificates: CertificateSource | None = None, *,
                     migrate: bool | None = None) -> WebhookServer:
        """Serve ``webhooks`` (a `kubeloop.webhooks.Webhooks`; before start): returns its `WebhookServer`.

        Adds the certificate source and the HTTPS server to the ``servers`` group (every replica
        serves; ``/readyz`` waits for both), on `webhook_options`' port and host.
        ``certificates``: any `kubeloop.webhooks.CertificateSource`; None takes the one
        `WebhookOptions` says (a Secret in a cluster, a cert-manager directory, or the dev loop's,
        which also installs the configurations and the CRDs' conversion for the run). ``migrate``
        (None: `WebhookOptions.migrate`) adds the storage-version migration of the converted CRDs,
        leader-only. A manager serves one set: declare every handler on one `Webhooks`.
        """
        self._require_new("add webhooks")
        return self._webhooks.add(webhooks, certificates, migrate, self._clients[DEFAULT_CLUSTER], self.namespace,
                                  self._groups)

    @property
    def webhooks(self) -> Webhooks | None:
        """The `Webhooks` set `add_webhooks` registered (None: none)."""
        added = self._webhooks.added
        return added[0] if added is not None else None

    @property
    def webhook_server(self) -> WebhookServer | None:
        """Its `WebhookServer` (``url`` and ``port`` once it listens)."""
        added = self._webhooks.added
        return added[1] if added is not None else None

    @property
    def webhook_options(self) -> WebhookOptions:
        """How `add_webhooks` serves (the ``webhook_options`` the manager was made with)."""
        return self._webhooks.options

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
        self._caches.informers.append(inf)
        return inf

    def add_healthz_check(self, name: str, check: ReadyCheck) -> None:
        """A liveness check for ``/healthz``: return None/True when fine, False or a reason when not."""
        self._checks.healthz[name] = check

    def add_readyz_check(self, name: str, check: ReadyCheck) -> None:
        """A readiness check for ``/readyz`` (same convention as `add_healthz_check`)."""
        self._checks.readyz[name] = check

    @property
    def controllers(self) -> list[Controller]:
        """The controllers added, in that order."""
        return [r.controller for r in self._controllers]

    @property
    def informers(self) -> list[ManagedInformer]:
        """The informers `informer()` declared (what `kubeloop manifests` derives read rules from)."""
        return list(self._caches.informers)

    def _added(self) -> list[Runnable]:
        """The runnables `add_runnable` added (not controllers, not the manager's own parts)."""
        own = (ControllerRunnable, Probes, Caches, ReadinessLog, Election, ShardingRunnable, WebhookCertificates,
               WebhookServing, WebhookInstall, StorageVersionMigration)
        return [r for g in self._groups.values() for r in g.members if not isinstance(r, own)]

    @property
    def runnables(self) -> list[str]:
        """The names of the runnables `add_runnable` added."""
        return [r.name for r in self._added()]

    @property
    def runnable_reads(self) -> list[tuple[str, str | None]]:
        """(resource, namespace or None) the runnables list and watch, from each one's ``reads``
        attribute (`ClustersFromSecrets` declares its Secrets): what `kubeloop manifests` grants them."""
        return [(str(res), ns) for r in self._added() for res, ns in getattr(r, "reads", ())]

    def _require_new(self, what: str) -> None:
        if self._life.phase is not Phase.NEW:
            raise RuntimeError(f"cannot {what}: the manager is already {self._life.phase}")

    # ------------------------------------------------------------------ what runnables get

    def _begin(self, controller: Controller, needs_leader: bool) -> Coroutine[Any, Any, None]:
        """The run of ``controller`` (a `ControllerRunnable` starts it): on the shared cache, with the
        clusters known at start syncing first, fenced by leader election or gated by sharding."""
        assert self.cache is not None
        elector = self.elector
        return controller.run(self.cache, clients=self._clients, clock=self.clock,
                              fence=elector.may_lead if needs_leader and elector is not None else None,
                              gate=self.shard_member if needs_leader else None,
                              startup_clusters=self._caches.static)

    def _gated(self) -> list[Controller]:
        """The controllers sharding gates: those that would need leadership."""
        return [r.controller for r in self._controllers if r.needs_leader]

    def _details(self) -> list[str]:
        """Lines ``/readyz?verbose`` adds (the shard map)."""
        member = self.shard_member
        return [member.detail()] if member is not None else []

    # ------------------------------------------------------------------ state

    @property
    def elector(self) -> LeaderElector | None:
        """The leader elector (``leader``, ``identity``, ...), with leader election."""
        return self._coordination.elector if isinstance(self._coordination, Election) else None

    @property
    def shard_member(self) -> ShardMember | None:
        """This replica in its sharding group (``members``, ``owns``, ...), with sharding."""
        return self._coordination.member if isinstance(self._coordination, ShardingRunnable) else None

    @property
    def is_leader(self) -> bool:
        """True while leader-only work may run (always, without leader election)."""
        elector = self.elector
        return elector.is_leader if elector is not None else self._life.phase is Phase.RUNNING

    @property
    def health_url(self) -> str | None:
        """Where ``/healthz`` and ``/readyz`` answer once started (None: off, or not started)."""
        return self._probes.health_url

    @property
    def metrics_url(self) -> str | None:
        """Where ``/metrics`` answers once started (None: off, or not started)."""
        return self._probes.metrics_url

    @property
    def state(self) -> Phase:
        """new, starting, running, stopping or stopped (a `Phase`: equal to those strings)."""
        return self._life.phase

    @property
    def failure(self) -> str | None:
        """Why the manager stopped with an error (None: it did not)."""
        return self._life.failure

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
                busy = any(c.running and (c.queue.core.depth or c.queue.processing_count) for c in self.controllers)
                now = loop.time()
                if busy:
                    quiet_since = None
                elif quiet_since is None:
                    quiet_since = now
                elif now - quiet_since >= settle:
                    return
                await asyncio.sleep(min(settle, 0.01) if settle > 0 else 0)

    def cluster_readiness(self) -> dict[str, list[str]]:
        """Per cluster besides those the controllers started on (added at run time, e.g. by
        `ClustersFromSecrets`, or used by targets only): why it is not ready (empty: ready), including
        controllers still engaging it; and each cluster a controller's ``clusters`` names that is not
        added yet. Such a cluster never makes the manager unready."""
        caches = self._caches
        out: dict[str, list[str]] = {}
        for name in self._clients:
            if name in caches.static:
                continue
            reasons = [f"unreachable: {caches.unreachable[name]}"] if name in caches.unreachable else []
            reasons += [f"controller {c.name}: its sources here have not synced yet (its other clusters "
                        "are not affected)" for c in self.controllers if name in c.unsynced_clusters]
            out[name] = reasons + caches.informer_reasons([name])
        for c in self.controllers:
            for name in c.clusters or ():
                if name not in self._clients:
                    out.setdefault(name, []).append(f"not added yet: controller {c.name} runs on it once it is")
        return out

    def readiness(self) -> list[str]:
        """Why the manager is not ready (an empty list: ready). What ``/readyz`` answers.

        Each running group's runnables say why they are not (the ``leader`` group's while this
        replica leads); the caches count the informers of the clusters controllers started on (the
        other clusters' are in `cluster_readiness`: one unreachable remote cluster must not take the
        manager out of service); then the ``add_readyz_check`` checks.
        """
        phase = self._life.phase
        if phase is not Phase.RUNNING:
            return [f"manager is {phase}"]
        leading = self.is_leader
        reasons = [reason for name, group in self._groups.items() if name != "leader" or leading
                   for reason in group.readiness()]
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
        failure = self._life.failure
        reasons = [f"manager failed: {failure}"] if failure else []
        for name, check in self._checks.healthz.items():
            why = _check_reason(check)
            if why:
                reasons.append(f"{name}: {why}")
        return reasons

    async def wait_ready(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Wait until ready (False on timeout or when the manager stopped first)."""
        return await self._life.until(lambda: self._life.phase is Phase.RUNNING and self.ready, timeout)

    async def wait_leader(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Wait until this manager leads and what needs leadership runs and is ready."""
        leader = self._groups["leader"]
        return await self._life.until(lambda: self.is_leader and leader.running and not leader.readiness(),
                                      timeout)

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
        life = self._life
        self._task = task = asyncio.create_task(self._run(), name="kubeloop manager")
        launched = asyncio.ensure_future(life.until(lambda: life.phase in (Phase.RUNNING, Phase.STOPPED)))
        try:
            await asyncio.wait([launched, task], timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            launched.cancel()
        if task.done():
            task.result()  # raises the start-up failure
            raise ManagerError("the manager stopped during start-up")
        if life.phase is not Phase.RUNNING:
            await self.close()
            raise ManagerError(f"the manager did not start within {timeout}s")

    def stop(self) -> None:
        """Ask for a graceful shutdown (returns at once; `run()` returns when it is done)."""
        self._life.request_stop()

    async def close(self) -> None:
        """Shut down gracefully and wait for it; raise `ManagerError` if the manager had failed.

        The lifecycle convention of every long-lived kubeloop object: `stop()` asks and returns at
        once, ``await close()`` stops and waits, ``async with`` closes at the end of the block."""
        self.stop()
        task = self._task
        if task is not None:
            self._task = None
            await task
        elif self._life.phase not in (Phase.NEW, Phase.STOPPED):
            await self._life.until(lambda: self._life.phase is Phase.STOPPED)

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

    async def _run(self) -> None:
        life = self._life
        life.to(Phase.STARTING)
        try:
            async with asyncio.TaskGroup() as tg:
                try:
                    if await self._start(tg):
                        life.to(Phase.RUNNING)
                        await self._follow_leadership(tg)
                finally:
                    life.to(Phase.STOPPING)
                    await self._shutdown()
        finally:
            if life.phase is not Phase.STOPPING:
                life.to(Phase.STOPPING)
            life.to(Phase.STOPPED)
            for client in self._owned:
                await client.close()
            log.info("manager stopped%s", f" with an error: {life.failure}" if life.failure else "")
        if life.failure:
            raise ManagerError(life.failure)

    async def _start(self, tg: asyncio.TaskGroup) -> bool:
        """Start the groups in order (``leader`` too, unless leader election decides when); False if a
        stop or a failure came first."""
        life = self._life
        for name in ("servers", "caches", "others", "election"):
            if not await self._groups[name].start(tg, life):
                return False
        if not isinstance(self._coordination, Election) and not await self._groups["leader"].start(tg, life):
            return False
        n_leader = sum(r.needs_leader for r in self._controllers)
        elector, cache = self.elector, self.cache
        log.info("manager started: %d controller(s)%s, %d informer(s) shared%s%s",
                 len(self._controllers),
                 f" ({n_leader} after leader election on {elector.description})" if elector else "",
                 len(cache.informers()) if cache is not None else 0,
                 f"; probes on {self.health_url}" if self.health_url else "",
                 f"; metrics on {self.metrics_url}/metrics" if self.metrics_url else "")
        return not life.stop_requested.is_set()

    async def _follow_leadership(self, tg: asyncio.TaskGroup) -> None:
        """Until a stop is asked: with leader election, start the ``leader`` group when elected and stop
        it at once (no grace) when the lease is lost; the caches stay warm."""
        life, leader, elector = self._life, self._groups["leader"], self.elector
        while True:
            await life.until(lambda: life.stop_requested.is_set() or
                             (elector is not None and elector.is_leader != leader.running))
            if life.stop_requested.is_set():
                return
            assert elector is not None
            if elector.is_leader:
                await leader.start(tg, life)
            else:
                log.warning("leadership lost: stopping leader-only controllers now (caches stay warm)")
                await leader.stop(0.0)

    async def _shutdown(self) -> None:
        """Stop the groups in the reverse order: what needs leadership and what runs everywhere first
        (together: stop taking work, drain in-flight reconciles), then leader election or sharding
        (the lease released), the caches (watches closed), the servers."""
        timeout, groups = self.graceful_shutdown_timeout, self._groups
        if groups["others"].running:
            log.info("shutting down: letting in-flight reconciles finish (up to %.1fs)", timeout)
        await asyncio.gather(groups["leader"].stop(timeout), groups["others"].stop(timeout))
        for name in ("election", "caches", "servers"):
            await groups[name].stop(timeout)

    def __repr__(self) -> str:
        return (f"Manager(clusters={self.clusters}, controllers={[c.name for c in self.controllers]}, "
                f"state={self.state}, leader={self.is_leader})")
