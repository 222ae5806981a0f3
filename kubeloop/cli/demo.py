"""`kubeloop demo`: the README's main job, runnable on a machine with no cluster.

It starts the embedded API server emulator (TLS and a token, as a real cluster would have),
connects to it through the kubeconfig it wrote, and shows the API at work: discovery, writes,
a watch seeing them, an optimistic-concurrency conflict and server-side apply.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import click

from kubeloop.client import Client
from kubeloop.client.errors import Conflict
from kubeloop.testing import APIServer


def _say(text: str) -> None:
    click.echo(text)
    sys.stdout.flush()


async def _watch(client: Client, namespace: str, rv: str, seen: list[str], ready: asyncio.Event) -> None:
    async with client.watch("v1/ConfigMap", namespace=namespace, resource_version=rv) as stream:
        ready.set()
        async for event in stream:
            if event.type == "BOOKMARK":
                continue
            meta = event.object.get("metadata", {})
            line = f"  watch: {event.type:<8} {meta.get('name')} (resourceVersion {meta.get('resourceVersion')})"
            _say(line)
            seen.append(event.type)
            if event.type == "DELETED":
                return


async def run_demo() -> int:
    """Run the emulator walkthrough; 0 when every step behaved as a real API server would."""
    async with APIServer(token="demo-token", tls=True) as server:
        _say(f"emulator: {server.url} (TLS, bearer token); kubeconfig written to {server.kubeconfig}")
        async with await Client.from_kubeconfig(server.kubeconfig) as client:
            version = await client.request_json("GET", "/version")
            _say(f"discovery: Kubernetes {version.get('gitVersion')}")
            await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}})
            _say("created namespace demo")
            listed = await client.list("v1/ConfigMap", namespace="demo")
            seen: list[str] = []
            ready = asyncio.Event()
            watcher = asyncio.create_task(_watch(client, "demo", listed.resource_version, seen, ready))
            await ready.wait()
            cm: dict[str, Any] = await client.create({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "settings", "namespace": "demo", "labels": {"app": "demo"}},
                "data": {"greeting": "hello"},
            })
            _say(f"created configmap settings at resourceVersion {cm['metadata']['resourceVersion']}")
            stale = dict(cm, data={"greeting": "stale write"})
            cm["data"] = {"greeting": "hello again"}
            cm = await client.replace(cm)
            _say(f"updated it; resourceVersion is now {cm['metadata']['resourceVersion']}")
            try:
                await client.replace(stale)
                _say("ERROR: a stale write was accepted")
                return 1
            except Conflict as err:
                _say(f"a write with a stale resourceVersion was refused: 409 {err.reason}")
            applied = await client.apply(
                {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "settings", "namespace": "demo"}, "data": {"colour": "blue"}},
                field_manager="demo-applier")
            managers = sorted(m["manager"] for m in applied["metadata"].get("managedFields", []))
            _say(f"server-side apply added data.colour; field managers now: {', '.join(managers)}")
            again = await client.apply(
                {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "settings", "namespace": "demo"}, "data": {"colour": "blue"}},
                field_manager="demo-applier")
            same = again["metadata"]["resourceVersion"] == applied["metadata"]["resourceVersion"]
            _say(f"re-applying the same configuration changed nothing: {same}")
            await client.delete("v1/ConfigMap", "settings", namespace="demo")
            _say("deleted configmap settings")
            await asyncio.wait_for(watcher, timeout=10)
            expected = ["ADDED", "MODIFIED", "MODIFIED", "DELETED"]
            ok = seen == expected and same
            _say(f"the watch saw {' -> '.join(seen)}" + ("" if ok else f" (expected {' -> '.join(expected)})"))
            _say("demo finished: OK" if ok else "demo finished: FAILED")
            return 0 if ok else 1


@click.command()
def demo() -> None:
    """Run the demo against an embedded API server emulator."""
    sys.exit(asyncio.run(run_demo()))
