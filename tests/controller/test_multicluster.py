"""Integration: one controller over two clusters (two emulators): requests carry their cluster,
ctx.client writes to that cluster, and a watches() source in one cluster can reconcile objects of
another."""

from __future__ import annotations

from typing import Any

from kubeloop.cache import SharedCache
from kubeloop.client import Client, NotFound
from kubeloop.config import load_kubeconfig
from kubeloop.controller import Context, Controller, Request, Result
from kubeloop.testing import APIServer

from .helpers import eventually, running


async def test_one_controller_two_clusters(emulator: APIServer) -> None:
    async with APIServer() as west_server, \
            Client(load_kubeconfig(emulator.kubeconfig), qps=None) as east, \
            Client(load_kubeconfig(west_server.kubeconfig), qps=None) as west:
        seen: list[Request] = []

        async def reconcile(req: Request, ctx: Context) -> Result | None:
            seen.append(req)
            src = ctx.get()
            if src is None:
                return None
            await ctx.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"{req.name}-copy"},
                             "stringData": {"from": req.cluster}}, owner=src)
            return None

        ctl = Controller("mc-test", for_="v1/ConfigMap", namespace="default", reconcile=reconcile)
        # a Namespace label in "east" reconciles the ConfigMap "trigger" in "west"
        ctl.watches("v1/Namespace", lambda ns: [Request("west", "default", "trigger")]
                    if (ns.get("metadata") or {}).get("labels", {}).get("poke") else [], cluster="east")
        async with SharedCache({"east": east, "west": west}, grace_period=0.1) as cache, running(ctl, cache):
            await east.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}, namespace="default")
            await west.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "trigger"}},
                              namespace="default")

            async def copied(client: Client, name: str) -> dict[str, Any] | None:
                try:
                    return await client.get("v1/Secret", f"{name}-copy", namespace="default")
                except NotFound:
                    return None
            await eventually(lambda: copied(east, "a"))
            await eventually(lambda: copied(west, "trigger"))
            assert await copied(west, "a") is None and await copied(east, "trigger") is None
            runs = seen.count(Request("west", "default", "trigger"))
            await east.patch("v1/Namespace", "default", {"metadata": {"labels": {"poke": "yes"}}})
            await eventually(lambda: seen.count(Request("west", "default", "trigger")) == runs + 1)
        assert Request("east", "default", "a") in seen
