"""Fault injection from Python and from the admin endpoints; stats; TLS, token auth, kubeconfig."""

from __future__ import annotations

import asyncio
import ssl
import time
from pathlib import Path

import aiohttp
import orjson
import yaml

from kubeloop.testing import APIServer
from tests.testing.conftest import Http, cm

BASE = "/api/v1/namespaces/default/configmaps"


async def test_fail_next_requests_with_retry_after(server: APIServer, http: Http) -> None:
    server.faults.fail_next(2, 429, resource="configmaps", retry_after=3)
    async with http.s.get(server.url + BASE) as r:
        assert r.status == 429 and r.headers["Retry-After"] == "3"
        st = await r.json()
        assert st["reason"] == "TooManyRequests" and st["details"]["retryAfterSeconds"] == 3
    code, _ = await http.get("/api/v1/namespaces")  # another resource: unaffected
    assert code == 200
    code, _ = await http.get(BASE)
    assert code == 429
    code, _ = await http.get(BASE)
    assert code == 200


async def test_admin_endpoints(server: APIServer, http: Http) -> None:
    code, _ = await http.req("POST", "/_kubeloop/fail", b"", count="1", code="503")
    assert code == 200
    code, st = await http.get(BASE)
    assert code == 503 and st["reason"] == "ServiceUnavailable"
    await http.req("POST", "/_kubeloop/delay", b"", seconds="0.2")
    t0 = time.monotonic()
    await http.get(BASE)
    assert time.monotonic() - t0 >= 0.2
    await http.req("POST", "/_kubeloop/reset", b"")
    code, stats = await http.get("/_kubeloop/stats")
    assert stats["requests"]["list core/v1/configmaps"] == 2
    assert stats["open_watches"] == {}


async def test_tls_token_and_kubeconfig() -> None:
    async with APIServer(token="s3cret", tls=True) as server:
        assert server.url.startswith("https://")
        cfg = yaml.safe_load(server.kubeconfig_dict() and Path(server.kubeconfig).read_bytes())  # noqa: ASYNC240
        assert cfg["users"][0]["user"]["token"] == "s3cret"
        ca = cfg["clusters"][0]["cluster"]["certificate-authority-data"]
        import base64

        ctx = ssl.create_default_context(cadata=base64.b64decode(ca).decode())
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as s:
            async with s.get(server.url + "/api/v1/namespaces") as r:  # anonymous, as kube-apiserver has it
                assert r.status == 403 and (await r.json())["message"] == (
                    'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group '
                    '"" at the cluster scope')
            async with s.get(server.url + "/api/v1/namespaces", headers={"Authorization": "Bearer bad"}) as r:
                assert r.status == 401
            http = Http(s, server.url, "s3cret")
            code, lst = await http.get("/api/v1/namespaces")
            assert code == 200 and "default" in [i["metadata"]["name"] for i in lst["items"]]


async def test_cli_prints_url_and_stops_on_sigterm(tmp_path) -> None:
    import sys

    kc = tmp_path / "kc.yaml"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from kubeloop.cli.main import main; main()", "apiserver", "--token", "t",
        "--kubeconfig-out", str(kc), stdout=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        url = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode().strip()
        assert url.startswith("http://127.0.0.1:")
        assert yaml.safe_load(kc.read_text())["clusters"][0]["cluster"]["server"] == url
        async with aiohttp.ClientSession() as s:
            http = Http(s, url, "t")
            code, _ = await http.post(BASE, cm("x"))
            assert code == 201
    finally:
        proc.terminate()
        assert await asyncio.wait_for(proc.wait(), 10) == 0


def test_server_process_with_faults_over_http() -> None:
    import urllib.error
    import urllib.request

    from kubeloop.testing import APIServerProcess

    with APIServerProcess(token="t") as api:
        assert api.url.startswith("http://") and Path(api.kubeconfig).exists()
        api.fail_next(1, 503, resource="namespaces")
        req = urllib.request.Request(api.url + "/api/v1/namespaces", headers={"Authorization": "Bearer t"})
        try:
            urllib.request.urlopen(req, timeout=5)
            raise AssertionError("expected 503")
        except urllib.error.HTTPError as e:
            assert e.code == 503
        with urllib.request.urlopen(req, timeout=5) as r:
            assert r.status == 200
        assert api.stats()["requests"]["list core/v1/namespaces"] == 2


async def test_bulk_create_goes_through_the_create_path(server: APIServer, http: Http) -> None:
    lines = b"\n".join(orjson.dumps({"metadata": {"name": f"bulk-{i}", "labels": {"n": str(i)}},
                                     "data": {"i": str(i)}}) for i in range(3))
    code, out = await http.req("POST", "/_kubeloop/bulk-create", lines + b"\n", resource="configmaps",
                               namespace="default")
    assert code == 200 and out["created"] == 3 and out["existing"] == 0
    code, got = await http.get(BASE + "/bulk-1")
    assert code == 200 and got["data"] == {"i": "1"} and got["metadata"]["uid"] and got["metadata"]["managedFields"]
    # existing objects are counted, not replaced; an invalid object fails like a POST would
    code, out = await http.req("POST", "/_kubeloop/bulk-create", lines, resource="configmaps", namespace="default")
    assert code == 200 and out["created"] == 0 and out["existing"] == 3
    code, st = await http.req("POST", "/_kubeloop/bulk-create", b'{"metadata": {"name": "Bad_Name"}}\n',
                              resource="configmaps", namespace="default")
    assert code == 422 and st["reason"] == "Invalid"
    code, st = await http.req("POST", "/_kubeloop/bulk-create", b"{}\n", resource="nothings")
    assert code == 404
