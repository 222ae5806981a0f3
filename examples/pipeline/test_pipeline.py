"""The Pipeline over three clusters: the hub (the `client` fixture: the emulator, or the cluster of
KUBELOOP_TEST_KUBECONFIG) holds the Pipelines; "staging" and "production" are two more emulators
holding their targets. Watches are counted at those emulators with ``/_kubeloop/stats``."""

from __future__ import annotations

import collections
import gc
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from kubeloop import Client, Context, Controller, Manager, Request, Result
from kubeloop.config import ClusterConfig, load_kubeconfig
from kubeloop.testing import APIServer, eventually, install_crd

from .controller import PIPELINE, reconcile
from .controller import install_crd as install_pipeline_crd

RELEASES = "delivery.example.com/v1/releases"  # the emulators' stats key of the targets' kind


def target_crd(kind: str, plural: str) -> dict[str, Any]:
    """A namespaced kind in group delivery.example.com (as a HelmRelease would be) with a status."""
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.delivery.example.com"},
            "spec": {"group": "delivery.example.com", "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": {"type": "object",
                                                                  "x-kubernetes-preserve-unknown-fields": True}}}]}}


@asynccontextmanager
async def remote_cluster() -> AsyncIterator[tuple[APIServer, ClusterConfig]]:
    """Another cluster: an emulator with the Release kind installed, and its connection config."""
    async with APIServer(bare=True) as server:
        config = load_kubeconfig(server.kubeconfig)
        async with Client(config, qps=None) as client:
            await install_crd(client, target_crd("Release", "releases"))
        yield server, config


async def set_release(config: ClusterConfig, name: str, ready: bool, kind: str = "Release") -> None:
    """Create or update a target with its Ready condition."""
    async with Client(config, qps=None) as client:
        ref = f"delivery.example.com/v1/{kind}"
        obj = {"apiVersion": "delivery.example.com/v1", "kind": kind, "metadata": {"name": name, "namespace": "default"}}
        await client.apply(obj, field_manager="test")
        cond = {"type": "Ready", "status": str(ready), "reason": "Test", "message": "",
                "lastTransitionTime": "2026-01-01T00:00:00Z"}
        await client.patch_status(ref, name, {"status": {"conditions": [cond]}}, namespace="default")


def pipeline(name: str, envs: list[tuple[str, str, str]], kind: str = "Release") -> dict[str, Any]:
    """A Pipeline; ``envs``: (environment, cluster, target name)."""
    return {"apiVersion": "examples.kubeloop.dev/v1", "kind": "Pipeline", "metadata": {"name": name},
            "spec": {"environments": [
                {"name": env, "cluster": cluster,
                 "target": {"apiVersion": "delivery.example.com/v1", "kind": kind, "name": target,
                            "namespace": "default"}}
                for env, cluster, target in envs]}}


def environments(client: Client, ns: str, name: str, want: dict[str, str],
                 field: str = "ready") -> Callable[[], Any]:
    """A check: the Pipeline's status shows ``want`` (environment -> ``field``)."""
    async def check() -> dict[str, Any]:
        status = (await client.get(PIPELINE, name, namespace=ns)).get("status") or {}
        got = {e["name"]: e.get(field) for e in status.get("environments") or ()}
        assert got == want, f"pipeline {name}: {field} {got}"
        return status
    return check


def ready_condition(status: dict[str, Any]) -> str:
    return next(c["status"] for c in status["conditions"] if c["type"] == "Ready")


def counting_controller(runs: collections.Counter[str]) -> Controller:
    async def counted(req: Request, ctx: Context) -> Result | None:
        runs[req.name] += 1
        return await reconcile(req, ctx)
    return Controller("pipeline", for_=PIPELINE, reconcile=counted, clusters=["default"])


async def test_pipeline_across_three_clusters(client: Client, namespace: str) -> None:
    ns = namespace
    await install_pipeline_crd(client)
    async with remote_cluster() as (staging_server, staging), remote_cluster() as (prod_server, production):
        await set_release(staging, "shop", ready=True)
        await set_release(production, "shop", ready=False)
        runs: collections.Counter[str] = collections.Counter()
        manager = Manager(client, cache_grace_period=0.2)
        manager.add_cluster("staging", staging)
        manager.add(counting_controller(runs))
        async with manager:
            manager.add_cluster("production", production)  # at run time
            await client.create(pipeline("shop", [("staging", "staging", "shop"),
                                                  ("production", "production", "shop")]), namespace=ns)
            await client.create(pipeline("blog", [("staging", "staging", "shop")]), namespace=ns)
            status = await eventually(environments(client, ns, "shop", {"staging": "True", "production": "False"}))
            assert ready_condition(status) == "False"
            await eventually(environments(client, ns, "blog", {"staging": "True"}))

            # two pipelines sharing a target (and a kind) share one watch
            assert staging_server.stats()["open_watches"].get(RELEASES) == 1
            assert prod_server.stats()["open_watches"].get(RELEASES) == 1

            # a target's change re-reconciles its pipeline, and only it
            await manager.idle()
            before = dict(runs)
            await set_release(production, "shop", ready=True)
            status = await eventually(environments(client, ns, "shop", {"staging": "True", "production": "True"}))
            assert ready_condition(status) == "True"
            await manager.idle()
            assert runs["shop"] > before["shop"] and runs["blog"] == before["blog"]

            # deleting the last pipeline using production's kind closes that watch there
            await client.delete(PIPELINE, "shop", namespace=ns)
            await eventually(lambda: RELEASES not in prod_server.stats()["open_watches"], what="watch closed")
            assert staging_server.stats()["open_watches"].get(RELEASES) == 1  # still blog's

            # removing a cluster at run time: its watches close, its pipelines say why
            await manager.remove_cluster("staging")
            await eventually(lambda: not staging_server.stats()["open_watches"], what="staging's watches closed")
            await eventually(environments(client, ns, "blog", {"staging": "UnknownCluster"}, field="reason"))
            assert manager.clusters == ["default", "production"]
            await manager.remove_cluster("production")
            await eventually(lambda: not prod_server.stats()["open_watches"], what="production's watches closed")


async def test_target_of_a_kind_installed_later(client: Client, namespace: str) -> None:
    ns = namespace
    await install_pipeline_crd(client)
    async with remote_cluster() as (_server, staging):
        manager = Manager(client, cache_grace_period=0.2)
        manager.add_cluster("staging", staging)
        manager.add(counting_controller(collections.Counter()))
        async with manager:
            await client.create(pipeline("app", [("staging", "staging", "app")], kind="Rollout"), namespace=ns)
            await eventually(environments(client, ns, "app", {"staging": "KindNotServed"}, field="reason"))
            async with Client(staging, qps=None) as c:
                await install_crd(c, target_crd("Rollout", "rollouts"))
            await set_release(staging, "app", ready=True, kind="Rollout")
            await eventually(environments(client, ns, "app", {"staging": "True"}), timeout=20)


async def test_unreachable_cluster_fails_only_what_uses_it(client: Client, namespace: str,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    ns = namespace
    await install_pipeline_crd(client)
    manager = Manager(client, cache_grace_period=0.2)
    manager.add_cluster("far", ClusterConfig(server="http://127.0.0.1:9"))  # nothing listens there
    manager.add(counting_controller(collections.Counter()))
    with caplog.at_level(logging.WARNING, "kubeloop"):
        async with manager:
            assert await manager.wait_ready(10), manager.readiness()
            await eventually(lambda: any("unreachable" in r for r in manager.cluster_readiness()["far"]))
            await client.create(pipeline("far", [("prod", "far", "x")]), namespace=ns)
            await eventually(environments(client, ns, "far", {"prod": "ClusterUnreachable"}, field="reason"),
                             timeout=30)
            assert manager.ready, manager.readiness()
            await manager.remove_cluster("far")
    gc.collect()
    assert not [r for r in caplog.records if "Unclosed" in r.getMessage()]
