"""The bare side: a hand-written loop on aiohttp + orjson, the practical limit of a Python client
(`benchmarks.peers`' bare operator: LIST in 500-object pages into a dict plus a label index; a
WATCH decoding each event with orjson into the same dict and index). Its own process (see
`benchmarks.versus.child`)."""

from __future__ import annotations

import time

T_START = time.time()

import asyncio  # noqa: E402
import base64  # noqa: E402
import gc  # noqa: E402
import random  # noqa: E402
import ssl  # noqa: E402
import tracemalloc  # noqa: E402
from typing import Any  # noqa: E402

import aiohttp  # noqa: E402
import orjson  # noqa: E402
import yaml  # noqa: E402

from benchmarks.peers.operators.bare_operator import list_all  # noqa: E402
from benchmarks.versus.child import (  # noqa: E402
    LABEL,
    answer_marks,
    args,
    emit,
    hwm,
    reads,
    rss,
    run,
    until_closed,
)

T_IMPORTED = time.time()

Key = tuple[str, str]


def connection(kubeconfig: str) -> tuple[str, dict[str, str], ssl.SSLContext | None]:
    """Server, headers and TLS context of the kubeconfig's first cluster and user (a bearer token,
    as the emulator and the real-cluster kit write them): what a hand-written loop would read."""
    with open(kubeconfig) as f:
        cfg = yaml.safe_load(f)
    cluster = cfg["clusters"][0]["cluster"]
    user = (cfg.get("users") or [{}])[0].get("user") or {}
    headers = {"Authorization": f"Bearer {user['token']}"} if user.get("token") else {}
    ctx = None
    if cluster.get("certificate-authority-data"):
        ctx = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    return str(cluster["server"]).rstrip("/"), headers, ctx


async def main() -> None:
    mode, kind, namespace, kubeconfig = args()
    emit("imported", t_start=T_START, t_imported=T_IMPORTED)
    server, headers, ctx = connection(kubeconfig)
    url = f"{server}/api/v1/namespaces/{namespace}/{kind}"
    connector = aiohttp.TCPConnector(ssl=ctx) if ctx is not None else None
    async with aiohttp.ClientSession(headers=headers, connector=connector) as http:
        base = 0
        traced = mode == "traced"
        if mode != "warmup":
            async with http.get(url, params={"limit": "1", "labelSelector": "versus/none=1"}) as resp:
                orjson.loads(await resp.read())
            gc.collect()
            if traced:
                tracemalloc.start()
            base = rss()
        t0 = time.time()
        objects, rv = await list_all(http, url)
        index: dict[str, set[Key]] = objects.pop(("", "__index__"))
        t_synced = time.time()
        fields: dict[str, Any] = {"objects": sum(len(v) for v in index.values()), "rss": rss() - base,
                                  "hwm": hwm() - base, "t0": t0}
        if traced:
            fields["traced"], fields["traced_peak"] = tracemalloc.get_traced_memory()
        emit("synced", **fields, t_synced=t_synced)
        gc.collect()
        fields = {"rss": rss() - base, "hwm": hwm() - base}  # nothing to compact: the same state
        if traced:
            fields["traced"], fields["traced_peak"] = tracemalloc.get_traced_memory()
        emit("compacted", **fields)
        if mode == "scale":  # a read is a dict lookup here (the object held decoded)
            keys = list(objects)
            rng = random.Random(1)
            emit("gets", **reads([(rng.choice(keys),) for _ in range(20000)], objects.get))
        if mode == "churn":
            await churn(http, url, rv, objects, index)
        else:
            await until_closed()


async def churn(http: aiohttp.ClientSession, url: str, rv: str, objects: dict[Key, Any],
                index: dict[str, set[Key]]) -> None:
    seen = [0]

    async def watch() -> None:
        params = {"watch": "true", "resourceVersion": rv, "allowWatchBookmarks": "true"}
        async with http.get(url, params=params, timeout=aiohttp.ClientTimeout(total=None)) as resp:
            async for line in resp.content:
                ev = orjson.loads(line)
                if ev["type"] == "BOOKMARK":
                    continue
                obj = ev["object"]
                meta = obj["metadata"]
                key = (meta.get("namespace", ""), meta["name"])
                old = objects.get(key)
                if old is not None:
                    was = (old["metadata"].get("labels") or {}).get(LABEL)
                    if was is not None:
                        index[was].discard(key)
                if ev["type"] == "DELETED":
                    objects.pop(key, None)
                else:
                    objects[key] = obj
                    group = (meta.get("labels") or {}).get(LABEL)
                    if group is not None:
                        index.setdefault(group, set()).add(key)
                seen[0] += 1

    task = asyncio.create_task(watch())
    await asyncio.sleep(0.3)  # the watch is open (the emulator answers at once)
    emit("ready")
    await answer_marks(seen)
    task.cancel()
    return


if __name__ == "__main__":
    run(main)
