"""`kubeloop manifests`: the derived manifests install the WebApp operator, which then runs under its
own ServiceAccount with RBAC enforced, with no Forbidden error; a rule removed is a 403.

The cluster enforces RBAC: the emulator (it does by default), or the real cluster of
``KUBELOOP_TEST_KUBECONFIG`` (tokens come from the TokenRequest API on both).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import logging
import secrets
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yaml
from click.testing import CliRunner

from examples.webapp import controller as webapp
from kubeloop import Client, Manager
from kubeloop.cli.main import main
from kubeloop.client import ApiError, Forbidden
from kubeloop.config import Credentials, StaticAuth, load_kubeconfig
from kubeloop.manager import LeaderElection, Sharding, WebhookOptions, setup_manager
from kubeloop.testing import APIServer, delete_crd, eventually, install_crd
from kubeloop.testing._cluster import TestCluster
from kubeloop.testing.pytest_plugin import TEST_RETRY, real_cluster_kubeconfig
from tests.cli import fleet_operator, webhook_operator

CLUSTER_KINDS = ("CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "ValidatingWebhookConfiguration",
                 "MutatingWebhookConfiguration")
CRD = "apiextensions.k8s.io/v1/CustomResourceDefinition"


@pytest_asyncio.fixture
async def rbac_cluster() -> AsyncIterator[TestCluster]:
    """A cluster that enforces RBAC: the emulator (as it does by default), or the real cluster."""
    path = real_cluster_kubeconfig()
    if path:
        yield TestCluster.from_kubeconfig(path)
        return
    async with APIServer(audit=True, namespace_delete_delay=0.05, crd_cleanup_delay=0.05) as server:
        yield TestCluster.from_server(server)


@pytest_asyncio.fixture
async def admin(rbac_cluster: TestCluster) -> AsyncIterator[Client]:
    async with rbac_cluster.client(qps=None, retry=TEST_RETRY, timeout=10) as c:
        yield c


@pytest_asyncio.fixture
async def namespace(admin: Client) -> AsyncIterator[str]:
    """A namespace of this test's own on the RBAC cluster, deleted afterwards."""
    name = f"kl-test-{secrets.token_hex(4)}"
    await admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    with contextlib.suppress(ApiError):
        await admin.delete("v1/Namespace", name)


def derive(*args: str) -> list[dict[str, Any]]:
    """Run ``kubeloop manifests`` and parse its YAML documents."""
    result = CliRunner().invoke(main, ["manifests", webapp.__file__, *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [d for d in yaml.safe_load_all(result.stdout) if d]


async def apply_all(client: Client, docs: list[dict[str, Any]]) -> Callable[[], Any]:
    """Create the documents; returns a cleanup coroutine function. A CRD is installed with
    `install_crd` (one that exists already is kept): other tests use the same WebApp CRD, so it is
    deleted when the test run ends, not here."""
    created = []

    async def cleanup() -> None:
        for doc in reversed(created):
            if doc["kind"] in CLUSTER_KINDS:
                with contextlib.suppress(ApiError):
                    await client.delete(f"{doc['apiVersion']}/{doc['kind']}", doc["metadata"]["name"])

    try:
        for doc in docs:
            if doc["kind"] == "CustomResourceDefinition":
                await install_crd(client, doc)
                continue
            await client.create(doc)
            created.append(doc)
    except BaseException:  # a document refused halfway: what was created goes, cluster-scoped ones too
        await cleanup()
        raise
    return cleanup


async def service_account_client(cluster: TestCluster, admin: Client, namespace: str, name: str) -> Client:
    """A client authenticated as ServiceAccount ``namespace/name`` (a token from the TokenRequest API)."""
    review = await admin.request_json("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
                                      body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                            "spec": {"expirationSeconds": 3600}})
    config = dataclasses.replace(load_kubeconfig(cluster.kubeconfig),
                                 auth=StaticAuth(Credentials(token=review["status"]["token"])), namespace=namespace)
    return Client(config, qps=None, retry=TEST_RETRY, timeout=10)


def forbidden_logs(caplog: pytest.LogCaptureFixture, namespace: str, name: str) -> list[str]:
    """What the RBAC authorizer refused ServiceAccount ``namespace/name``, as logged.

    Only its refusals count: on a shared real cluster the operators under test (cluster-wide, as
    the WebApp example is) also see other tests' WebApps, and a write into a namespace being deleted
    is refused with a 403 too ("unable to create new content in namespace ... because it is being
    terminated"), which says nothing about the derived role."""
    denied = f'User "system:serviceaccount:{namespace}:{name}" cannot'
    return [r.getMessage() for r in caplog.records if denied in r.getMessage()
            or (r.exc_info and denied in str(r.exc_info[1]))]


async def run_operator(sa: Client, namespace: str, lease: str) -> Manager:
    manager = Manager(sa, namespace=namespace, leader_election=LeaderElection(lease, namespace=namespace))
    webapp.setup(manager)
    return manager


async def shop_converges(admin: Client, namespace: str, *, replicas: int, message: str) -> None:
    """Create WebApp ``shop`` and wait until the operator has reconciled it (its status says so)."""
    await admin.create({"apiVersion": "examples.kubeloop.dev/v1", "kind": "WebApp",
                        "metadata": {"name": "shop", "namespace": namespace},
                        "spec": {"image": "nginx:1.27", "replicas": replicas, "message": message}})

    async def converged() -> bool:
        app = await admin.get(webapp.WebApp.resource(), "shop", namespace=namespace)
        return (app.get("status") or {}).get("observedGeneration") == 1

    await eventually(converged, timeout=20)


async def test_derived_rbac_suffices_for_the_webapp_operator(
        rbac_cluster: TestCluster, admin: Client, namespace: str, caplog: pytest.LogCaptureFixture) -> None:
    name = f"kl-webapp-{secrets.token_hex(3)}"
    docs = await asyncio.to_thread(derive, "--namespace", namespace, "--name", name, "--image", "example/webapp:1")
    kinds = [d["kind"] for d in docs]
    assert kinds == ["CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role",
                     "RoleBinding", "Deployment"]
    deployment = docs[-1]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == name
    assert container["args"][:2] == ["run", "examples.webapp.controller"]
    assert "--leader-election" in container["args"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    cleanup = await apply_all(admin, docs)
    sa = await service_account_client(rbac_cluster, admin, namespace, name)
    caplog.set_level(logging.INFO)
    try:
        # the token really is restricted: what the role does not grant is refused
        with pytest.raises(Forbidden) as denied:
            await sa.list("v1/Secret", namespace=namespace)
        assert str(denied.value.message).startswith(
            f'secrets is forbidden: User "system:serviceaccount:{namespace}:{name}" cannot list resource "secrets" '
            f'in API group "" in the namespace "{namespace}"')
        async with await run_operator(sa, namespace, name):
            await shop_converges(admin, namespace, replicas=2, message="welcome")
            dep = await admin.get("apps/v1/Deployment", "shop", namespace=namespace)
            assert dep["spec"]["replicas"] == 2
            page = await admin.get("v1/ConfigMap", "shop-content", namespace=namespace)
            assert page["data"]["index.html"] == "<h1>welcome</h1>\n"
            lease = await admin.get("coordination.k8s.io/v1/Lease", name, namespace=namespace)
            assert lease["spec"].get("holderIdentity")
        assert forbidden_logs(caplog, namespace, name) == []
        if rbac_cluster.server is not None:
            user = f"system:serviceaccount:{namespace}:{name}"
            used = {(e.verb, e.resource, e.subresource) for e in rbac_cluster.server.audit(user)}
            assert {("patch", "deployments", ""), ("patch", "webapps", "status"), ("watch", "configmaps", "")} <= used
    finally:
        await sa.close()
        await cleanup()


async def test_observed_rbac_suffices_for_the_webapp_operator(
        rbac_cluster: TestCluster, admin: Client, namespace: str, caplog: pytest.LogCaptureFixture) -> None:
    """``--observe examples/webapp/test_webapp.py``: the rules learnt from the example's own tests on
    the emulator run the operator on a cluster without streaming lists (a real 1.24 cluster: its
    informers LIST where the emulator served a streaming list, a WATCH), Lease included."""
    name = f"kl-webapp-{secrets.token_hex(3)}"
    docs = await asyncio.to_thread(derive, "--namespace", namespace, "--name", name, "--image", "example/webapp:1",
                                   "--observe", str(Path(webapp.__file__).with_name("test_webapp.py")))
    rules = [r for d in docs if d["kind"] in ("ClusterRole", "Role") for r in d["rules"]]
    assert any("webapps" in r["resources"] and {"list", "watch"} <= set(r["verbs"]) for r in rules)
    assert any("leases" in r["resources"] and r.get("resourceNames") == [name] for r in rules)
    cleanup = await apply_all(admin, docs)
    sa = await service_account_client(rbac_cluster, admin, namespace, name)
    caplog.set_level(logging.INFO)
    try:
        async with await run_operator(sa, namespace, name):
            await shop_converges(admin, namespace, replicas=1, message="observed")
        assert forbidden_logs(caplog, namespace, name) == []
    finally:
        await sa.close()
        await cleanup()


async def test_a_missing_rule_is_a_403(rbac_cluster: TestCluster, admin: Client, namespace: str,
                                       caplog: pytest.LogCaptureFixture) -> None:
    name = f"kl-webapp-{secrets.token_hex(3)}"
    docs = await asyncio.to_thread(derive, "--namespace", namespace, "--name", name)
    role = next(d for d in docs if d["kind"] == "ClusterRole")
    deployments = next(r for r in role["rules"] if r["resources"] == ["deployments"])
    deployments["verbs"].remove("patch")  # server-side apply of the child Deployment is a patch
    cleanup = await apply_all(admin, docs)
    sa = await service_account_client(rbac_cluster, admin, namespace, name)
    caplog.set_level(logging.INFO)
    try:
        async with await run_operator(sa, namespace, name):
            await admin.create({"apiVersion": "examples.kubeloop.dev/v1", "kind": "WebApp",
                                "metadata": {"name": "shop", "namespace": namespace},
                                "spec": {"image": "nginx:1.27"}})
            want = (f'deployments.apps "shop" is forbidden: User "system:serviceaccount:{namespace}:{name}" '
                    f'cannot patch resource "deployments" in API group "apps" in the namespace "{namespace}"')

            async def refused() -> bool:
                await asyncio.sleep(0)
                return any(want in m for m in forbidden_logs(caplog, namespace, name)) or any(
                    want in str(r.exc_info[1]) for r in caplog.records if r.exc_info)

            await eventually(refused, timeout=10)
    finally:
        await sa.close()
        await cleanup()


async def test_derived_rbac_suffices_for_a_fleet_operator(
        rbac_cluster: TestCluster, admin: Client, namespace: str, caplog: pytest.LogCaptureFixture) -> None:
    """`ClustersFromSecrets` gets its Secrets (a Role in its namespace only), ``targets=`` its reads in
    the one namespace it declares: under its own token the operator adds the cluster of a kubeconfig
    Secret, engages it (a controller on every cluster) and reads its targets, with no Forbidden error.
    That cluster's credentials are a ServiceAccount with only what ``--for-cluster edge`` prints: a
    Role in one namespace, which a target cache watching every namespace could never use."""
    name = f"kl-fleet-{secrets.token_hex(3)}"

    def derive_fleet(*extra: str) -> list[dict[str, Any]]:
        result = CliRunner().invoke(main, ["manifests", fleet_operator.__file__, "--namespace", namespace,
                                           "--name", name, "--no-leader-election", *extra])
        assert result.exit_code == 0, result.output
        return [d for d in yaml.safe_load_all(result.stdout) if d]

    docs = await asyncio.to_thread(derive_fleet)
    role = next(d for d in docs if d["kind"] == "Role")
    assert role["rules"] == [  # read-only on its ConfigMaps (primary_writes="none"), no cluster-wide rule
        {"apiGroups": [""], "resources": ["configmaps", "secrets", "serviceaccounts"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]}]
    assert "ClusterRole" not in [d["kind"] for d in docs]
    edge_docs = await asyncio.to_thread(derive_fleet, "--for-cluster", "edge")
    assert [d["kind"] for d in edge_docs] == ["ServiceAccount", "Role", "RoleBinding"]
    assert edge_docs[1]["rules"][0] == {  # the Secrets are read at home only
        "apiGroups": [""], "resources": ["configmaps", "serviceaccounts"], "verbs": ["get", "list", "watch"]}
    cleanup = await apply_all(admin, docs)
    sa = await service_account_client(rbac_cluster, admin, namespace, name)
    caplog.set_level(logging.INFO)
    fleet_operator.seen.clear()
    parent = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p", "labels": {"fleet": "yes"}},
              "data": {"target": name}}
    try:
        with pytest.raises(Forbidden):  # Secrets only in its own namespace
            await sa.list("v1/Secret", namespace="default")
        async with APIServer(bare=True, rbac=True) as edge:
            async with Client(load_kubeconfig(edge.kubeconfig), qps=None) as edge_admin:
                await edge_admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
                for doc in edge_docs:  # the edge's own ServiceAccount and its Role, from --for-cluster
                    await edge_admin.create(doc)
                await edge_admin.create(parent, namespace=namespace)
                edge_token = (await edge_admin.request_json(
                    "POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
                    body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}))[
                    "status"]["token"]
            edge_kubeconfig = edge.kubeconfig_dict()
            edge_kubeconfig["users"][0]["user"] = {"token": edge_token}
            manager = Manager(sa, namespace=namespace, cache_grace_period=0.2)
            fleet_operator.setup(manager)
            async with manager:
                await admin.create(parent, namespace=namespace)
                await eventually(lambda: fleet_operator.seen.get(("default", "p")) == name, timeout=10)
                await admin.create({"apiVersion": "v1", "kind": "Secret",
                                    "metadata": {"name": "edge-kubeconfig",
                                                 "labels": {"cluster.x-k8s.io/cluster-name": "edge"}},
                                    "stringData": {"value": yaml.safe_dump(edge_kubeconfig)}},
                                   namespace=namespace)
                await eventually(lambda: fleet_operator.seen.get(("edge", "p")) == name, timeout=10,
                                 what="the cluster from the Secret engaged")
                assert manager.ready, manager.readiness()
        assert forbidden_logs(caplog, namespace, name) == []
    finally:
        await sa.close()
        await cleanup()


async def test_derived_rbac_suffices_for_sharded_replicas(
        rbac_cluster: TestCluster, admin: Client, namespace: str, caplog: pytest.LogCaptureFixture) -> None:
    """``--sharding``: the Deployment runs ``kubeloop run --sharding`` on 3 replicas, and the Role grants
    the membership Leases' verbs. Two replicas under the derived token hold their Leases and every
    WebApp converges, with no Forbidden error (a missing lease verb would be logged as one)."""
    name = f"kl-webapp-{secrets.token_hex(3)}"
    docs = await asyncio.to_thread(derive, "--namespace", namespace, "--name", name, "--sharding")
    container = docs[-1]["spec"]["template"]["spec"]["containers"][0]
    assert docs[-1]["spec"]["replicas"] == 3
    assert "--sharding" in container["args"] and "--leader-election" not in container["args"]
    assert container["args"][container["args"].index("--sharding-name") + 1] == name
    role = next(d for d in docs if d["kind"] == "Role")
    assert {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
            "verbs": ["create", "delete", "get", "list", "update"]} in role["rules"]
    cleanup = await apply_all(admin, docs)
    sa = await service_account_client(rbac_cluster, admin, namespace, name)
    caplog.set_level(logging.INFO)
    managers = []
    for replica in ("a", "b"):
        manager = Manager(sa, namespace=namespace, sharding=Sharding(
            name, namespace=namespace, identity=f"{name}-{replica}", lease_duration=3, renew_deadline=2,
            retry_period=0.5))
        webapp.setup(manager)
        managers.append(manager)
    apps = [f"shop-{i}" for i in range(6)]
    try:
        async with managers[0], managers[1]:
            for app in apps:
                await admin.create({"apiVersion": "examples.kubeloop.dev/v1", "kind": "WebApp",
                                    "metadata": {"name": app, "namespace": namespace},
                                    "spec": {"image": "nginx:1.27", "message": "hi"}})

            async def converged() -> bool:
                listed = await admin.list(webapp.WebApp.resource(), namespace=namespace)
                return sorted(a["metadata"]["name"] for a in listed
                              if (a.get("status") or {}).get("observedGeneration") == 1) == apps

            await eventually(converged, timeout=20)
            leases = await admin.list("coordination.k8s.io/v1/Lease", namespace=namespace,
                                      label_selector=f"kubeloop.dev/shard={name}")
            assert len(leases) == 2
        assert forbidden_logs(caplog, namespace, name) == []
    finally:
        await sa.close()
        await cleanup()


async def test_derived_rbac_suffices_for_the_webhook_certificates_and_the_migration(
        rbac_cluster: TestCluster, admin: Client, namespace: str, caplog: pytest.LogCaptureFixture) -> None:
    """A webhook operator under its derived token: the certificate manager creates its Secret, injects
    the CA bundle into its ValidatingWebhookConfiguration and its CRD's conversion (by name), the
    server serves, and the storage-version migration rewrites the Knobs and prunes storedVersions;
    no Forbidden error. Nothing beyond that: another Secret of the namespace stays unreadable."""
    name = f"kl-knobs-{secrets.token_hex(3)}"
    result = await asyncio.to_thread(CliRunner().invoke, main, [
        "manifests", webhook_operator.__file__, "--namespace", namespace, "--name", name, "--webhook-migrate"])
    assert result.exit_code == 0, result.output
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert [d["kind"] for d in docs] == ["CustomResourceDefinition", "ServiceAccount", "ClusterRole",
                                         "ClusterRoleBinding", "Role", "RoleBinding", "Service", "Deployment",
                                         "ValidatingWebhookConfiguration"]
    crd_name, hooks = f"knobs.{webhook_operator.GROUP}", webhook_operator.webhooks
    # the Deployment (no image to run here) and the Service (this process serves) are not applied
    cleanup = await apply_all(admin, [d for d in docs if d["kind"] not in ("Deployment", "Service")])
    sa = await service_account_client(rbac_cluster, admin, namespace, name)
    caplog.set_level(logging.INFO)
    knobs = f"{webhook_operator.GROUP}/v2/Knob"
    try:
        for i in range(3):  # not labelled checked=yes: written with no webhook called
            await admin.create({"apiVersion": f"{webhook_operator.GROUP}/v2", "kind": "Knob",
                                "metadata": {"name": f"k{i}"}, "spec": {"value": i}}, namespace=namespace)
        await admin.patch(CRD, crd_name, {"status": {"storedVersions": ["v1", "v2"]}}, subresource="status")
        secret = f"{name}-webhook-tls"
        manager = Manager(sa, namespace=namespace, leader_election=LeaderElection(name, namespace=namespace),
                          webhook_options=WebhookOptions(port=0, host="127.0.0.1", service=f"{name}-webhook",
                                                         secret=secret, migrate=True))
        await setup_manager(webhook_operator, manager)  # the module's `webhooks`, as `kubeloop run` finds it
        server = manager.webhook_server
        assert server is not None
        async with manager:
            assert await manager.wait_ready(30), manager.readiness()
            bundle = base64.b64encode(server.certificates.ca_bundle).decode()

            async def done() -> bool:
                crd = await admin.get(CRD, crd_name)
                validating = await admin.get("admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration",
                                             hooks.name)
                return crd["status"]["storedVersions"] == ["v2"] and \
                    crd["spec"]["conversion"]["webhook"]["clientConfig"].get("caBundle") == bundle and \
                    validating["webhooks"][0]["clientConfig"].get("caBundle") == bundle
            await eventually(done, timeout=30, what="the CA bundle injected and the Knobs migrated")
            stored = await admin.get("v1/Secret", secret, namespace=namespace)
            assert stored["type"] == "kubernetes.io/tls"
            assert {k["metadata"]["name"] for k in (await admin.list(knobs, namespace=namespace)).items} == {
                "k0", "k1", "k2"}
        with pytest.raises(Forbidden):  # its Secret by name only
            await sa.get("v1/Secret", "someone-elses", namespace=namespace)
        assert forbidden_logs(caplog, namespace, name) == []
    finally:
        await sa.close()
        await cleanup()
        await delete_crd(admin, crd_name)
