"""The objects every framework reads: ConfigMaps of ~1 KiB and Pods of ~4 KiB, labelled with one
of `GROUPS` values (the index key), created concurrently through kubeloop's client."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from benchmarks.peers.operators.report import LABEL
from kubeloop.client import AlreadyExists, Client

GROUPS = 10


def noise(*parts: object, size: int) -> str:
    """Deterministic hex text of `size` characters: values that do not compress unrealistically
    well (every object differs, as real ones do)."""
    out, n = "", 0
    while len(out) < size:
        out += hashlib.sha256(f"{parts}-{n}".encode()).hexdigest()
        n += 1
    return out[:size]


def configmap(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"cm-{i:06d}", "labels": {LABEL: f"g{i % GROUPS}", "app": "peers"}},
            "data": {"payload": noise("cm", i, size=880)}}


def pod(i: int) -> dict[str, Any]:
    env = [{"name": f"SETTING_{k:02d}", "value": noise("pod", i, k, size=48)} for k in range(40)]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{i:06d}", "labels": {LABEL: f"g{i % GROUPS}", "app": "peers"}},
            "spec": {"containers": [{"name": "app", "image": "registry.example/peers/app:1.0", "env": env,
                                     "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}


async def namespace(client: Client, name: str) -> None:
    try:
        await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    except AlreadyExists:
        pass


async def create_many(client: Client, ns: str, objects: list[dict[str, Any]], concurrency: int = 16) -> None:
    """Create `objects` in `ns`, `concurrency` requests in flight."""
    await namespace(client, ns)
    it = iter(objects)

    async def worker() -> None:
        for obj in it:
            try:
                await client.create(obj, namespace=ns)
            except AlreadyExists:
                pass

    async with asyncio.TaskGroup() as tg:
        for _ in range(concurrency):
            tg.create_task(worker())
