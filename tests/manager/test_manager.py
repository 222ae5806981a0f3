"""Manager integration tests on the emulator: shared watches, per-controller sync, probes, metrics."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp

from kubeloop import Context, Controller, Manager, Request, Result
from kubeloop.client import Client


def cm(name: str, ns: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": data}


def recording(name: str, seen: list[Request], resource: str = "v1/ConfigMap", **kw: Any) -> Controller:
    async def reconcile(req: Request, ctx: Context) -> Result | None:
        seen.append(req)
        return None

    return Controller(name, for_=resource, reconcile=reconcile, **kw)


async def eventually(cond: Any, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not cond():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def test_two_controllers_on_one_kind_share_one_watch(apiserver: Any, client: Client, ns: str) -> None:
    a: list[Request] = []
    b: list[Request] = []
    m = Manager(client)
    m.add(recording("first", a))
    m.add(recording("second", b))
    await client.create(cm("one", ns, x="1"))
    async with m:
        assert await m.wait_ready(5)
        await client.create(cm("two", ns, x="2"))
        await eventually(lambda: {r.name for r in a} >= {"one", "two"} and {r.name for r in b} >= {"one", "two"})
        if apiserver.is_emulator:
            assert apiserver.stats()["open_watches"].get("core/v1/configmaps") == 1
    if apiserver.is_emulator:
        await eventually(lambda: not apiserver.stats()["open_watches"].get("core/v1/configmaps"))
    assert m.state == "stopped"
