"""Emulator speed: GET and create requests/s, LIST of N ConfigMaps, watch events/s to 1 and 10 watchers.

Runs `kubeloop apiserver` as a child process (`APIServerProcess`, as kubeloop's own benchmarks do) and drives it
with aiohttp from this process. Writes benchmarks/results/apiserver.json and prints a table.

    .venv/bin/python benchmarks/apiserver_bench.py [--objects 10000] [--requests 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson

NS = "/api/v1/namespaces/default/configmaps"
PAYLOAD = "x" * 900  # ~1 KiB objects


def cm(name: str, half: str) -> bytes:
    return orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": name, "labels": {"b": "1", "half": half}}, "data": {"payload": PAYLOAD}})


async def run_concurrently(n: int, concurrency: int, fn: Any) -> float:
    """Run fn(i) for i < n with `concurrency` workers; returns elapsed seconds."""
    it = iter(range(n))

    async def worker() -> None:
        for i in it:
            await fn(i)
    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - t0


async def watch_count(s: aiohttp.ClientSession, url: str, params: dict[str, str], n: int) -> float:
    """Seconds until `n` events arrived on one watch; the clock starts at the first byte."""
    got = 0
    t0 = 0.0
    async with s.get(url + NS, params={"watch": "true", **params}) as r:
        async for line in r.content:
            if not t0:
                t0 = time.perf_counter()
            if line.strip():
                got += 1
                if got >= n:
                    break
    return time.perf_counter() - t0


async def bench(url: str, objects: int, requests: int, concurrency: int) -> dict[str, Any]:
    res: dict[str, Any] = {}
    conn = aiohttp.TCPConnector(limit=concurrency * 2)
    async with aiohttp.ClientSession(connector=conn) as s:
        async with s.get(url + NS) as r:
            start_rv = (await r.json())["metadata"]["resourceVersion"]

        async def create(i: int) -> None:
            async with s.post(url + NS, data=cm(f"obj-{i:06d}", "ab"[i % 2]), headers={"Content-Type": "application/json"}) as r:
                assert r.status == 201, await r.text()
                await r.read()
        t = await run_concurrently(objects, concurrency, create)
        res["create_per_s"] = round(objects / t)

        async def get(i: int) -> None:
            async with s.get(url + NS + f"/obj-{i % objects:06d}") as r:
                await r.read()
        t = await run_concurrently(requests, concurrency, get)
        res["get_per_s"] = round(requests / t)

        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            async with s.get(url + NS) as r:
                body = await r.read()
            times.append(time.perf_counter() - t0)
        res["list_objects"] = objects
        res["list_bytes"] = len(body)
        res["list_seconds"] = round(min(times), 4)
        t0 = time.perf_counter()
        orjson.loads(body)
        res["list_client_decode_seconds"] = round(time.perf_counter() - t0, 4)

        # watch delivery: replay of the history (every create) from the RV before them
        for watchers in (1, 10):
            t0 = time.perf_counter()
            durations = await asyncio.gather(*(watch_count(s, url, {"resourceVersion": start_rv}, objects)
                                               for _ in range(watchers)))
            wall = time.perf_counter() - t0
            res[f"watch_replay_events_per_s_{watchers}"] = round(objects * watchers / wall)
            res[f"watch_replay_per_watcher_events_per_s_{watchers}"] = round(objects / max(durations))

        # live: events delivered while writes happen
        live = min(objects, 2000)
        async with s.get(url + NS) as r:
            rv = (await r.json())["metadata"]["resourceVersion"]
        for watchers in (1, 10):
            tasks = [asyncio.create_task(watch_count(s, url, {"resourceVersion": rv}, live)) for _ in range(watchers)]
            await asyncio.sleep(0.2)

            async def update(i: int, round_: int = watchers) -> None:
                patch = orjson.dumps({"metadata": {"labels": {"b": str(round_ * 100000 + i)}}})
                async with s.patch(url + NS + f"/obj-{i % objects:06d}", data=patch,
                                   headers={"Content-Type": "application/merge-patch+json"}) as r:
                    await r.read()
            t0 = time.perf_counter()
            await run_concurrently(live, concurrency, update)
            await asyncio.gather(*tasks)
            wall = time.perf_counter() - t0
            res[f"watch_live_events_per_s_{watchers}"] = round(live * watchers / wall)
            async with s.get(url + NS) as r:
                rv = (await r.json())["metadata"]["resourceVersion"]

        # live fan-out not limited by the client's write rate: one deletecollection of half the
        # objects produces objects/2 DELETED events in one request
        for watchers, half in ((1, "a"), (10, "b")):
            n = objects // 2
            tasks = [asyncio.create_task(watch_count(s, url, {"resourceVersion": rv}, n)) for _ in range(watchers)]
            await asyncio.sleep(0.2)
            t0 = time.perf_counter()
            async with s.delete(url + NS, params={"labelSelector": f"half={half}"}) as r:
                await r.read()
            await asyncio.gather(*tasks)
            wall = time.perf_counter() - t0
            res[f"watch_burst_events_per_s_{watchers}"] = round(n * watchers / wall)
            async with s.get(url + NS) as r:
                rv = (await r.json())["metadata"]["resourceVersion"]
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=10000, help="ConfigMaps to create and LIST (default 10000)")
    ap.add_argument("--requests", type=int, default=2000, help="GET requests (default 2000)")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "apiserver.json"))
    args = ap.parse_args()
    from kubeloop.testing import APIServerProcess

    with APIServerProcess(extra_args=("--history-size", str(args.objects * 3))) as api:
        res = asyncio.run(bench(api.url, args.objects, args.requests, args.concurrency))
    out = {"benchmark": "apiserver", "command": "python benchmarks/apiserver_bench.py " + " ".join(sys.argv[1:]),
           "machine": {"python": platform.python_version(), "cpus": os.cpu_count()}, "results": res}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    width = max(len(k) for k in res)
    for k, v in res.items():
        print(f"{k:<{width}}  {v}")


if __name__ == "__main__":
    main()
