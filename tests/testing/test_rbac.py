"""RBAC in the emulator (on by default, ``APIServer(rbac=False)`` turns it off): request attributes,
rule matching, bindings, the 403 Status kube-apiserver sends, service-account tokens and the audit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from kubeloop.testing import APIServer
from kubeloop.testing.apiserver.rbac import Attributes, User, forbidden, request_attributes, rule_allows

RBAC = "rbac.authorization.k8s.io/v1"
SA_USER = "system:serviceaccount:default:op"


@pytest.mark.parametrize(("method", "path", "query", "want"), [
    ("GET", "/api/v1/namespaces/ns/pods", {}, ("list", "", "pods", "", "", "ns")),
    ("GET", "/api/v1/namespaces/ns/pods", {"watch": "true"}, ("watch", "", "pods", "", "", "ns")),
    ("GET", "/api/v1/pods", {"fieldSelector": "metadata.name=p"}, ("list", "", "pods", "", "p", "")),
    ("GET", "/api/v1/pods", {"fieldSelector": "metadata.name==p,status.phase!=x"}, ("list", "", "pods", "", "p", "")),
    ("GET", "/api/v1/pods", {"fieldSelector": "metadata.name!=p"}, ("list", "", "pods", "", "", "")),
    ("PATCH", "/apis/apps/v1/namespaces/ns/deployments/d/status", {}, ("patch", "apps", "deployments", "status", "d",
                                                                        "ns")),
    ("DELETE", "/api/v1/namespaces/ns/configmaps", {}, ("deletecollection", "", "configmaps", "", "", "ns")),
    ("PUT", "/api/v1/namespaces/ns/finalize", {}, ("update", "", "namespaces", "finalize", "ns", "ns")),
    ("GET", "/api/v1/namespaces/ns", {}, ("get", "", "namespaces", "", "ns", "ns")),
    ("POST", "/api/v1/namespaces/ns/serviceaccounts/sa/token", {}, ("create", "", "serviceaccounts", "token", "sa",
                                                                     "ns")),
    ("GET", "/api/v1/watch/namespaces/ns/pods", {}, ("watch", "", "pods", "", "", "ns")),
])
def test_request_attributes_follow_the_path(method: str, path: str, query: dict[str, str],
                                            want: tuple[str, ...]) -> None:
    a = request_attributes(method, path, query)
    assert a.resource_request
    assert (a.verb, a.api_group, a.resource, a.subresource, a.name, a.namespace) == want


def test_non_resource_paths() -> None:
    for path in ("/version", "/apis", "/apis/apps/v1", "/healthz"):
        assert not request_attributes("GET", path, {}).resource_request


def attrs(verb: str, resource: str, sub: str = "", name: str = "", group: str = "") -> Attributes:
    return Attributes(verb, "", True, group, "v1", resource, sub, name, "ns")


@pytest.mark.parametrize(("rule", "request_", "allowed"), [
    ({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}, attrs("get", "pods"), True),
    ({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}, attrs("list", "pods"), False),
    ({"apiGroups": [""], "resources": ["pods"], "verbs": ["*"]}, attrs("list", "pods"), True),
    ({"apiGroups": ["apps"], "resources": ["pods"], "verbs": ["*"]}, attrs("list", "pods"), False),
    ({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}, attrs("patch", "pods", "status"), True),
    ({"apiGroups": [""], "resources": ["pods"], "verbs": ["patch"]}, attrs("patch", "pods", "status"), False),
    ({"apiGroups": [""], "resources": ["pods/status"], "verbs": ["patch"]}, attrs("patch", "pods", "status"), True),
    ({"apiGroups": [""], "resources": ["*/status"], "verbs": ["patch"]}, attrs("patch", "pods", "status"), True),
    ({"apiGroups": [""], "resources": ["*/status"], "verbs": ["patch"]}, attrs("patch", "pods"), False),
    ({"apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"], "verbs": ["get"]},
     attrs("get", "pods", name="a"), True),
    ({"apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"], "verbs": ["get"]},
     attrs("get", "pods", name="b"), False),
    ({"apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"], "verbs": ["list"]},
     attrs("list", "pods"), False),
    ({"nonResourceURLs": ["/metrics*"], "verbs": ["get"]}, Attributes("get", "/metrics/x"), True),
    ({"nonResourceURLs": ["/metrics"], "verbs": ["get"]}, Attributes("get", "/metricsx"), False),
])
def test_rule_matching(rule: dict[str, Any], request_: Attributes, allowed: bool) -> None:
    assert rule_allows(rule, request_) is allowed


def test_forbidden_messages_are_kube_apiservers() -> None:
    user = User(SA_USER)
    named = forbidden(user, Attributes("get", "", True, "apps", "v1", "deployments", "", "web", "ns"))
    assert named.code == 403
    assert named.status()["reason"] == "Forbidden"
    assert named.message == ('deployments.apps "web" is forbidden: User "system:serviceaccount:default:op" cannot get '
                             'resource "deployments" in API group "apps" in the namespace "ns"')
    assert named.details == {"name": "web", "group": "apps", "kind": "deployments"}
    cluster = forbidden(user, Attributes("list", "", True, "", "v1", "nodes"))
    assert cluster.message == ('nodes is forbidden: User "system:serviceaccount:default:op" cannot list resource '
                               '"nodes" in API group "" at the cluster scope')
    sub = forbidden(user, Attributes("patch", "", True, "x.dev", "v1", "widgets", "status", "w", "ns"))
    assert 'cannot patch resource "widgets/status" in API group "x.dev"' in sub.message
    path = forbidden(user, Attributes("get", "/metrics"))
    assert path.message == 'forbidden: User "system:serviceaccount:default:op" cannot get path "/metrics"'


# ---------------------------------------------------------------------- over HTTP

@pytest_asyncio.fixture
async def rbac_server() -> AsyncIterator[APIServer]:
    async with APIServer(audit=True) as server:
        await admin_post(server, "/api/v1/namespaces/default/serviceaccounts",
                         {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "op"}})
        yield server


async def admin_post(server: APIServer, path: str, body: dict[str, Any]) -> dict[str, Any]:
    async with aiohttp.ClientSession() as s, s.post(server.url + path, json=body) as r:
        got: dict[str, Any] = await r.json()
        assert r.status in (200, 201), got
        return got


async def call(server: APIServer, token: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as s, s.request(
            method, server.url + path, json=body, headers={"Authorization": f"Bearer {token}"}) as r:
        return r.status, await r.json(content_type=None)


async def grant(server: APIServer, *, cluster: bool, rules: list[dict[str, Any]], role_kind: str | None = None,
                role_name: str = "r", namespace: str = "default") -> None:
    if cluster:
        await admin_post(server, "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                         {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": role_name}, "rules": rules})
        await admin_post(server, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
            "apiVersion": RBAC, "kind": "ClusterRoleBinding", "metadata": {"name": role_name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name},
            "subjects": [{"kind": "ServiceAccount", "name": "op", "namespace": "default"}]})
        return
    if role_kind is None:
        await admin_post(server, f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles",
                         {"apiVersion": RBAC, "kind": "Role", "metadata": {"name": role_name}, "rules": rules})
    await admin_post(server, f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings", {
        "apiVersion": RBAC, "kind": "RoleBinding", "metadata": {"name": role_name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind or "Role", "name": role_name},
        "subjects": [{"kind": "ServiceAccount", "name": "op", "namespace": "default"}]})


async def test_a_token_with_no_binding_may_only_discover(rbac_server: APIServer) -> None:
    token = rbac_server.service_account_token("default", "op")
    status, body = await call(rbac_server, token, "GET", "/api/v1/namespaces/default/configmaps")
    assert status == 403
    assert body["message"] == ('configmaps is forbidden: User "system:serviceaccount:default:op" cannot list '
                               'resource "configmaps" in API group "" in the namespace "default"')
    for path in ("/api", "/apis", "/api/v1", "/version"):
        assert (await call(rbac_server, token, "GET", path))[0] == 200, path
    assert (await call(rbac_server, "not-a-token", "GET", "/api/v1/namespaces/default/configmaps"))[0] == 401


async def test_rbac_is_on_by_default_and_can_be_turned_off() -> None:
    """A service account is refused what it was not granted, as on a real cluster; `rbac=False`
    allows every authenticated caller everything."""
    for rbac, want in ((None, 403), (False, 200)):
        kwargs = {} if rbac is None else {"rbac": rbac}
        async with APIServer(**kwargs) as server:  # type: ignore[arg-type]
            await admin_post(server, "/api/v1/namespaces/default/serviceaccounts",
                             {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "op"}})
            token = server.service_account_token("default", "op")
            assert (await call(server, token, "GET", "/api/v1/namespaces/default/secrets"))[0] == want, rbac
            assert (await call(server, "not-a-token", "GET", "/api/v1/namespaces/default/secrets"))[0] == 401


async def test_role_binding_grants_in_its_namespace_only(rbac_server: APIServer) -> None:
    token = rbac_server.service_account_token("default", "op")
    await grant(rbac_server, cluster=False, rules=[{"apiGroups": [""], "resources": ["configmaps"],
                                                    "verbs": ["list", "create"]}])
    assert (await call(rbac_server, token, "GET", "/api/v1/namespaces/default/configmaps"))[0] == 200
    status, body = await call(rbac_server, token, "GET", "/api/v1/namespaces/kube-system/configmaps")
    assert status == 403 and body["message"].endswith('in the namespace "kube-system"')
    status, body = await call(rbac_server, token, "GET", "/api/v1/configmaps")
    assert status == 403 and body["message"].endswith("at the cluster scope")
    status, _ = await call(rbac_server, token, "POST", "/api/v1/namespaces/default/configmaps",
                           {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    assert status == 201
    status, body = await call(rbac_server, token, "DELETE", "/api/v1/namespaces/default/configmaps/c")
    assert status == 403
    assert body["message"].startswith('configmaps "c" is forbidden: User "system:serviceaccount:default:op" cannot '
                                      'delete resource "configmaps"')


async def test_cluster_role_binding_grants_everywhere(rbac_server: APIServer) -> None:
    token = rbac_server.service_account_token("default", "op")
    await grant(rbac_server, cluster=True, rules=[{"apiGroups": [""], "resources": ["namespaces", "configmaps"],
                                                   "verbs": ["get", "list"]}])
    for path in ("/api/v1/namespaces", "/api/v1/configmaps", "/api/v1/namespaces/kube-system/configmaps",
                 "/api/v1/namespaces/default"):
        assert (await call(rbac_server, token, "GET", path))[0] == 200, path


async def test_role_binding_to_a_cluster_role_and_to_a_missing_role(rbac_server: APIServer) -> None:
    token = rbac_server.service_account_token("default", "op")
    await admin_post(rbac_server, "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
        "apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": "reader"},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]})
    await grant(rbac_server, cluster=False, rules=[], role_kind="ClusterRole", role_name="reader")
    assert (await call(rbac_server, token, "GET", "/api/v1/namespaces/default/secrets"))[0] == 200
    assert (await call(rbac_server, token, "GET", "/api/v1/secrets"))[0] == 403  # a RoleBinding is not cluster-wide
    await grant(rbac_server, cluster=False, rules=[], role_kind="Role", role_name="gone")
    status, body = await call(rbac_server, token, "GET", "/api/v1/namespaces/default/pods")
    assert status == 403
    assert body["message"].endswith(': RBAC: role.rbac.authorization.k8s.io "gone" not found')


async def test_token_request_and_service_account_lifetime(rbac_server: APIServer) -> None:
    review = await admin_post(rbac_server, "/api/v1/namespaces/default/serviceaccounts/op/token",
                              {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}})
    assert review["kind"] == "TokenRequest"
    token = review["status"]["token"]
    assert (await call(rbac_server, token, "GET", "/version"))[0] == 200
    async with aiohttp.ClientSession() as s, s.post(
            rbac_server.url + "/api/v1/namespaces/default/serviceaccounts/nobody/token", json={}) as r:
        assert r.status == 404
    # a service account may not mint tokens unless granted serviceaccounts/token create
    assert (await call(rbac_server, token, "POST", "/api/v1/namespaces/default/serviceaccounts/op/token", {}))[0] \
        == 403
    async with aiohttp.ClientSession() as s, s.delete(
            rbac_server.url + "/api/v1/namespaces/default/serviceaccounts/op") as r:
        assert r.status == 200
    assert (await call(rbac_server, token, "GET", "/version"))[0] == 401


async def test_audit_records_what_each_user_did(rbac_server: APIServer) -> None:
    token = rbac_server.service_account_token("default", "op")
    await call(rbac_server, token, "GET", "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1")
    seen = rbac_server.audit(SA_USER)
    assert [(e.verb, e.resource, e.namespace) for e in seen] == [("watch", "configmaps", "default")]
    assert any(e.resource == "serviceaccounts" and e.verb == "create" for e in rbac_server.audit())
