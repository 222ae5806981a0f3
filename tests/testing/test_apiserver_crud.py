"""Generic request flow through real HTTP: RVs, concurrency, no-op writes, finalizers, dry run, errors."""

from __future__ import annotations

import orjson

from kubeloop.testing import APIServer
from tests.testing.conftest import Http, cm

BASE = "/api/v1/namespaces/default/configmaps"


async def test_create_get_update_with_optimistic_concurrency(http: Http) -> None:
    code, created = await http.post(BASE, cm("a"))
    assert code == 201
    rv = int(created["metadata"]["resourceVersion"])
    assert created["metadata"]["uid"] and created["metadata"]["creationTimestamp"]
    created["data"]["k"] = "v2"
    code, updated = await http.req("PUT", BASE + "/a", created)
    assert code == 200 and int(updated["metadata"]["resourceVersion"]) > rv
    code, stale = await http.req("PUT", BASE + "/a", created)  # carries the old resourceVersion
    assert code == 409 and stale["reason"] == "Conflict"
    code, same = await http.req("PUT", BASE + "/a", updated)  # identical: no write
    assert code == 200 and same["metadata"]["resourceVersion"] == updated["metadata"]["resourceVersion"]


async def test_generate_name_and_dry_run(http: Http) -> None:
    body = {"metadata": {"generateName": "x" * 70}, "data": {}}
    code, obj = await http.post(BASE, body)
    assert code == 201 and len(obj["metadata"]["name"]) == 63
    code, dry = await http.post(BASE, cm("dry"), dryRun="All")
    assert code == 201 and "resourceVersion" not in dry["metadata"] and dry["metadata"]["uid"]
    code, _ = await http.get(BASE + "/dry")
    assert code == 404


async def test_finalizers_keep_object_until_removed(http: Http) -> None:
    body = cm("f")
    body["metadata"]["finalizers"] = ["example.com/f"]
    await http.post(BASE, body)
    code, obj = await http.req("DELETE", BASE + "/f")
    assert code == 200 and obj["metadata"]["deletionTimestamp"]
    code, again = await http.req("DELETE", BASE + "/f")
    assert again["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]
    code, _ = await http.req("PATCH", BASE + "/f", {"metadata": {"finalizers": None}},
                             ctype="application/merge-patch+json")
    assert code == 200
    code, _ = await http.get(BASE + "/f")
    assert code == 404


async def test_missing_and_terminating_namespaces(cluster_http: Http) -> None:
    http = cluster_http
    code, st = await http.post("/api/v1/namespaces/nope/configmaps", cm("a"))
    assert code == 404 and st["details"] == {"name": "nope", "kind": "namespaces"}
    # the body is decoded before admission looks at the namespace: an undecodable one is a 400
    code, st = await http.post("/api/v1/namespaces/nope/configmaps", {"metadata": {"name": "a"}, "data": 5})
    assert code == 400 and "cannot unmarshal number" in st["message"]
    await http.post("/api/v1/namespaces", {"metadata": {"name": "gone"}})
    await http.post("/api/v1/namespaces/gone/configmaps", cm("a"))
    code, ns = await http.req("DELETE", "/api/v1/namespaces/gone")
    assert code == 200 and ns["metadata"]["deletionTimestamp"]
    code, st = await http.post("/api/v1/namespaces/gone/configmaps", cm("b"))
    assert code == 403 and st["details"]["causes"][0]["reason"] == "NamespaceTerminating"
    code, st = await http.post("/api/v1/namespaces/gone/configmaps", {"metadata": {"name": "b"}, "data": 5})
    assert code == 400
    # the namespace controller empties it, then removes it
    for _ in range(100):
        code, _ = await http.get("/api/v1/namespaces/gone")
        if code == 404:
            break
        import asyncio

        await asyncio.sleep(0.02)
    assert code == 404
    code, lst = await http.get("/api/v1/namespaces/gone/configmaps")
    assert code == 200 and lst["items"] == []


async def test_error_shapes_and_bad_input(http: Http) -> None:
    code, body = await http.get("/nonsense")
    assert code == 404 and body.startswith("404 page not found")
    code, st = await http.get("/api/v1/namespaces/default/foos")
    assert code == 404 and st["kind"] == "Status" and st["details"] == {}
    code, st = await http.req("PUT", BASE, cm("a"))
    assert code == 405
    code, st = await http.post(BASE, b"{not json")
    assert code == 400 and st["reason"] == "BadRequest"
    code, st = await http.post(BASE, cm("a"), ctype="text/plain")
    assert code == 415
    code, st = await http.get(BASE, labelSelector="a in b")
    assert code == 400
    code, st = await http.req("PATCH", BASE + "/x", {}, ctype="application/json")
    assert code == 415


async def test_yaml_body_and_yaml_response(http: Http) -> None:
    code, obj = await http.req("POST", BASE, b"metadata:\n  name: y\ndata:\n  a: b\n", ctype="application/yaml")
    assert code == 201 and obj["data"] == {"a": "b"}
    code, text = await http.req("GET", BASE + "/y", headers={"Accept": "application/yaml"})
    assert code == 200 and "name: y" in text


async def test_partial_object_metadata(http: Http) -> None:
    await http.post(BASE, cm("p", {"a": "1"}))
    pom = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
    code, obj = await http.req("GET", BASE + "/p", headers={"Accept": pom})
    assert code == 200 and obj["kind"] == "PartialObjectMetadata" and "data" not in obj
    code, lst = await http.req("GET", BASE, headers={"Accept": pom.replace("Metadata;", "MetadataList;")})
    assert code == 200 and lst["kind"] == "PartialObjectMetadataList"
    assert lst["items"][0]["kind"] == "PartialObjectMetadata"
    code, _ = await http.req("GET", BASE, headers={"Accept": pom})
    assert code == 406


async def test_create_with_resource_version_is_refused_like_etcd(http: Http) -> None:
    body = cm("rv")
    body["metadata"]["resourceVersion"] = "12"
    code, st = await http.post(BASE, body)
    assert code == 500 and st["message"] == "resourceVersion should not be set on objects to be created"


async def test_namespace_finalize_subresource_completes_deletion() -> None:
    import aiohttp

    async with APIServer(namespace_delete_delay=30) as server, aiohttp.ClientSession() as s:
        http = Http(s, server.url)
        await http.post("/api/v1/namespaces", {"metadata": {"name": "x"}})
        _, ns = await http.req("DELETE", "/api/v1/namespaces/x")
        ns["spec"]["finalizers"] = []
        code, out = await http.req("PUT", "/api/v1/namespaces/x/finalize", ns)
        assert code == 200 and out["spec"] == {}
        code, _ = await http.get("/api/v1/namespaces/x")
        assert code == 404


async def test_merge_patch_that_breaks_the_types_reports_the_patched_object_and_changes_nothing(http: Http) -> None:
    st, created = await http.post(BASE, cm("typed", labels={"a": "1"}))
    assert st == 201
    st, err = await http.req("PATCH", f"{BASE}/typed", {"metadata": {"labels": ["x"]}, "data": {"k": "w"}},
                             ctype="application/merge-patch+json")
    assert st == 422 and err["reason"] == "Invalid"
    # the patched JSON as the patch made it (before the write path added anything), as upstream shows it
    shown = orjson.loads(orjson.loads(err["message"].split("Invalid value: ", 1)[1].rsplit(": json: ", 1)[0]))
    assert shown["metadata"]["labels"] == ["x"] and shown["data"] == {"k": "w"}
    assert shown["kind"] == "ConfigMap" and shown["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    st, now = await http.get(f"{BASE}/typed")
    assert st == 200 and now == created
    st, patched = await http.req("PATCH", f"{BASE}/typed", {"data": {"k": "w"}}, ctype="application/merge-patch+json")
    assert st == 200 and patched["data"] == {"k": "w"} and patched["metadata"]["labels"] == {"a": "1"}
