"""Bad input never crashes the server: random methods, paths, bodies, headers and queries."""

from __future__ import annotations

import random

import aiohttp
import orjson

from kubeloop.testing import APIServer
from tests.testing.conftest import Http

PATHS = ["/api/v1/namespaces/default/configmaps", "/api/v1/namespaces/default/configmaps/x",
         "/api/v1/namespaces", "/api/v1/configmaps", "/apis", "/api", "/api/v1/namespaces/default/configmaps/x/status",
         "/apis/apps/v1/namespaces/default/deployments", "/%00", "/api/v1/namespaces/%2F/configmaps",
         "/apis/coordination.k8s.io/v1/namespaces/default/leases/l", "/api/v1/namespaces/default/secrets",
         "/" + "a/" * 50, "/api/v1/namespaces/default/configmaps/" + "n" * 300]
BODIES = [b"", b"{", b"[]", b"null", b"123", b'{"metadata": 5}', b'{"metadata": {"name": 7}}',
          b'{"metadata": {"name": "ok"}, "data": {"a": 1}}', b'{"metadata": {"name": "ok", "labels": []}}',
          b"\xff\xfe", b"- a\n- b", b'{"metadata": {"name": "x", "finalizers": "nope"}}',
          b'{"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "y", "ownerReferences": [1]}}',
          b'[{"op": "add", "path": "/data/a", "value": "b"}]', b'[{"op": 1}]', b'{"metadata": {"labels": null}}']
CTYPES = ["application/json", "application/yaml", "application/merge-patch+json", "application/json-patch+json",
          "application/strategic-merge-patch+json", "application/apply-patch+yaml", "text/plain", ""]
QUERIES = [{}, {"labelSelector": "a in ("}, {"fieldSelector": "=="}, {"limit": "-5"}, {"continue": "%%%"},
           {"resourceVersion": "x"}, {"watch": "true", "timeoutSeconds": "1"}, {"dryRun": "Nope"},
           {"fieldManager": "f", "force": "true"}, {"propagationPolicy": "Sideways"}, {"timeoutSeconds": "abc",
                                                                                        "watch": "1"}]


async def test_random_requests_never_break_the_server(server: APIServer, http: Http) -> None:
    rnd = random.Random(1234)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as s:
        for _ in range(400):
            method = rnd.choice(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"])
            headers = {"Content-Type": rnd.choice(CTYPES)}
            if rnd.random() < 0.2:
                headers["Accept"] = rnd.choice(["text/html", "application/json;as=Table;g=meta.k8s.io;v=v1",
                                                "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"])
            body = rnd.choice(BODIES) if method in ("POST", "PUT", "PATCH", "DELETE") else None
            async with s.request(method, server.url + rnd.choice(PATHS), data=body, headers=headers,
                                 params=rnd.choice(QUERIES)) as r:
                raw = await r.read()
                if r.status >= 500:  # only the real server's deliberate 500s, never a crash
                    assert r.status == 500 and r.content_type == "application/json"
                    assert not orjson.loads(raw)["message"].startswith("unexpected "), raw
        big = b'{"metadata": {"name": "big"}, "data": {"a": "' + b"x" * (4 * 1024 * 1024) + b'"}}'
        async with s.post(server.url + PATHS[0], data=big, headers={"Content-Type": "application/json"}) as r:
            assert r.status == 413
    code, lst = await http.get("/api/v1/namespaces")
    assert code == 200 and isinstance(lst["items"], list)
