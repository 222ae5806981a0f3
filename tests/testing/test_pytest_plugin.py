"""The pytest plugin's fixtures (`kubeloop.testing.pytest_plugin`), as a kubeloop user gets them."""

from __future__ import annotations

import aiohttp

from kubeloop import Client
from kubeloop.testing import TestCluster
from kubeloop.testing.pytest_plugin import TEST_RETRY
from tests.testing.conftest import Http


async def test_plugin_fixture_gives_a_fresh_cluster(apiserver: TestCluster) -> None:
    assert apiserver.require_faults() is apiserver.faults  # skips on a real cluster
    assert apiserver.is_emulator
    async with aiohttp.ClientSession() as s:
        http = Http(s, apiserver.url, apiserver.token)
        code, lst = await http.get("/api/v1/namespaces/default/configmaps")
        assert code == 200 and lst["items"] == [] == []
    assert apiserver.stats()["requests"] == {"list core/v1/configmaps": 1}


async def test_client_fixture_is_connected_to_the_apiserver_fixture(apiserver: TestCluster, client: Client) -> None:
    assert client.transport.retry is TEST_RETRY and client.transport.limiter is None
    created = await client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": "from-fixture", "namespace": "default"}})
    try:
        async with apiserver.client(qps=None) as other:  # a second client on the same cluster sees it
            got = await other.get("v1/ConfigMap", "from-fixture", namespace="default")
        assert got["metadata"]["uid"] == created["metadata"]["uid"]
    finally:
        await client.delete("v1/ConfigMap", "from-fixture", namespace="default")


async def test_namespace_fixture_is_fresh_and_usable(client: Client, namespace: str) -> None:
    assert namespace.startswith("kl-test-")
    assert (await client.get("v1/Namespace", namespace))["status"]["phase"] == "Active"
    listed = await client.list("v1/ConfigMap", namespace=namespace)
    assert {o["metadata"]["name"] for o in listed} <= {"kube-root-ca.crt"}  # only what the cluster itself adds
