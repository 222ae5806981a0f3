"""Whether the client asks for gzip: not from a server on this host or from inside its cluster
(the server's compressing costs more than the bytes save there), yes elsewhere, as configured."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from aiohttp import web

from kubeloop.client import Client
from kubeloop.client._transport import nearby
from kubeloop.config import ClusterConfig

from ..local_http import serve_get


@pytest.mark.parametrize("server, source, near", [
    ("https://127.0.0.1:6443", "", True),
    ("https://[::1]:6443", "", True),
    ("http://localhost:8080", "", True),
    ("https://10.96.0.1:443", "in-cluster", True),
    ("https://api.example.com:6443", "", False),
    ("https://10.0.0.5:6443", "/home/me/.kube/config", False),
])
def test_nearby_servers(server: str, source: str, near: bool) -> None:
    assert nearby(ClusterConfig(server=server, source=source)) is near


@asynccontextmanager
async def echo_encoding() -> AsyncIterator[tuple[str, list[str]]]:
    seen: list[str] = []

    async def handler(req: web.Request) -> web.Response:
        seen.append(req.headers.get("Accept-Encoding", ""))
        return web.json_response({"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"},
                                  "items": []})

    async with serve_get(handler) as url:
        yield url, seen


@pytest.mark.parametrize("compression, sent", [(None, "identity"), (False, "identity"), (True, "gzip")])
async def test_what_the_client_asks_for(compression: bool | None, sent: str) -> None:
    async with echo_encoding() as (url, seen), Client(ClusterConfig(server=url), qps=None,
                                                      compression=compression) as c:
        await c.request_json("GET", "/api/v1/namespaces/default/configmaps")
    assert sent in seen[0]
