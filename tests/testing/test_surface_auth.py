"""Authentication paths the recording does not reach: the kubeconfig's client certificate used by
kubeloop's own client, tokens bound to a Pod, static users, and the switch that turns RBAC off."""

from __future__ import annotations

import os
import ssl
from typing import Any

import aiohttp
import pytest
import yaml

from kubeloop import Client
from kubeloop.client import Forbidden
from kubeloop.config import load_kubeconfig
from kubeloop.testing import APIServer
from kubeloop.testing.apiserver.authn import User

pytestmark = pytest.mark.skipif(bool(os.environ.get("KUBELOOP_TEST_KUBECONFIG")), reason="checks the emulator only")


async def _get(api: APIServer, path: str, token: str | None = None) -> tuple[int, Any]:
    assert api.ca_pem is not None
    ctx = ssl.create_default_context(cadata=api.ca_pem.decode())
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as s, s.get(api.url + path, ssl=ctx, headers=headers) as r:
        return r.status, await r.json(content_type=None)


async def test_the_kubeconfig_of_a_tls_emulator_carries_an_admin_client_certificate() -> None:
    async with APIServer(tls=True) as api:
        user = yaml.safe_load(open(api.kubeconfig).read())["users"][0]["user"]  # noqa: ASYNC230
        assert set(user) == {"client-certificate-data", "client-key-data"}
        async with Client(load_kubeconfig(api.kubeconfig)) as client:
            review = await client.create({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
                                          "spec": {"namespace": "default"}})
        assert review["status"]["resourceRules"] == [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]
        # an emulator without a token asks for no credentials: a request without any is the admin's
        assert (await _get(api, "/api/v1/namespaces"))[0] == 200
    async with APIServer(tls=True, token="t") as api:
        # with one, it is anonymous, and RBAC lets it read the public paths only
        assert (await _get(api, "/version"))[0] == 200
        code, body = await _get(api, "/api/v1/namespaces")
        assert code == 403 and 'User "system:anonymous" cannot list' in body["message"]


async def test_a_certificate_user_is_authorized_by_rbac(tmp_path: Any) -> None:
    async with APIServer(tls=True) as api:
        cert, key = api.client_certificate("carol", ["auditors"])
        config = yaml.safe_load(open(api.kubeconfig).read())  # noqa: ASYNC230
        (tmp_path / "c.pem").write_bytes(cert)
        (tmp_path / "k.pem").write_bytes(key)
        config["users"][0]["user"] = {"client-certificate": str(tmp_path / "c.pem"),
                                      "client-key": str(tmp_path / "k.pem")}
        (tmp_path / "kubeconfig").write_text(yaml.safe_dump(config))
        async with Client(load_kubeconfig(str(tmp_path / "kubeconfig"))) as carol, \
                Client(load_kubeconfig(api.kubeconfig)) as admin:
            with pytest.raises(Forbidden, match='User "carol" cannot list resource "secrets"'):
                await carol.list("v1/Secret", namespace="default")
            rbac = "rbac.authorization.k8s.io"
            await admin.create({"apiVersion": f"{rbac}/v1", "kind": "RoleBinding",
                                "metadata": {"name": "auditors-view", "namespace": "default"},
                                "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": "edit"},
                                "subjects": [{"kind": "Group", "name": "auditors", "apiGroup": rbac}]})
            # `edit` gets its rules from the aggregated roles (the controller manager's aggregation)
            from kubeloop.testing import eventually

            async def can_list() -> bool:
                try:
                    await carol.list("v1/Secret", namespace="default")
                except Forbidden:
                    return False
                return True
            await eventually(can_list)


async def test_static_users_and_tokens_bound_to_a_pod() -> None:
    async with APIServer(tls=True, token="admin-t", users={"alice-t": User("alice", "u-1", ("devs",))},
                         rbac=False) as api:
        review_path = "/apis/authentication.k8s.io/v1/tokenreviews"
        assert api.ca_pem is not None
        ctx = ssl.create_default_context(cadata=api.ca_pem.decode())
        admin = {"Authorization": "Bearer admin-t"}
        async with aiohttp.ClientSession() as s:
            async def post(path: str, body: Any) -> Any:
                async with s.post(api.url + path, json=body, ssl=ctx, headers=admin) as r:
                    assert r.status == 201, await r.text()
                    return await r.json()

            review = await post(review_path, {"spec": {"token": "alice-t"}})
            assert review["status"]["user"] == {"username": "alice", "uid": "u-1",
                                                "groups": ["devs", "system:authenticated"]}
            await post("/api/v1/namespaces/default/pods", {"metadata": {"name": "p"}, "spec": {
                "containers": [{"name": "c", "image": "busybox"}]}})
            await eventually_sa(api)
            token = (await post("/api/v1/namespaces/default/serviceaccounts/default/token", {"spec": {
                "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}}}))["status"]["token"]
            review = await post(review_path, {"spec": {"token": token}})
            assert review["status"]["user"]["extra"]["authentication.kubernetes.io/pod-name"] == ["p"]
            # rbac=False: an authenticated service account may do anything
            assert (await _get(api, "/api/v1/namespaces/default/secrets", token))[0] == 200
            async with s.delete(api.url + "/api/v1/namespaces/default/pods/p", ssl=ctx, headers=admin) as r:
                assert r.status == 200
            assert (await _get(api, "/api/v1/namespaces/default/secrets", token))[0] == 401
            review = await post(review_path, {"spec": {"token": token}})
            assert review["status"]["error"] == "[invalid bearer token, service account token has been invalidated]"


async def eventually_sa(api: APIServer) -> None:
    from kubeloop.testing import eventually

    async def exists() -> bool:
        return (await _get(api, "/api/v1/namespaces/default/serviceaccounts/default", "admin-t"))[0] == 200
    await eventually(exists)
