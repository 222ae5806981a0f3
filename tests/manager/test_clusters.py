"""Clusters at run time: `ClustersFromSecrets` (kubeconfig Secrets in the test's cluster, pointing at
emulators) adds, rotates and removes the Manager's clusters; its planning and parsing without I/O."""

from __future__ import annotations

import base64
import copy
import gc
import logging
from typing import Any

import pytest
import yaml

from kubeloop import Client, Context, Controller, Manager, Request, Result
from kubeloop.config import ConfigError, load_kubeconfig
from kubeloop.controller import UnknownCluster
from kubeloop.manager import ClustersFromSecrets
from kubeloop.manager._clusters import CAPI_CLUSTER_LABEL, Plan, kubeconfig_from_secret, plan
from kubeloop.testing import APIServer, eventually


def test_plan() -> None:
    assert plan({"a": "1", "b": "2"}, {"b": "3", "c": "4"}) == Plan(add=("c",), rotate=("b",), remove=("a",))
    assert plan({"a": "1"}, {"a": "1"}) == Plan()


def _kubeconfig(server: str, user: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Config", "current-context": "c",
            "clusters": [{"name": "c", "cluster": {"server": server}}],
            "users": [{"name": "u", "user": user}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}


@pytest.mark.parametrize("user", [{"exec": {"command": "sh", "apiVersion": "client.authentication.k8s.io/v1"}},
                                  {"tokenFile": "/var/run/secrets/token"}, {"client-key": "/etc/key.pem"}])
def test_a_kubeconfig_from_a_secret_may_not_run_commands_or_read_files(user: dict[str, Any]) -> None:
    raw = yaml.safe_dump(_kubeconfig("https://example.com", user)).encode()
    with pytest.raises(ConfigError, match="may not run commands or read local files"):
        kubeconfig_from_secret(raw, "Secret fleet/x")


def test_kubeconfig_from_a_secret() -> None:
    config = kubeconfig_from_secret(yaml.safe_dump(_kubeconfig("https://example.com/", {"token": "t"})).encode(),
                                    "Secret fleet/x")
    assert config.server == "https://example.com" and config.source == "Secret fleet/x"
    with pytest.raises(ConfigError, match="Secret fleet/x"):
        kubeconfig_from_secret(b"{not yaml", "Secret fleet/x")


def test_cluster_api_layout_names() -> None:
    def secret(name: str, label: str | None, data: str | None = "eA==") -> dict[str, Any]:
        labels = {CAPI_CLUSTER_LABEL: label} if label is not None else {}
        return {"metadata": {"name": name, "namespace": "fleet", "labels": labels},
                "data": {"value": data} if data else {}}

    source = ClustersFromSecrets("fleet")
    got = source.desired([secret("west-kubeconfig", "west"), secret("east-kubeconfig", ""),
                          secret("west-ca", "west"), secret("north-kubeconfig", "north", data=None)])
    assert sorted(got) == ["east", "west"] and got["west"] == ("fleet/west-kubeconfig", b"x")
    assert "no key 'value'" in source.problems["fleet/north-kubeconfig"]
    with pytest.raises(ValueError, match="empty selector"):
        ClustersFromSecrets("fleet", selector="")


def _secret(name: str, kubeconfig: dict[str, Any], cluster: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "labels": {CAPI_CLUSTER_LABEL: cluster}},
            "data": {"value": base64.b64encode(yaml.safe_dump(kubeconfig).encode()).decode()}}


async def test_clusters_follow_their_secrets(client: Client, namespace: str) -> None:
    ns = namespace
    async with APIServer(bare=True, token="first") as west, APIServer(bare=True, token="moved") as moved:
        manager = Manager(client, cache_grace_period=0.2)
        source = ClustersFromSecrets(ns)
        manager.add_runnable(source)
        async with manager:
            kubeconfig = west.kubeconfig_dict()
            await client.create(_secret("west-kubeconfig", kubeconfig, "west"), namespace=ns)
            await eventually(lambda: "west" in manager.clusters)
            first = manager.client("west")
            assert (await first.get("v1/Namespace", "default"))["metadata"]["name"] == "default"

            # new credentials for the same server: the same client (and its caches) with the new token
            await first.create({"apiVersion": "v1", "kind": "ServiceAccount",
                                "metadata": {"name": "rotator", "namespace": "default"}})
            # the service account may read namespaces, as it would be granted on a real cluster
            rbac = "rbac.authorization.k8s.io"
            await first.create({"apiVersion": f"{rbac}/v1", "kind": "ClusterRole", "metadata": {"name": "ns-reader"},
                                "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}]})
            await first.create({"apiVersion": f"{rbac}/v1", "kind": "ClusterRoleBinding",
                                "metadata": {"name": "rotator-reads-namespaces"},
                                "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": "ns-reader"},
                                "subjects": [{"kind": "ServiceAccount", "name": "rotator", "namespace": "default"}]})
            rotated = copy.deepcopy(kubeconfig)
            rotated["users"][0]["user"] = {"token": west.service_account_token("default", "rotator")}
            await client.replace({**_secret("west-kubeconfig", rotated, "west"),
                                  "metadata": {**(await client.get("v1/Secret", "west-kubeconfig", namespace=ns))
                                               ["metadata"]}}, namespace=ns)

            async def rotated_in_place() -> bool:
                token = (await manager.client("west").config.auth.credentials()).token
                return manager.client("west") is first and token != "first"
            await eventually(rotated_in_place)
            assert await first.get("v1/Namespace", "default")  # with the new token

            # a new server: a new client, the old one closed
            await client.patch("v1/Secret", "west-kubeconfig",
                               {"data": _secret("x", moved.kubeconfig_dict(), "west")["data"]}, namespace=ns)
            await eventually(lambda: manager.client("west") is not first)
            assert manager.client("west").config.server == moved.url

            async def closed() -> bool:
                try:
                    await first.get("v1/Namespace", "default")
                except RuntimeError as exc:
                    return "closed" in str(exc)
                return False
            await eventually(closed)

            # a Secret that would run a command is refused; the cluster is not added
            evil = _kubeconfig(west.url, {"exec": {"command": "sh", "apiVersion": "client.authentication.k8s.io/v1"}})
            await client.create(_secret("evil-kubeconfig", evil, "evil"), namespace=ns)
            await eventually(lambda: f"{ns}/evil-kubeconfig" in source.problems)
            assert "evil" not in manager.clusters

            # the Secret deleted: the cluster is removed
            await client.delete("v1/Secret", "west-kubeconfig", namespace=ns)
            await eventually(lambda: "west" not in manager.clusters)
            assert source.clusters == []


async def test_remove_a_cluster_controllers_run_on(client: Client, namespace: str,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """A controller started on "default" and "west": removing "west" closes its watches there, drops
    its requests (queued or later), and the manager-made client is closed without a warning."""
    seen: list[Request] = []

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        seen.append(req)
        return None

    async with APIServer(bare=True) as west:
        async with Client(load_kubeconfig(west.kubeconfig), qps=None) as c:
            await c.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        manager = Manager(client, cache_grace_period=0.2)
        manager.add_cluster("west", kubeconfig=west.kubeconfig)
        ctl = manager.add(Controller("cm", for_="v1/ConfigMap", namespace=namespace, reconcile=reconcile))
        with caplog.at_level(logging.WARNING):
            async with manager:
                await manager.client("west").create({"apiVersion": "v1", "kind": "ConfigMap",
                                                     "metadata": {"name": "w"}}, namespace=namespace)
                await eventually(lambda: Request("west", namespace, "w") in seen)
                assert west.stats()["open_watches"]
                await manager.remove_cluster("west")
                await eventually(lambda: not west.stats()["open_watches"], what="west's watches closed")
                ctl.enqueue(Request("west", namespace, "w"))  # e.g. a map function naming it
                runs = seen.count(Request("west", namespace, "w"))
                await manager.idle()
                assert seen.count(Request("west", namespace, "w")) == runs
                assert manager.ready, manager.readiness()
        gc.collect()
    assert not [r for r in caplog.records if "Unclosed" in r.getMessage() or "stopped; its changes" in r.getMessage()]


async def test_a_target_in_a_cluster_whose_secret_was_skipped_says_why(client: Client, namespace: str) -> None:
    """Issue 31 item 14: ``watch_target`` on a cluster whose kubeconfig Secret was skipped said only
    ``unknown cluster 'x'``; it says which Secret was skipped and why. A Secret that cannot be applied
    (here one naming the manager's own ``default`` cluster) is skipped alone: the others still work."""
    ns = namespace
    errors: list[str] = []

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        try:
            await ctx.watch_target("v1/Secret", "x", cluster="evil")
        except UnknownCluster as exc:
            errors.append(str(exc))
            raise
        return None

    async with APIServer(bare=True) as west:
        manager = Manager(client, cache_grace_period=0.2)
        source = ClustersFromSecrets(ns)
        manager.add_runnable(source)
        manager.add(Controller("targets-evil", for_="v1/ConfigMap", namespace=ns, label_selector="parent=yes",
                               reconcile=reconcile, clusters=["default"]))
        async with manager:
            evil = _kubeconfig(west.url, {"exec": {"command": "sh", "apiVersion": "client.authentication.k8s.io/v1"}})
            await client.create(_secret("evil-kubeconfig", evil, "evil"), namespace=ns)
            await client.create(_secret("default-kubeconfig", west.kubeconfig_dict(), "default"), namespace=ns)
            await client.create(_secret("west-kubeconfig", west.kubeconfig_dict(), "west"), namespace=ns)
            await eventually(lambda: "west" in manager.clusters and f"{ns}/default-kubeconfig" in source.problems)
            assert "already exists" in source.problems[f"{ns}/default-kubeconfig"] and manager.failure is None
            await client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {"name": "p", "labels": {"parent": "yes"}}}, namespace=ns)
            await eventually(lambda: errors)
            assert "unknown cluster 'evil'" in errors[0]
            assert f"its Secret {ns}/evil-kubeconfig was skipped" in errors[0] and "uses exec" in errors[0]
