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


async def test_one_controller_two_clusters(client: Client, namespace: str) -> None:
    """"east" is the test's cluster (the emulator, or the real cluster of KUBELOOP_TEST_KUBECONFIG),
    "west" a second emulator; the test uses only its own namespace, created in both."""
    east = client
    async with APIServer() as west_server, Client(load_kubeconfig(west_server.kubeconfig), qps=None) as west:
        await west.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        seen: list[Request] = []

        async def reconcile(req: Request, ctx: Context) -> Result | None:
            seen.append(req)
            src = ctx.get()
            if src is None or req.name not in ("a", "trigger"):  # not the cluster's own ConfigMaps
                return None
            await ctx.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"{req.name}-copy"},
                             "stringData": {"from": req.cluster}}, owner=src)
            return None

        def poked(ns: Any) -> list[Request]:
            meta = ns.get("metadata") or {}
            return [Request("west", namespace, "trigger")] \
                if meta.get("name") == namespace and (meta.get("labels") or {}).get("poke") else []

        ctl = Controller("mc-test", for_="v1/ConfigMap", namespace=namespace, reconcile=reconcile)
        # a label on our Namespace in "east" reconciles the ConfigMap "trigger" in "west"
        ctl.watches("v1/Namespace", poked, cluster="east")
        async with SharedCache({"east": east, "west": west}, grace_period=0.1) as cache, running(ctl, cache):
            await east.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}, namespace=namespace)
            await west.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "trigger"}},
                              namespace=namespace)

            async def copied(client: Client, name: str) -> dict[str, Any] | None:
                try:
                    return await client.get("v1/Secret", f"{name}-copy", namespace=namespace)
                except NotFound:
                    return None
            async def exists(client: Client, name: str) -> bool:
                return await copied(client, name) is not None

            await eventually(lambda: exists(east, "a"))
            await eventually(lambda: exists(west, "trigger"))
            assert await copied(west, "a") is None and await copied(east, "trigger") is None
            runs = seen.count(Request("west", namespace, "trigger"))
            await east.patch("v1/Namespace", namespace, {"metadata": {"labels": {"poke": "yes"}}})
            await eventually(lambda: seen.count(Request("west", namespace, "trigger")) > runs)
        assert Request("east", namespace, "a") in seen
