"""Retries, rate limiting, timeouts, transport errors, TLS and authentication, over real HTTP against
the emulator with fault injection (skipped on a real cluster where faults are needed)."""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubeloop.client import (
    ApiError,
    BadRequest,
    Client,
    ClientConnectionError,
    Forbidden,
    InternalError,
    MethodNotAllowed,
    NotAcceptable,
    RequestEntityTooLarge,
    RequestTimeoutError,
    RetryPolicy,
    ServiceUnavailable,
    Timeout,
    TooManyRequests,
    Unauthorized,
    UnsupportedMediaType,
)
from kubeloop.config import ClusterConfig, load_kubeconfig
from kubeloop.testing import APIServer, TestCluster

from ..builders import cm

NO_RETRY = RetryPolicy(max_attempts=1)
FAST = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.02)


def count(apiserver: TestCluster, key: str) -> int:
    return int(apiserver.stats()["requests"].get(key, 0))


async def test_429_then_success_honours_retry_after(client: Client, ns: str, apiserver: TestCluster) -> None:
    faults = apiserver.require_faults()
    await client.resolve("v1/ConfigMap")
    before = count(apiserver, "create core/v1/configmaps")
    faults.fail_next(2, 429, resource="configmaps", retry_after=0)
    created = await client.create(cm("after-429"), namespace=ns)  # POST: 429 is safe to retry for any verb
    assert created["metadata"]["name"] == "after-429"
    assert count(apiserver, "create core/v1/configmaps") - before == 3


async def test_429_retry_after_delays_the_retry(apiserver: TestCluster, ns: str) -> None:
    faults = apiserver.require_faults()
    async with apiserver.client(qps=None, retry=FAST) as c:
        await c.resolve("v1/ConfigMap")
        faults.fail_next(1, 429, resource="configmaps", retry_after=1)
        t0 = time.monotonic()
        await c.list("v1/ConfigMap", namespace=ns)
        assert time.monotonic() - t0 >= 0.9  # Retry-After: 1 beats the 10 ms backoff


async def test_429_exhausted_raises_typed(apiserver: TestCluster, ns: str) -> None:
    faults = apiserver.require_faults()
    async with apiserver.client(qps=None, retry=FAST) as c:
        await c.resolve("v1/ConfigMap")
        faults.fail_next(5, 429, resource="configmaps", retry_after=0)
        with pytest.raises(TooManyRequests) as exc:
            await c.list("v1/ConfigMap", namespace=ns)
        assert exc.value.retry_after == 0
        faults.reset()


async def test_500_on_create_is_not_retried(client: Client, ns: str, apiserver: TestCluster) -> None:
    faults = apiserver.require_faults()
    await client.resolve("v1/ConfigMap")
    before = count(apiserver, "create core/v1/configmaps")
    faults.fail_next(1, 500, resource="configmaps", verbs=("create",))
    with pytest.raises(InternalError):
        await client.create(cm("once"), namespace=ns)
    assert count(apiserver, "create core/v1/configmaps") - before == 1
    faults.fail_next(1, 503, resource="configmaps", verbs=("patch",))
    with pytest.raises(ServiceUnavailable):
        await client.patch("v1/ConfigMap", "once", {"data": {"a": "b"}}, namespace=ns)


async def test_5xx_on_get_is_retried(client: Client, ns: str, apiserver: TestCluster) -> None:
    faults = apiserver.require_faults()
    await client.create(cm("g"), namespace=ns)
    before = count(apiserver, "get core/v1/configmaps")
    faults.fail_next(1, 500, resource="configmaps", verbs=("get",))
    faults.fail_next(1, 503, resource="configmaps", verbs=("get",), retry_after=0)
    assert (await client.get("v1/ConfigMap", "g", namespace=ns))["metadata"]["name"] == "g"
    assert count(apiserver, "get core/v1/configmaps") - before == 3


@pytest.mark.parametrize(("code", "cls"), [
    (400, BadRequest), (401, Unauthorized), (403, Forbidden), (405, MethodNotAllowed), (406, NotAcceptable),
    (413, RequestEntityTooLarge), (415, UnsupportedMediaType), (500, InternalError), (503, ServiceUnavailable),
    (504, Timeout),
])
async def test_error_types_from_injected_faults(apiserver: TestCluster, code: int, cls: type[ApiError]) -> None:
    faults = apiserver.require_faults()
    async with apiserver.client(qps=None, retry=NO_RETRY) as c:
        await c.resolve("v1/ConfigMap")
        faults.fail_next(2 if code == 401 else 1, code, resource="configmaps", retry_after=0)
        with pytest.raises(cls) as exc:
            await c.get("v1/ConfigMap", "x", namespace="default")
        assert exc.value.code == code and exc.value.status["kind"] == "Status"


async def test_request_timeout(apiserver: TestCluster) -> None:
    faults = apiserver.require_faults()
    async with apiserver.client(qps=None, retry=NO_RETRY, timeout=0.2) as c:
        await c.resolve("v1/ConfigMap")
        faults.delay(1.0, resource="configmaps")
        with pytest.raises(RequestTimeoutError):
            await c.create(cm("slow"))
        faults.delay(0)


async def test_connection_refused_is_connection_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    async with Client(ClusterConfig(server=f"http://127.0.0.1:{port}"), retry=FAST) as c:
        with pytest.raises(ClientConnectionError) as exc:
            await c.get("v1/ConfigMap", "x")
        assert not isinstance(exc.value, ApiError)


async def test_client_side_rate_limit(apiserver: TestCluster) -> None:
    apiserver.require_faults()  # timing against a shared real cluster is not meaningful
    async with apiserver.client(qps=20, burst=2) as c:
        t0 = time.monotonic()
        for _ in range(7):
            await c.list("v1/ConfigMap", namespace="default")
        # discovery + 7 lists = 8 requests; 2 burst, 6 more at 20/s >= 0.3 s
        assert time.monotonic() - t0 >= 0.28


async def test_rate_limit_charges_a_paginated_list_once(apiserver: TestCluster, ns: str) -> None:
    apiserver.require_faults()  # timing against a shared real cluster is not meaningful
    async with apiserver.client(qps=None) as writer:
        for i in range(12):
            await writer.create(cm(f"pg{i}", labels={"paged": "once"}), namespace=ns)
    async with apiserver.client(qps=2, burst=2) as c:
        await c.resolve("v1/ConfigMap")  # discovery takes one token
        t0 = time.monotonic()
        pages = [p async for p in c.list_pages("v1/ConfigMap", namespace=ns, label_selector="paged=once", limit=2)]
        # 6 pages: throttled each, 5 of them would wait 0.5 s; as one list, only the first may wait
        assert [len(p.items) for p in pages] == [2] * 6
        assert time.monotonic() - t0 < 1.5


# -- TLS and authentication ---------------------------------------------------------------------
# These start an emulator of their own (TLS, a token): they run the same with or without a real
# cluster in KUBELOOP_TEST_KUBECONFIG, so they never skip.


def read_doc(path: str | Path) -> dict[str, Any]:
    return dict(yaml.safe_load(Path(path).read_text()))


def write_doc(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(doc))
    return path


def rewrite_user(kubeconfig: str, dest: Path, user: dict[str, Any]) -> Path:
    doc = read_doc(kubeconfig)
    doc["users"][0]["user"] = user
    return write_doc(dest, doc)


async def test_tls_and_token_from_written_kubeconfig(tmp_path: Path) -> None:
    async with APIServer(token="s3cret", tls=True) as srv:
        assert srv.url.startswith("https://")
        cfg = load_kubeconfig(srv.kubeconfig)
        assert cfg.ca_data
        async with Client(cfg, qps=None) as c:
            created = await c.create(cm("tls"))
            assert created["metadata"]["namespace"] == "default"
            # by name: the namespace also holds the cluster's own ConfigMaps (kube-root-ca.crt)
            async with c.watch("v1/ConfigMap", field_selector="metadata.name=tls", resource_version="0") as w:
                async for ev in w:
                    assert ev.object["metadata"]["name"] == "tls"
                    break
        bad = load_kubeconfig(rewrite_user(srv.kubeconfig, tmp_path / "bad", {"token": "wrong"}))
        async with Client(bad, qps=None, retry=NO_RETRY) as c:
            with pytest.raises(Unauthorized):
                await c.list("v1/ConfigMap")
        # without the CA the server certificate is not trusted
        doc = read_doc(srv.kubeconfig)
        del doc["clusters"][0]["cluster"]["certificate-authority-data"]
        write_doc(tmp_path / "noca", doc)
        async with Client(load_kubeconfig(tmp_path / "noca"), qps=None, retry=NO_RETRY) as c:
            with pytest.raises(ClientConnectionError, match=r"TLS|certificate|SSL"):
                await c.list("v1/ConfigMap")
        doc["clusters"][0]["cluster"]["insecure-skip-tls-verify"] = True
        write_doc(tmp_path / "insecure", doc)
        async with Client(load_kubeconfig(tmp_path / "insecure"), qps=None) as c:
            assert "tls" in {o["metadata"]["name"] for o in await c.list("v1/ConfigMap")}


async def test_token_file_reread_after_401(tmp_path: Path) -> None:
    async with APIServer(token="good-token") as srv:
        tok = tmp_path / "token"
        tok.write_text("stale-token")
        cfg = load_kubeconfig(rewrite_user(srv.kubeconfig, tmp_path / "kc", {"tokenFile": str(tok)}))
        async with Client(cfg, qps=None, retry=NO_RETRY) as c:
            with pytest.raises(Unauthorized):
                await c.list("v1/ConfigMap")
            tok.write_text("good-token")  # the kubelet rotated the token
            await c.list("v1/ConfigMap")  # the 401 invalidated the cached token: re-read now


EXEC_PLUGIN = r'''
import json, sys
with open(sys.argv[1], "a") as fh:
    fh.write("run\n")
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {"token": sys.argv[2], "expirationTimestamp": "2999-01-01T00:00:00Z"}}))
'''


async def test_exec_plugin_against_server(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin.py"
    plugin.write_text(EXEC_PLUGIN)
    runs = tmp_path / "runs"
    async with APIServer(token="exec-token", tls=True) as srv:
        user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                         "args": [str(plugin), str(runs), "exec-token"], "interactiveMode": "Never"}}
        cfg = load_kubeconfig(rewrite_user(srv.kubeconfig, tmp_path / "kc", user))
        async with Client(cfg, qps=None) as c:
            for _ in range(3):
                await c.list("v1/ConfigMap")
        assert runs.read_text().count("run") == 1  # cached until expiry


async def test_proxy_url_is_used(tmp_path: Path) -> None:
    """A kubeconfig proxy-url: requests go to the proxy with the absolute target URL (the cluster's
    host is never resolved by the client). The 'proxy' here answers by itself."""
    import asyncio

    import orjson

    seen: list[bytes] = []
    bodies = {
        b"/api/v1": {"kind": "APIResourceList", "groupVersion": "v1",
                     "resources": [{"name": "configmaps", "namespaced": True, "kind": "ConfigMap"}]},
        b"/api/v1/namespaces/default/configmaps/x": {"kind": "ConfigMap", "apiVersion": "v1",
                                                      "metadata": {"name": "x"}},
    }

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            request_line = head.split(b"\r\n", 1)[0]
            seen.append(request_line)
            target = request_line.split(b" ")[1]
            path = target.split(b"://", 1)[-1].split(b"/", 1)[-1].split(b"?")[0]
            body = orjson.dumps(bodies.get(b"/" + path, {}))
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                         + str(len(body)).encode() + b"\r\n\r\n" + body)
            await writer.drain()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "p",
           "clusters": [{"name": "c", "cluster": {"server": "http://kube.invalid:6443",
                                                  "proxy-url": f"http://127.0.0.1:{port}"}}],
           "users": [{"name": "u", "user": {"token": "t"}}],
           "contexts": [{"name": "p", "context": {"cluster": "c", "user": "u"}}]}
    try:
        async with Client(load_kubeconfig(write_doc(tmp_path / "kc", doc)), qps=None, retry=NO_RETRY) as c:
            got = await c.get("v1/ConfigMap", "x")
        assert got["metadata"]["name"] == "x"
        assert seen[-1] == b"GET http://kube.invalid:6443/api/v1/namespaces/default/configmaps/x HTTP/1.1"
    finally:
        server.close()


async def test_in_cluster_config_against_server(tmp_path: Path) -> None:
    from kubeloop.config import load_in_cluster
    async with APIServer(token="sa-token", tls=True) as srv:
        assert srv.ca_pem is not None
        sa = tmp_path / "sa"
        sa.mkdir()
        (sa / "token").write_text("old-rotated-out-token")
        (sa / "ca.crt").write_bytes(srv.ca_pem)
        (sa / "namespace").write_text("kube-system")
        env = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(srv.port)}
        cfg = load_in_cluster(service_account_dir=sa, env=env, token_reread_after=3600)
        async with Client(cfg, qps=None, retry=NO_RETRY) as c:
            assert c.default_namespace == "kube-system"
            with pytest.raises(Unauthorized):
                await c.list("v1/ConfigMap")
            (sa / "token").write_text("sa-token")  # the kubelet wrote the new token
            assert (await c.list("v1/ConfigMap")).kind == "ConfigMapList"
