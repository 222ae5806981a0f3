"""The garbage collector (ownerReferences) and its switch."""

from __future__ import annotations

import asyncio

import aiohttp

from kubeloop.testing import APIServer
from tests.testing.conftest import Http, cm

BASE = "/api/v1/namespaces/default/configmaps"


async def _owned(http: Http, owner: str, dep: str) -> None:
    _, o = await http.post(BASE, cm(owner))
    body = cm(dep)
    body["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": owner,
                                            "uid": o["metadata"]["uid"], "blockOwnerDeletion": True}]
    code, _ = await http.post(BASE, body)
    assert code == 201


async def _gone(http: Http, name: str) -> bool:
    for _ in range(100):
        code, _ = await http.get(BASE + "/" + name)
        if code == 404:
            return True
        await asyncio.sleep(0.01)
    return False


async def test_background_foreground_and_orphan(cluster_http: Http) -> None:
    http = cluster_http
    await _owned(http, "o1", "d1")
    await http.req("DELETE", BASE + "/o1")
    assert await _gone(http, "d1")
    await _owned(http, "o2", "d2")
    code, o2 = await http.req("DELETE", BASE + "/o2", {"propagationPolicy": "Foreground"})
    assert code == 200 and o2["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert await _gone(http, "d2") and await _gone(http, "o2")
    await _owned(http, "o3", "d3")
    await http.req("DELETE", BASE + "/o3", {"propagationPolicy": "Orphan"})
    assert await _gone(http, "o3")
    code, d3 = await http.get(BASE + "/d3")
    assert code == 200 and "ownerReferences" not in d3["metadata"]


async def test_gc_switched_off_keeps_dependents() -> None:
    async with APIServer(gc=False) as server, aiohttp.ClientSession() as s:
        http = Http(s, server.url)
        await _owned(http, "o", "d")
        await http.req("DELETE", BASE + "/o")
        await asyncio.sleep(0.1)
        code, _ = await http.get(BASE + "/d")
        assert code == 200


async def test_dependent_of_missing_owner_is_collected(cluster_http: Http) -> None:
    http = cluster_http
    body = cm("orphaned")
    body["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "never",
                                            "uid": "00000000-0000-0000-0000-00000000dead"}]
    code, _ = await http.post(BASE, body)
    assert code == 201
    assert await _gone(http, "orphaned")


async def test_bare_server_has_no_garbage_collector(http: Http) -> None:
    """`bare=True` is kube-apiserver alone (as envtest): nothing collects dependents or clears finalizers."""
    await _owned(http, "o", "d")
    code, o = await http.req("DELETE", BASE + "/o", {"propagationPolicy": "Foreground"})
    assert code == 200 and o["metadata"]["finalizers"] == ["foregroundDeletion"]
    await asyncio.sleep(0.1)
    assert (await http.get(BASE + "/d"))[0] == 200
    code, o = await http.get(BASE + "/o")
    assert code == 200 and o["metadata"]["finalizers"] == ["foregroundDeletion"]
