"""Helpers for the emulator's integration tests: a small HTTP client bound to one server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest_asyncio

from kubeloop.testing import APIServer


class Http:
    """Minimal JSON-over-HTTP helper (tests talk real HTTP to the emulator)."""

    def __init__(self, session: aiohttp.ClientSession, url: str, token: str | None = None) -> None:
        self.s, self.url = session, url
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    async def req(self, method: str, path: str, body: Any = None, *, ctype: str = "application/json",
                  headers: dict[str, str] | None = None, **params: str) -> tuple[int, Any]:
        data = None
        h = dict(self.headers, **(headers or {}))
        if body is not None:
            data = body if isinstance(body, bytes) else orjson.dumps(body)
            h["Content-Type"] = ctype
        async with self.s.request(method, self.url + path, data=data, headers=h, params=params or None) as r:
            raw = await r.read()
            try:
                return r.status, orjson.loads(raw) if raw else None
            except orjson.JSONDecodeError:
                return r.status, raw.decode()

    async def get(self, path: str, **params: str) -> tuple[int, Any]:
        return await self.req("GET", path, **params)

    async def post(self, path: str, body: Any, **params: str) -> tuple[int, Any]:
        return await self.req("POST", path, body, **params)

    async def watch(self, path: str, n: int, **params: str) -> list[dict[str, Any]]:
        """The first `n` events of a watch (or fewer if the server ends the stream)."""
        events: list[dict[str, Any]] = []
        params = {"watch": "true", **params}
        async with self.s.get(self.url + path, params=params, headers=self.headers) as r:
            assert r.status == 200, await r.text()
            async for line in r.content:
                if line.strip():
                    events.append(orjson.loads(line))
                if len(events) >= n:
                    break
        return events


def cm(name: str, labels: dict[str, str] | None = None, **data: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data or {"k": "v"}}


@pytest_asyncio.fixture
async def server() -> AsyncIterator[APIServer]:
    """The API server alone (these tests check kube-apiserver's behaviour, as envtest serves it)."""
    async with APIServer(bare=True, namespace_delete_delay=0.05, crd_cleanup_delay=0.05, future_rv_wait=0.3,
                         bookmark_interval=0.2) as api:
        yield api


@pytest_asyncio.fixture
async def http(server: APIServer) -> AsyncIterator[Http]:
    async with aiohttp.ClientSession() as s:
        yield Http(s, server.url)


@pytest_asyncio.fixture
async def cluster_http() -> AsyncIterator[Http]:
    """HTTP to an emulator in cluster mode (kube-controller-manager's controllers run too)."""
    async with APIServer(namespace_delete_delay=0.05, crd_cleanup_delay=0.05, future_rv_wait=0.3,
                         bookmark_interval=0.2) as api, aiohttp.ClientSession() as s:
        yield Http(s, api.url)


@pytest_asyncio.fixture
async def watchlist_http() -> AsyncIterator[Http]:
    """HTTP to a bare emulator with the WatchList feature gate on (streaming lists, after 1.24)."""
    async with APIServer(bare=True, future_rv_wait=0.3, bookmark_interval=0.2,
                         feature_gates={"WatchList": True}) as api, aiohttp.ClientSession() as s:
        yield Http(s, api.url)
