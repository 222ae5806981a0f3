"""LIST: ordering, consistent continue snapshots, remainingItemCount, resourceVersion parameters."""

from __future__ import annotations

import time

from kubeloop.testing import APIServer
from tests.testing.conftest import Http, cm

BASE = "/api/v1/namespaces/default/configmaps"


async def test_pages_read_the_snapshot_of_the_first_page(http: Http) -> None:
    for i in range(5):
        await http.post(BASE, cm(f"c{i}"))
    _, p1 = await http.get(BASE, limit="2")
    assert [i["metadata"]["name"] for i in p1["items"]] == ["c0", "c1"]
    assert p1["metadata"]["remainingItemCount"] == 3
    await http.post(BASE, cm("c9"))
    await http.req("DELETE", BASE + "/c3")
    _, p2 = await http.get(BASE, limit="2", **{"continue": p1["metadata"]["continue"]})
    _, p3 = await http.get(BASE, limit="2", **{"continue": p2["metadata"]["continue"]})
    names = [i["metadata"]["name"] for p in (p2, p3) for i in p["items"]]
    assert names == ["c2", "c3", "c4"]
    assert "continue" not in p3["metadata"]
    assert p1["metadata"]["resourceVersion"] == p2["metadata"]["resourceVersion"] == p3["metadata"]["resourceVersion"]


async def test_continue_after_compaction_is_expired(server: APIServer, http: Http) -> None:
    for i in range(3):
        await http.post(BASE, cm(f"c{i}"))
    _, p1 = await http.get(BASE, limit="1")
    await http.post(BASE, cm("later"))
    server.faults.compact()
    code, st = await http.get(BASE, limit="1", **{"continue": p1["metadata"]["continue"]})
    assert code == 410 and st["reason"] == "Expired"
    code, st = await http.get(BASE, limit="1", **{"continue": "garbage"})
    assert code == 400


async def test_exact_and_future_resource_versions(http: Http) -> None:
    await http.post(BASE, cm("a"))
    _, lst = await http.get(BASE)
    rv = lst["metadata"]["resourceVersion"]
    await http.post(BASE, cm("b"))
    _, exact = await http.get(BASE, resourceVersion=rv, resourceVersionMatch="Exact")
    assert [i["metadata"]["name"] for i in exact["items"]] == ["a"]
    t0 = time.monotonic()
    code, st = await http.get(BASE, resourceVersion=str(int(rv) + 100), resourceVersionMatch="NotOlderThan")
    assert code == 504 and st["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    assert time.monotonic() - t0 >= 0.25
    code, st = await http.get(BASE, resourceVersionMatch="Exact")
    assert code == 422


async def test_selectors_and_all_namespaces(http: Http) -> None:
    await http.post("/api/v1/namespaces", {"metadata": {"name": "other"}})
    await http.post(BASE, cm("a", {"tier": "web"}))
    await http.post("/api/v1/namespaces/other/configmaps", cm("b", {"tier": "web"}))
    await http.post(BASE, cm("c", {"tier": "db"}))
    _, lst = await http.get("/api/v1/configmaps", labelSelector="tier=web")
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in lst["items"]] == [
        ("default", "a"), ("other", "b")]
    _, lst = await http.get(BASE, fieldSelector="metadata.name!=a")
    assert [i["metadata"]["name"] for i in lst["items"]] == ["c"]
    code, _ = await http.get(BASE, fieldSelector="data.k=v")
    assert code == 400


async def test_pages_of_one_namespace_stay_one_snapshot_under_writes(http: Http) -> None:
    """Pages are ranges of the sorted keys at the first page's resourceVersion: a namespace's pages
    leave out its neighbours, and writes between pages (in it and around it) do not show."""
    await http.post("/api/v1/namespaces", {"metadata": {"name": "a"}})
    await http.post("/api/v1/namespaces", {"metadata": {"name": "a-b"}})  # sorts right after "a"
    for i in range(7):
        for ns in ("a", "a-b"):
            await http.post(f"/api/v1/namespaces/{ns}/configmaps", cm(f"c{i}"))
    path = "/api/v1/namespaces/a/configmaps"
    _, whole = await http.get(path)
    pages = []
    code, page = await http.get(path, limit="3")
    while True:
        assert code == 200, page
        pages.append(page)
        await http.post(path, cm(f"new{len(pages)}"))  # between pages: a create, an update, a delete
        await http.req("PUT", f"{path}/c{len(pages)}", dict(cm(f"c{len(pages)}"), data={"k": "changed"}))
        await http.req("DELETE", f"/api/v1/namespaces/a-b/configmaps/c{len(pages)}")
        token = page["metadata"].get("continue")
        if not token:
            break
        code, page = await http.get(path, limit="3", **{"continue": token})
    assert [len(p["items"]) for p in pages] == [3, 3, 1]
    assert [i for p in pages for i in p["items"]] == whole["items"]
    assert {p["metadata"]["resourceVersion"] for p in pages} == {whole["metadata"]["resourceVersion"]}
    assert [p["metadata"].get("remainingItemCount") for p in pages] == [4, 1, None]
