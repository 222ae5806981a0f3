"""`/openapi/v2` and `/openapi/v3` against what a real kube-apiserver 1.24 served for the same CRDs
(`data/openapi-real.json.gz`, recorded by hand from a real server: see its `source`)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from kubeloop.testing import APIServer

from .conftest import Http

REAL: dict[str, Any] = json.loads(gzip.decompress((Path(__file__).parent / "data" / "openapi-real.json.gz").read_bytes()))
PB = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


async def _raw(http: Http, path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    async with http.s.get(http.url + path, headers=headers, allow_redirects=False) as r:
        return r.status, dict(r.headers), await r.read()


async def _v2(http: Http) -> dict[str, Any]:
    code, headers, body = await _raw(http, "/openapi/v2")
    assert code == 200 and headers["Content-Type"] == "text/plain; charset=utf-8"
    return orjson.loads(body)


async def _install_crds(http: Http) -> None:
    for crd in REAL["crds"]:
        code, out = await http.post(CRDS, crd)
        assert code == 201, out


def _params(doc: Any) -> set[str]:
    """Every parameter name anywhere in a document's paths."""
    out: set[str] = set()
    for item in doc["paths"].values():
        for key, value in item.items():
            for p in (value if key == "parameters" else value.get("parameters", [])):
                out.add(p["name"])
    return out


async def test_v2_serves_the_builtin_schemas_and_no_field_validation(http: Http) -> None:
    doc = await _v2(http)
    spec = doc["definitions"]["io.k8s.api.apps.v1.DeploymentSpec"]
    assert "replicas" in spec["properties"] and "replica" not in spec["properties"]
    assert doc["info"]["version"].startswith("v1.24")
    # 1.24's field validation is alpha and off: advertising it would make kubectl skip its own checks
    assert "fieldValidation" not in _params(doc)
    assert not [k for k in doc["definitions"] if k.endswith("_v2")]  # no CRD served: no CRD-shared copies


async def test_v2_protobuf_is_a_gnostic_document(http: Http) -> None:
    code, headers, body = await _raw(http, "/openapi/v2", Accept=PB)
    assert code == 200 and headers["Content-Type"] == "application/octet-stream"
    # field 1 (swagger) is the first field of openapi.v2.Document: tag 0x0a, length 3, "2.0"
    assert body[:5] == b"\x0a\x032.0"
    assert b"io.k8s.api.apps.v1.DeploymentSpec" in body and b"x-kubernetes-patch-merge-key" in body
    code, _, _ = await _raw(http, "/openapi/v2", Accept="application/yaml")
    assert code == 406
    etag = headers["Etag"]
    code, _, _ = await _raw(http, "/openapi/v2", **{"If-None-Match": etag})
    assert code == 304


async def test_v2_merges_crds_as_the_real_server(http: Http) -> None:
    await _install_crds(http)
    doc = await _v2(http)
    for name, want in REAL["v2_definitions"].items():
        assert doc["definitions"].get(name) == want, name
    for path, want in REAL["v2_paths"].items():
        assert doc["paths"].get(path) == want, path
    served = {p for p in doc["paths"] if "/oa.example.com/" in p or "/oa-two.io/" in p}
    assert served == set(REAL["v2_paths"])  # the unserved v1alpha1 has no paths
    for crd in REAL["crds"]:
        code, _ = await http.req("DELETE", f"{CRDS}/{crd['metadata']['name']}")
        assert code == 200
    server_gone = False
    for _ in range(100):
        doc = await _v2(http)
        if not [k for k in doc["definitions"] if k.endswith("_v2") or k.startswith("com.example.oa")]:
            server_gone = True
            break
        import asyncio

        await asyncio.sleep(0.05)
    assert server_gone, "the CRDs' definitions outlived the CRDs"


async def test_v3_documents_are_the_real_ones(http: Http) -> None:
    await _install_crds(http)
    code, _, body = await _raw(http, "/openapi/v3")
    root = orjson.loads(body)["paths"]
    assert set(root) == set(REAL["v3_root_paths"])
    for gv, want in REAL["v3"].items():
        url = root[gv]["serverRelativeURL"]
        code, headers, body = await _raw(http, url)
        assert code == 200 and headers["Content-Type"] == "text/plain; charset=utf-8", gv
        assert orjson.loads(body) == want, gv
        assert "fieldValidation" not in _params(want)
    # a stale hash redirects to the current one, as kube-openapi's handler does
    code, headers, _ = await _raw(http, "/openapi/v3/apis/apps/v1?hash=0")
    assert code == 301 and headers["Location"].startswith("/openapi/v3/apis/apps/v1?hash=")
    code, _, _ = await _raw(http, "/openapi/v3/apis/nope/v1")
    assert code == 404


async def test_openapi_is_served_behind_the_token() -> None:
    async with APIServer(token="t", bare=True) as api, aiohttp.ClientSession() as s:
        # anonymous requests are authenticated as system:anonymous, whom RBAC does not let read it
        # (the real 1.24 server's answer); an unknown token is refused before that
        async with s.get(api.url + "/openapi/v2") as r:
            assert r.status == 403
            assert (await r.json())["message"] == 'forbidden: User "system:anonymous" cannot get path "/openapi/v2"'
        async with s.get(api.url + "/openapi/v2", headers={"Authorization": "Bearer wrong"}) as r:
            assert r.status == 401
        async with s.get(api.url + "/openapi/v2", headers={"Authorization": "Bearer t"}) as r:
            assert r.status == 200
