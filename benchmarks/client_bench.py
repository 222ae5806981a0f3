"""Client decode speed: watch events/s and LIST objects/s (and MB/s) through `kubeloop.client.Client`,
beside a bare aiohttp + orjson loop that reads the same endpoints and does nothing but split and decode.

Runs `kubeloop apiserver` as a subprocess, fills it with N ConfigMaps (~1 KiB each), then alternates
client and bare runs (best of --repeat). Writes benchmarks/results/client.json and prints a table.

    .venv/bin/python benchmarks/client_bench.py [--objects 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from kubeloop.client import ALL_NAMESPACES, ApiResource, Client
from kubeloop.config import ClusterConfig

NS = "default"
PATH = f"/api/v1/namespaces/{NS}/configmaps"
PAYLOAD = "x" * 900
SELECTOR = "bench=client"
"""Every read selects the benchmark's own objects: a namespace also holds others (kube-root-ca.crt)."""
CONFIGMAPS = ApiResource("", "v1", "ConfigMap", "configmaps", namespaced=True)


def cm(name: str) -> bytes:
    return orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": name, "labels": {"bench": "client"}}, "data": {"payload": PAYLOAD}})


async def fill(url: str, n: int) -> None:
    async with aiohttp.ClientSession() as s:
        it = iter(range(n))

        async def worker() -> None:
            for i in it:
                async with s.post(url + PATH, data=cm(f"cm-{i:06d}"),
                                  headers={"Content-Type": "application/json"}) as r:
                    assert r.status == 201, await r.text()
        await asyncio.gather(*(worker() for _ in range(16)))


# -- bare loops: the practical limit in Python ---------------------------------------------------

async def bare_watch(s: aiohttp.ClientSession, url: str, n: int) -> tuple[float, int]:
    got = nbytes = 0
    buf = b""
    t0 = time.perf_counter()
    async with s.get(url + PATH, params={"watch": "1", "resourceVersion": "0", "labelSelector": SELECTOR}) as r:
        async for chunk in r.content.iter_any():
            nbytes += len(chunk)
            if buf:
                chunk = buf + chunk
            lines = chunk.split(b"\n")
            buf = lines.pop()
            for line in lines:
                if line:
                    orjson.loads(line)
                    got += 1
            if got >= n:
                break
    return time.perf_counter() - t0, nbytes


async def bare_list(s: aiohttp.ClientSession, url: str, limit: int) -> tuple[float, int, int]:
    nbytes = 0
    kept: list[Any] = []  # a LIST returns every object: keep them, as the client does
    params = {"limit": str(limit), "labelSelector": SELECTOR}
    t0 = time.perf_counter()
    while True:
        async with s.get(url + PATH, params=params) as r:
            data = await r.read()
        nbytes += len(data)
        body = orjson.loads(data)
        kept.extend(body["items"])
        token = body["metadata"].get("continue")
        if not token:
            break
        params = {"limit": str(limit), "labelSelector": SELECTOR, "continue": token}
    return time.perf_counter() - t0, len(kept), nbytes


# -- the same through kubeloop.client ------------------------------------------------------------

async def client_watch(c: Client, n: int) -> float:
    got = 0
    t0 = time.perf_counter()
    async with c.watch(CONFIGMAPS, namespace=NS, label_selector=SELECTOR, resource_version="0",
                       allow_bookmarks=False) as w:
        async for _ev in w:
            got += 1
            if got >= n:
                break
    return time.perf_counter() - t0


async def client_watch_batches(c: Client, n: int) -> float:
    got = 0
    t0 = time.perf_counter()
    async with c.watch(CONFIGMAPS, namespace=NS, label_selector=SELECTOR, resource_version="0",
                       allow_bookmarks=False) as w:
        while got < n:
            batch = await w.batches()
            if not batch:
                break
            got += len(batch)
    return time.perf_counter() - t0


async def client_list(c: Client, limit: int) -> tuple[float, int]:
    t0 = time.perf_counter()
    result = await c.list(CONFIGMAPS, namespace=NS, label_selector=SELECTOR, limit=limit)
    return time.perf_counter() - t0, len(result.items)


async def bench(url: str, n: int, repeat: int, limit: int) -> dict[str, Any]:
    best: dict[str, float] = {}
    cpu: dict[str, float] = {}

    async def timed(key: str, coro: Any) -> Any:
        """Run one measurement; keep the best wall time and the best CPU time of this process."""
        gc.collect()
        c0 = time.process_time()
        out = await coro
        c = time.process_time() - c0
        cpu[key] = min(cpu.get(key, float("inf")), c)
        wall = out[0] if isinstance(out, tuple) else out
        best[key] = min(best.get(key, float("inf")), wall)
        return out

    watch_bytes = list_bytes = 0
    # the same read buffer as the client's sessions, so both see the same chunk sizes
    async with aiohttp.ClientSession(read_bufsize=2**18) as s, Client(ClusterConfig(server=url), qps=None) as c:
        await client_list(c, limit)  # warm up connections
        for _ in range(repeat):
            _, watch_bytes = await timed("bare_watch", bare_watch(s, url, n))
            await timed("client_watch", client_watch(c, n))
            await timed("client_watch_batches", client_watch_batches(c, n))
            _, count, list_bytes = await timed("bare_list", bare_list(s, url, limit))
            assert count == n
            _, count = await timed("client_list", client_list(c, limit))
            assert count == n
        # all namespaces too (a different URL; same decode path)
        all_ns = (await c.list(CONFIGMAPS, namespace=ALL_NAMESPACES, limit=limit)).items
        assert len(all_ns) >= n
    mb = 1024 * 1024
    res: dict[str, Any] = {
        "objects": n, "list_page_size": limit, "watch_bytes": watch_bytes, "list_bytes": list_bytes,
        "bare_watch_events_per_s": round(n / best["bare_watch"]),
        "client_watch_events_per_s": round(n / best["client_watch"]),
        "client_watch_batches_events_per_s": round(n / best["client_watch_batches"]),
        "bare_list_objects_per_s": round(n / best["bare_list"]),
        "client_list_objects_per_s": round(n / best["client_list"]),
        "bare_list_mb_per_s": round(list_bytes / mb / best["bare_list"], 1),
        "client_list_mb_per_s": round(list_bytes / mb / best["client_list"], 1),
        "watch_client_vs_bare": round(best["client_watch"] / best["bare_watch"], 2),
        "list_client_vs_bare": round(best["client_list"] / best["bare_list"], 2),
        "watch_batches_client_vs_bare": round(best["client_watch_batches"] / best["bare_watch"], 2),
        # CPU seconds of this (client) process: insensitive to the server and to other load
        "cpu_us_per_event": {k: round(v / n * 1e6, 2) for k, v in cpu.items()},
        "watch_client_vs_bare_cpu": round(cpu["client_watch"] / cpu["bare_watch"], 2),
        "list_client_vs_bare_cpu": round(cpu["client_list"] / cpu["bare_list"], 2),
        "watch_batches_client_vs_bare_cpu": round(cpu["client_watch_batches"] / cpu["bare_watch"], 2),
    }
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--objects", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--limit", type=int, default=500, help="LIST page size")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "client.json"))
    args = ap.parse_args()
    proc = subprocess.Popen([sys.executable, "-c", "from kubeloop.cli.main import main; main()", "apiserver",
                             "--history-size", str(args.objects * 3)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip().split()[-1]

        async def run() -> dict[str, Any]:
            await fill(url, args.objects)
            return await bench(url, args.objects, args.repeat, args.limit)
        res = asyncio.run(run())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    out = {
        "benchmark": "client",
        "command": "python benchmarks/client_bench.py " + " ".join(sys.argv[1:]),
        "machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count()},
        "results": res,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"{'':28}{'bare aiohttp+orjson':>22}{'kubeloop.client':>18}{'ratio wall':>12}{'ratio cpu':>11}")
    print(f"{'watch events/s':28}{res['bare_watch_events_per_s']:>22,}{res['client_watch_events_per_s']:>18,}"
          f"{res['watch_client_vs_bare']:>12}{res['watch_client_vs_bare_cpu']:>11}")
    print(f"{'watch events/s (batches)':28}{res['bare_watch_events_per_s']:>22,}"
          f"{res['client_watch_batches_events_per_s']:>18,}{res['watch_batches_client_vs_bare']:>12}"
          f"{res['watch_batches_client_vs_bare_cpu']:>11}")
    print(f"{'LIST objects/s':28}{res['bare_list_objects_per_s']:>22,}{res['client_list_objects_per_s']:>18,}"
          f"{res['list_client_vs_bare']:>12}{res['list_client_vs_bare_cpu']:>11}")
    print(f"{'LIST MB/s':28}{res['bare_list_mb_per_s']:>22}{res['client_list_mb_per_s']:>18}")
    print(f"({args.objects} ConfigMaps of ~1 KiB; best of {args.repeat}; results in {args.out})")


if __name__ == "__main__":
    main()
