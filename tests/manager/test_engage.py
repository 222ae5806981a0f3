"""Running controllers engage clusters added at run time (multicluster-runtime's "engage"): their
sources start on the new cluster and feed the one queue; removal stops them; `replace_cluster`
reopens them on the new client; an unreachable new cluster delays nothing else. The remote clusters
are bare emulators, their watches counted with ``/_kubeloop/stats``."""

from __future__ import annotations

import gc
import logging
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from kubeloop import Client, Context, Controller, LeaderElection, Manager, Request, Result
from kubeloop.config import ClusterConfig, load_kubeconfig
from kubeloop.controller import ReconcileFn
from kubeloop.testing import APIServer, eventually

CONFIGMAPS = "core/v1/configmaps"
SECRETS = "core/v1/secrets"


@asynccontextmanager
async def remote(namespace: str, *, port: int = 0) -> AsyncIterator[tuple[APIServer, ClusterConfig]]:
    """Another cluster: a bare emulator with ``namespace`` created, and its connection config."""
    async with APIServer(bare=True, port=port) as server:
        config = load_kubeconfig(server.kubeconfig)
        async with Client(config, qps=None) as c:
            await c.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        yield server, config


async def put_configmap(config: ClusterConfig, namespace: str, name: str) -> None:
    async with Client(config, qps=None) as c:
        await c.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}, namespace=namespace)


def recorder(seen: list[Request]) -> ReconcileFn:
    async def reconcile(req: Request, ctx: Context) -> Result | None:
        seen.append(req)
        return None
    return reconcile


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_running_controllers_engage_a_cluster_added_later(client: Client, ns: str,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    """A controller on every cluster starts its sources on a cluster added while it runs (objects
    already there and later changes reach its one queue); one with ``clusters=["default"]`` does
    not; removing the cluster closes the watches there."""
    everywhere: list[Request] = []
    pinned: list[Request] = []
    manager = Manager(client, cache_grace_period=0.2)
    manager.add(Controller("everywhere", for_="v1/ConfigMap", namespace=ns, reconcile=recorder(everywhere)))
    manager.add(Controller("home-only", for_="v1/Secret", namespace=ns, clusters=["default"],
                           reconcile=recorder(pinned)))
    shared = manager.informer("v1/ConfigMap", namespace=ns)  # every cluster, those added later included
    with caplog.at_level(logging.WARNING):
        async with manager, remote(ns) as (west, config):
            assert await manager.wait_ready(10), manager.readiness()
            await put_configmap(config, ns, "before")
            manager.add_cluster("west", config)
            await eventually(lambda: Request("west", ns, "before") in everywhere, what="existing object reconciled")
            await put_configmap(config, ns, "after")
            await eventually(lambda: Request("west", ns, "after") in everywhere, what="new object reconciled")
            assert shared.get("after", ns, cluster="west") is not None
            watches = west.stats()["open_watches"]
            assert watches.get(CONFIGMAPS) == 1 and SECRETS not in watches  # home-only stays home
            assert manager.cluster_readiness()["west"] == [] and manager.ready
            assert not [r for r in pinned if r.cluster == "west"]

            await manager.remove_cluster("west")
            await eventually(lambda: not west.stats()["open_watches"], what="west's watches closed")
            assert manager.controllers[0].unsynced_clusters == []
    gc.collect()
    assert not [r for r in caplog.records if "Unclosed" in r.getMessage() or "stopped; its changes" in r.getMessage()]


async def test_a_listed_cluster_is_engaged_when_it_appears(client: Client, ns: str) -> None:
    seen: list[Request] = []
    manager = Manager(client, cache_grace_period=0.2)
    manager.add(Controller("listed", for_="v1/ConfigMap", namespace=ns, clusters=["default", "east"],
                           reconcile=recorder(seen)))
    async with manager, remote(ns) as (east, config):
        assert await manager.wait_ready(10), manager.readiness()
        assert manager.cluster_readiness()["east"] == ["not added yet: controller listed runs on it once it is"]
        await put_configmap(config, ns, "e")
        manager.add_cluster("east", config)
        await eventually(lambda: Request("east", ns, "e") in seen)
        assert east.stats()["open_watches"].get(CONFIGMAPS) == 1
        assert manager.cluster_readiness()["east"] == []
        manager.add_cluster("other", ClusterConfig(server="http://127.0.0.1:9"))
        await manager.idle()
        assert "other" not in manager.controllers[0].unsynced_clusters  # not listed: not engaged
        await manager.remove_cluster("other")
        await manager.remove_cluster("east")


async def test_an_unreachable_new_cluster_delays_nothing_else(client: Client, ns: str) -> None:
    """A cluster that does not answer yet: the controller keeps reconciling the others (one worker),
    `cluster_readiness` says which controller waits for it, and its sources sync once it answers."""
    seen: list[Request] = []
    port = free_port()
    manager = Manager(client, cache_grace_period=0.2)
    ctl = manager.add(Controller("cm", for_="v1/ConfigMap", namespace=ns, reconcile=recorder(seen),
                                 max_concurrent_reconciles=1))
    async with manager:
        assert await manager.wait_ready(10), manager.readiness()
        manager.add_cluster("late", ClusterConfig(server=f"http://127.0.0.1:{port}"))
        await eventually(lambda: ctl.unsynced_clusters == ["late"])
        await eventually(lambda: any("controller cm: its sources here have not synced" in r
                                     for r in manager.cluster_readiness()["late"]))
        ctl.enqueue(Request("late", ns, "early"))  # e.g. from a map function: waits for late's caches
        await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "home"}}, namespace=ns)
        await eventually(lambda: Request("default", ns, "home") in seen)
        assert manager.ready, manager.readiness()
        assert Request("late", ns, "early") not in seen

        async with remote(ns, port=port) as (_late, config):  # the cluster answers now
            await put_configmap(config, ns, "far")
            await eventually(lambda: Request("late", ns, "far") in seen, timeout=30, what="engaged once it answers")
            await eventually(lambda: Request("late", ns, "early") in seen, what="the held request ran")
            assert ctl.unsynced_clusters == []
            await manager.remove_cluster("late")


async def test_replace_cluster_reopens_the_sources_on_the_new_client(client: Client, ns: str) -> None:
    seen: list[Request] = []
    manager = Manager(client, cache_grace_period=0.2)
    manager.add(Controller("cm", for_="v1/ConfigMap", namespace=ns, reconcile=recorder(seen)))
    async with manager, remote(ns) as (old, old_config), remote(ns) as (new, new_config):
        await put_configmap(old_config, ns, "on-old")
        await put_configmap(new_config, ns, "on-new")
        manager.add_cluster("edge", old_config)
        await eventually(lambda: Request("edge", ns, "on-old") in seen)
        await manager.replace_cluster("edge", new_config)  # a new server, same name
        await eventually(lambda: Request("edge", ns, "on-new") in seen, what="sources reopened on the new client")
        await eventually(lambda: not old.stats()["open_watches"], what="the old server's watches closed")
        assert new.stats()["open_watches"].get(CONFIGMAPS) == 1
        await put_configmap(new_config, ns, "later")
        await eventually(lambda: Request("edge", ns, "later") in seen)
        await manager.remove_cluster("edge")


async def test_a_standby_keeps_the_informers_of_a_cluster_added_later_warm(client: Client, ns: str) -> None:
    """A replica that does not lead runs no leader-only controller, yet opens its informers on a
    cluster added at run time (warm standby), as it does for the clusters known at start."""
    await client.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "engage-lock"},
                         "spec": {"holderIdentity": "someone-else", "leaseDurationSeconds": 3600,
                                  "renewTime": "2026-01-01T00:00:00.000000Z"}}, namespace=ns)
    manager = Manager(client, cache_grace_period=0.2, leader_election=LeaderElection("engage-lock", namespace=ns))
    ctl = manager.add(Controller("cm", for_="v1/ConfigMap", namespace=ns, reconcile=recorder([])))
    async with manager, remote(ns) as (west, config):
        assert await manager.wait_ready(10), manager.readiness()
        assert not manager.is_leader and not ctl.ready
        manager.add_cluster("west", config)
        await eventually(lambda: west.stats()["open_watches"].get(CONFIGMAPS) == 1, what="a warm informer on west")
        await manager.remove_cluster("west")
        await eventually(lambda: not west.stats()["open_watches"], what="west's watches closed")
