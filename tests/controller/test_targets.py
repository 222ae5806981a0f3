"""``ctx.watch_target``: the sans-IO `TargetIndex`, and the data path through real watches
(target event -> index -> the parent's request) on the emulator or a real cluster."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from kubeloop.cache import SharedCache
from kubeloop.client import ApiError, Client
from kubeloop.controller import (
    Context,
    Controller,
    KindNotServed,
    Request,
    Result,
    Target,
    TargetForbidden,
    TargetNotDeclared,
    UnknownCluster,
)
from kubeloop.controller._targets import TargetIndex
from kubeloop.metrics import REGISTRY
from kubeloop.testing import APIServer, install_crd
from kubeloop.testing._cluster import TestCluster
from kubeloop.testing.pytest_plugin import TEST_RETRY
from tests.cli.test_manifests import service_account_client
from tests.client.crds import widget_crd

from .helpers import eventually, running


def metric(name: str, **labels: str) -> float:
    """One sample of kubeloop's registry (0 when absent)."""
    return REGISTRY.get_sample_value(name, labels) or 0.0

# ---------------------------------------------------------------- TargetIndex (no I/O)

A, B = Request("hub", "ns", "a"), Request("hub", "ns", "b")
S1 = ("east", "core/v1/secrets", "ns", "one")
S2 = ("east", "core/v1/secrets", "ns", "two")
W1 = ("west", "apps/v1/deployments", "ns", "web")


def test_index_maps_targets_to_parents_and_counts_caches() -> None:
    idx = TargetIndex()
    idx.add(A, S1)
    idx.add(B, S1)
    idx.add(A, W1)
    assert set(idx.parents(S1)) == {A, B} and set(idx.parents(W1)) == {A}
    assert idx.caches() == {("east", "core/v1/secrets"): 1, ("west", "apps/v1/deployments"): 1}
    assert len(idx) == 2
    assert idx.parents_in(("east", "core/v1/secrets")) == {A, B} and idx.parents_in(("west", "x")) == set()


def test_index_replace_releases_what_is_no_longer_asked_for() -> None:
    idx = TargetIndex()
    idx.replace(A, [S1, W1])
    idx.replace(B, [S1])
    assert idx.replace(A, [S1, S2]) == [("west", "apps/v1/deployments")]  # W1 dropped: its cache is unused
    assert idx.targets(A) == {S1, S2}
    assert idx.replace(A, []) == []  # S1 is still B's
    assert idx.parents(S2) == () and set(idx.parents(S1)) == {B}
    assert idx.replace(B, []) == [("east", "core/v1/secrets")]
    assert len(idx) == 0 and idx.caches() == {} and idx.targets(A) == frozenset()


def test_index_drop_cluster() -> None:
    idx = TargetIndex()
    west_parent = Request("west", "ns", "p")
    idx.replace(A, [S1, W1])
    idx.replace(west_parent, [S2])
    unused, orphaned = idx.drop_cluster("west")
    assert unused == [("west", "apps/v1/deployments")] and orphaned == {A}
    assert idx.targets(A) == {S1} and idx.targets(west_parent) == frozenset()  # west's parents are gone too
    assert idx.parents(S2) == ()
    unused, orphaned = idx.drop_cluster("east")
    assert unused == [("east", "core/v1/secrets")] and orphaned == {A}
    assert len(idx) == 0 and idx.caches() == {}


# ---------------------------------------------------------------- through real watches


def _parent(name: str, target: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"parent": "yes"}},
            "data": {"target": target}}


def _secret(name: str, value: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "stringData": {"v": value}}


async def test_watch_target_reconciles_the_parent_on_change_and_releases(client: Client, namespace: str,
                                                                         cache: SharedCache) -> None:
    seen: dict[str, Any] = {}

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        parent = ctx.get()
        if parent is None:
            return None  # asks for nothing: releases what it watched
        target = await ctx.watch_target("v1/Secret", parent["data"]["target"])
        seen[req.name] = None if target is None else dict(target.get("data") or {})
        return None

    ctl = Controller("targets-test", for_="v1/ConfigMap", namespace=namespace, label_selector="parent=yes",
                     reconcile=reconcile)
    async with running(ctl, cache):
        run = ctl._run  # the current run's targets
        assert run is not None
        targets = run.view.targets
        await client.create(_parent("p", "s1"), namespace=namespace)
        await client.create(_parent("q", "s1"), namespace=namespace)
        await eventually(lambda: seen.get("p", 0) is None and seen.get("q", 0) is None)  # not there yet
        await client.create(_secret("s1", "one"), namespace=namespace)  # created: both parents run again
        await eventually(lambda: seen.get("p") == seen.get("q") == {"v": "b25l"})
        assert targets.open_caches() == [("default", "core/v1/secrets")]  # one cache for both
        secrets_cache = {"cluster": "default", "resource": "core/v1/secrets"}
        assert metric("kubeloop_controller_targets_watched", controller="targets-test") == 1
        assert metric("kubeloop_controller_target_caches", controller="targets-test", **secrets_cache) == 1
        assert metric("kubeloop_cache_informers_open", **secrets_cache) >= 1
        collected = metric("kubeloop_cache_informers_collected_total", **secrets_cache)

        # p points elsewhere: s1 is then only q's
        p = await client.get("v1/ConfigMap", "p", namespace=namespace)
        p["data"]["target"] = "s2"
        await client.replace(p)
        await eventually(lambda: targets.index.targets(Request("default", namespace, "p"))
                         == {("default", "core/v1/secrets", namespace, "s2")})
        await client.patch("v1/Secret", "s1", {"stringData": {"v": "two"}}, namespace=namespace)
        await eventually(lambda: seen.get("q") == {"v": "dHdv"})

        # deleting the parents releases their targets, then the cache
        await client.delete("v1/ConfigMap", "p", namespace=namespace)
        await client.delete("v1/ConfigMap", "q", namespace=namespace)
        await eventually(lambda: len(targets.index) == 0 and targets.open_caches() == [])
        assert metric("kubeloop_controller_targets_watched", controller="targets-test") == 0
        # nobody else in this process reads Secrets: the informer is collected after the grace period
        await eventually(lambda: metric("kubeloop_cache_informers_collected_total", **secrets_cache) > collected)
        assert metric("kubeloop_cache_informers_open", **secrets_cache) == 0


async def test_unknown_kind_and_cluster_are_retried_then_work(client: Client, namespace: str, cache: SharedCache,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    group = f"kl{secrets.token_hex(3)}.example.com"
    errors: list[BaseException] = []
    seen: list[Any] = []

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        try:
            if req.name == "nowhere":
                await ctx.watch_target("v1/Secret", "x", cluster="nowhere")
            seen.append(await ctx.watch_target(f"{group}/v1/Widget", "w1"))
        except (KindNotServed, UnknownCluster) as exc:
            errors.append(exc)
            raise
        return None

    ctl = Controller("targets-later", for_="v1/ConfigMap", namespace=namespace, label_selector="parent=yes",
                     reconcile=reconcile)
    try:
        with caplog.at_level(logging.WARNING, "kubeloop"):
            async with running(ctl, cache):
                await client.create(_parent("nowhere", "-"), namespace=namespace)
                await client.create(_parent("p", "-"), namespace=namespace)
                await eventually(lambda: any(isinstance(e, KindNotServed) for e in errors)
                                 and any(isinstance(e, UnknownCluster) for e in errors))
                await install_crd(client, widget_crd(group))  # the kind is served from now on
                await eventually(lambda: seen and seen[-1] is None, timeout=15)  # asked, and watched
                await client.create({"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w1"},
                                     "spec": {"size": 1}}, namespace=namespace)
                await eventually(lambda: seen and seen[-1] is not None)
        assert any("KindNotServed" in r.getMessage() and group in r.getMessage() for r in caplog.records)
        assert any("unknown cluster 'nowhere'" in r.getMessage() for r in caplog.records)
    finally:
        with contextlib.suppress(ApiError):
            await client.delete("apiextensions.k8s.io/v1/CustomResourceDefinition", f"widgets.{group}")


async def test_declared_targets_are_the_only_kinds_read(client: Client, namespace: str, cache: SharedCache) -> None:
    """``targets=[...]`` (the kinds ``kubeloop manifests`` grants reads on) is enforced: another kind
    is a `TargetNotDeclared` error in the first test that reads it, not a 403 in production. A plural
    or another version of a declared kind is the same kind."""
    got: dict[str, Any] = {}

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        if req.name != "p":
            return None
        got["secret"] = await ctx.watch_target("v1/secrets", "s")
        try:
            await ctx.watch_target("v1/Service", "s")
        except TargetNotDeclared as exc:
            got["error"] = str(exc)
        return None

    ctl = Controller("targets-declared", for_="v1/ConfigMap", namespace=namespace, label_selector="parent=yes",
                     reconcile=reconcile, targets=["v1/Secret"])
    async with running(ctl, cache):
        await client.create(_parent("p", "s"), namespace=namespace)
        await eventually(lambda: "error" in got)
    assert got["secret"] is None
    assert "controller 'targets-declared' declares targets=['v1/Secret'] without it" in got["error"]


async def test_a_target_declared_in_one_namespace_or_remote_is_read_only_there(
        client: Client, namespace: str, cache: SharedCache) -> None:
    """``Target(kind, namespace=...)``: the kind's cache watches that namespace only (what a
    ServiceAccount allowed only there can list) and a read elsewhere is `TargetNotDeclared`;
    ``Target(kind, remote=True)``: a read in the manager's own cluster is `TargetNotDeclared`."""
    got: dict[str, Any] = {}

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        if req.name != "p":
            return None
        got["secret"] = await ctx.watch_target("v1/Secret", "s")
        for what, call in (("elsewhere", ctx.watch_target("v1/Secret", "s", namespace="kube-system")),
                           ("remote", ctx.watch_target("v1/Service", "svc"))):
            try:
                await call
            except TargetNotDeclared as exc:
                got[what] = str(exc)
        return None

    ctl = Controller("targets-scoped", for_="v1/ConfigMap", namespace=namespace, label_selector="parent=yes",
                     reconcile=reconcile, targets=[Target("v1/Secret", namespace=namespace),
                                                   Target("v1/Service", remote=True)])
    async with running(ctl, cache):
        await client.create(_secret("s", "one"), namespace=namespace)
        await client.create(_parent("p", "s"), namespace=namespace)
        await eventually(lambda: "remote" in got and "elsewhere" in got)
        secrets_caches = [row["scope"] for row in cache.stats() if "secrets" in row["scope"]]
    assert got["secret"] is not None and got["secret"]["metadata"]["name"] == "s"
    assert secrets_caches == [f"default:core/v1/secrets namespace={namespace}"], secrets_caches
    assert "in namespace 'kube-system'" in got["elsewhere"] and "that namespace only" in got["elsewhere"]
    assert "in the manager's own cluster" in got["remote"] and "remote: other clusters only" in got["remote"]


def test_a_target_is_a_kind_with_an_optional_namespace() -> None:
    with pytest.raises(ValueError, match="namespace must be a non-empty name"):
        Target("v1/Secret", namespace="")
    ctl = Controller("t", for_="v1/ConfigMap", reconcile=_noop, targets=["v1/Secret", Target("v1/Service", remote=True)])
    assert ctl.spec.targets == (Target("v1/Secret"), Target("v1/Service", remote=True))


async def _noop(req: Request, ctx: Context) -> Result | None:
    return None


# ---------------------------------------------------------------- a target the credentials may not list


@pytest_asyncio.fixture
async def restricted(apiserver: TestCluster, client: Client, namespace: str) -> AsyncIterator[Client]:
    """A client whose credentials may not list Secrets at the cluster scope: a ServiceAccount's token
    (no binding) on the real cluster, or on an emulator that enforces RBAC (the fixtures' own does not)."""
    name = f"kl-restricted-{secrets.token_hex(3)}"
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}
    if not apiserver.is_emulator:
        await client.create(sa, namespace=namespace)  # deleted with the namespace
        restricted = await service_account_client(apiserver, client, namespace, name)
        async with restricted:
            yield restricted
        return
    async with APIServer(rbac=True) as server:
        rbac = TestCluster.from_server(server)
        async with rbac.client(qps=None, retry=TEST_RETRY, timeout=10) as admin:
            await admin.create(sa, namespace="default")
            restricted = await service_account_client(rbac, admin, "default", name)
            async with restricted:
                yield restricted


async def test_a_forbidden_target_fails_at_once_and_holds_no_worker(client: Client, namespace: str,
                                                                   cache: SharedCache, restricted: Client) -> None:
    """Issue 31 item 2: with one worker, parent ``a`` asks for a Secret in a cluster whose credentials
    may not list Secrets, ``b`` for one it may read. ``a`` fails with `TargetForbidden` from the first
    answer (a 403 is known at once) and backs off alone; ``b`` is done without waiting for ``a``'s
    cache (a worker never waits for a cache to sync)."""
    loop = asyncio.get_running_loop()
    done: dict[str, float] = {}
    refused: list[tuple[float, str]] = []

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        parent = ctx.get()
        if parent is None:
            return None
        try:
            await ctx.watch_target("v1/Secret", parent["data"]["target"], cluster=parent["data"]["cluster"])
        except TargetForbidden as exc:
            refused.append((loop.time(), str(exc)))
            raise
        done[req.name] = loop.time()
        return None

    cache.add_cluster("restricted", restricted)
    ctl = Controller("targets-forbidden", for_="v1/ConfigMap", namespace=namespace, label_selector="parent=yes",
                     reconcile=reconcile, max_concurrent_reconciles=1, clusters=["default"])
    async with running(ctl, cache):
        start = loop.time()
        await client.create({**_parent("a", "s"), "data": {"target": "s", "cluster": "restricted"}}, namespace=namespace)
        await client.create({**_parent("b", "s"), "data": {"target": "s", "cluster": "default"}}, namespace=namespace)
        await eventually(lambda: "b" in done and refused, timeout=8)
        # well within the 10 s a reconcile used to wait for a cache's first list
        assert done["b"] - start < 5.0 and refused[0][0] - start < 5.0, (done, refused)
        assert "cluster 'restricted' refuses to list core/v1/secrets" in refused[0][1]
        assert "forbidden" in refused[0][1].lower() and "a" not in done
