"""The bare-client side: what a hand-written loop on aiohttp + orjson does, the practical limit.

    python -m benchmarks.peers.operators.bare_operator

Modes:
  warmup  paginated LIST (500 a page) decoded with orjson into a dict by (namespace, name) and an
          index dict label value -> set of keys; reports when the last page is stored.
  idle    the same against an empty namespace (memory baseline).
  churn   LIST, then one WATCH from its resourceVersion; every event decoded with orjson, the
          lag computed from the writer's timestamp (no queue, no dedup, no reconnects).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from typing import Any

import aiohttp
import orjson
import yaml

from benchmarks.peers.operators import report as _report
from benchmarks.peers.operators.report import LABEL, STAMP, Settings, mark_start, report


def server_of(kubeconfig: str) -> str:
    with open(kubeconfig) as f:
        cfg = yaml.safe_load(f)
    return str(cfg["clusters"][0]["cluster"]["server"]).rstrip("/")


async def list_all(http: aiohttp.ClientSession, url: str) -> tuple[dict[tuple[str, str], Any], str]:
    objects: dict[tuple[str, str], Any] = {}
    index: dict[str, set[tuple[str, str]]] = {}
    token = ""
    while True:
        params = {"limit": "500"}
        if token:
            params["continue"] = token
        async with http.get(url, params=params) as resp:
            resp.raise_for_status()
            body = orjson.loads(await resp.read())
        for item in body["items"]:
            meta = item["metadata"]
            key = (meta.get("namespace", ""), meta["name"])
            objects[key] = item
            group = (meta.get("labels") or {}).get(LABEL)
            if group is not None:
                index.setdefault(group, set()).add(key)
        token = body["metadata"].get("continue") or ""
        if not token:
            rv = body["metadata"]["resourceVersion"]
            break
    objects[("", "__index__")] = index
    return objects, rv


async def main() -> None:
    mark_start()
    s = Settings.from_env()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    url = f"{server_of(s.kubeconfig)}/api/v1/namespaces/{s.namespace}/{s.kind}"
    async with aiohttp.ClientSession() as http:
        objects, rv = await list_all(http, url)
        index = objects[("", "__index__")]
        held = sum(len(keys) for keys in index.values())
        report(s.report, "ready", held=held)
        if s.mode != "churn":
            await stop.wait()
            return
        lags: list[float] = []
        calls = 0

        async def watch() -> None:
            nonlocal calls
            params = {"watch": "true", "resourceVersion": rv, "allowWatchBookmarks": "true"}
            async with http.get(url, params=params, timeout=aiohttp.ClientTimeout(total=None)) as resp:
                async for line in resp.content:
                    ev = orjson.loads(line)
                    obj = ev["object"]
                    meta = obj["metadata"]
                    if ev["type"] == "BOOKMARK":
                        continue
                    objects[(meta.get("namespace", ""), meta["name"])] = obj
                    stamp = (meta.get("annotations") or {}).get(STAMP)
                    if stamp is not None and float(stamp) >= _report.T0:  # not left by an earlier run
                        calls += 1
                        lags.append(time.time() - float(stamp))

        task = asyncio.create_task(watch())
        await stop.wait()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        report(s.report, "final", calls=calls, lags=lags)


if __name__ == "__main__":
    asyncio.run(main())
