"""``python -m benchmarks.versus --scale 100000 [1000000]``: kubeloop's informer and the bare loop
on 10,000 and then on each N ConfigMaps (one process per run, the two sides interleaved, as in the
main table): time per object from start to synced (the fastest of ``--runs``: the figure least
disturbed by other load), memory per object (RSS growth over a warmed baseline, at sync and after
compaction), `get` latency and the pause of one full garbage collection with the objects held
(medians over the runs); and what holding N objects costs the emulator (its RSS, and the time to
load them through ``POST /_kubeloop/bulk-create``). A fresh emulator per N, so each one's memory is
its own. The bare loop is the baseline for how time per object grows with N on this machine (larger
dicts miss the CPU caches more often, whoever fills them). Writes JSON and an SVG of the per-object
figures against N.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from benchmarks.peers import procstats, seed
from benchmarks.peers.emulator import Emulator
from benchmarks.versus.chart import write_lines
from benchmarks.versus.run import ROOT
from kubeloop.client import Client
from kubeloop.config import load_kubeconfig

RESULTS = ROOT / "benchmarks" / "results"
BASE_N = 10_000
SIDES = ("kubeloop", "bare")


async def bulk_load(kubeconfig: str, url: str, namespace: str, n: int) -> dict[str, Any]:
    """N ConfigMaps (`benchmarks.peers.seed.configmap`) into `namespace`, streamed as JSON lines."""
    async with Client(load_kubeconfig(kubeconfig), qps=None, timeout=120) as client:
        await seed.namespace(client, namespace)

    async def lines() -> AsyncIterator[bytes]:
        chunk: list[bytes] = []
        for i in range(n):
            chunk.append(orjson.dumps(seed.configmap(i)))
            if len(chunk) == 1000:
                yield b"\n".join(chunk) + b"\n"
                chunk = []
        if chunk:
            yield b"\n".join(chunk) + b"\n"

    t = time.perf_counter()
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as http:
        async with http.post(f"{url}/_kubeloop/bulk-create", params={"resource": "configmaps", "namespace": namespace},
                             data=lines()) as resp:
            body = await resp.read()
            if resp.status != 200:
                raise RuntimeError(f"bulk-create failed ({resp.status}): {body[:300]!r}")
            out: dict[str, Any] = orjson.loads(body)
    out["wall_s"] = time.perf_counter() - t
    return out


def one_n(n: int, runs: int, workdir: Path) -> dict[str, Any]:
    from benchmarks.versus.cli import json_sizes, one_load

    with Emulator(workdir) as emu:
        idle = procstats.memory(emu.pid)
        ns = f"versus-scale-{n}"
        loaded = asyncio.run(bulk_load(emu.kubeconfig, emu.url, ns, n))
        emu_mem = procstats.memory(emu.pid)
        print(f"N={n}: emulator loaded {loaded['created']} in {loaded['seconds']:.1f}s "
              f"({loaded['wall_s']:.1f}s with generating), RSS {idle.rss_mb:.0f} -> {emu_mem.rss_mb:.0f} MB", flush=True)
        size = asyncio.run(json_sizes(emu.kubeconfig, {"configmaps": ns}))["configmaps"] if n <= BASE_N else None
        rows: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
        for _ in range(runs):
            for side in SIDES:  # interleaved, one process per run
                r = one_load(side, "scale", "configmaps", ns, emu.kubeconfig, workdir)
                rows[side].append(r)
                print(f"N={n} {side}: synced {r['from_launch_s']:.2f}s from launch, list {r['list_s']:.2f}s "
                      f"({r['list_s'] / n * 1e6:.1f} us/object), RSS compacted {r['rss_compacted'] / n:.0f} B/object, "
                      f"peak {r['hwm_at_sync'] / n:.0f} B/object, get p50/p99 {r['get_p50_us']:.1f}/{r['get_p99_us']:.1f} us, "
                      f"full GC pause {r['gc_pause_ms']:.1f} ms", flush=True)
        emu_after = procstats.memory(emu.pid)
    return {"n": n, "emulator": {"load_s": loaded["seconds"], "load_wall_s": loaded["wall_s"],
                                 "idle_rss_mb": idle.rss_mb, "rss_mb": emu_mem.rss_mb,
                                 "rss_after_serving_mb": emu_after.rss_mb, "peak_rss_mb": emu_after.peak_rss_mb,
                                 "bytes_per_object": (emu_mem.rss_mb - idle.rss_mb) * 2**20 / n},
            "json": size, **summary(rows["kubeloop"], n), "bare": summary(rows["bare"], n)}


def summary(rows: list[dict[str, Any]], n: int) -> dict[str, Any]:
    """One side's figures at one N: time from the fastest run (the least disturbed), the rest medians."""
    best = min(rows, key=lambda r: r["list_s"])
    return {"runs": rows,
            "us_per_object": best["list_s"] / n * 1e6,
            "us_per_object_from_launch": best["from_launch_s"] / n * 1e6,
            "rss_per_object": best["rss_compacted"] / n, "rss_at_sync_per_object": best["rss_at_sync"] / n,
            "peak_per_object": best["hwm_at_sync"] / n,
            **{k: statistics.median(r[k] for r in rows) for k in ("get_p50_us", "get_p99_us", "gc_pause_ms", "gc_tracked")}}


def main(a: argparse.Namespace) -> int:
    if a.kubeconfig:
        raise SystemExit("--scale loads objects through the emulator's bulk-create: it runs on the emulator only")
    out: Path = a.out or RESULTS / "versus-scale.json"
    sizes = sorted({BASE_N, *a.scale})
    started = time.time()
    results = []
    with tempfile.TemporaryDirectory(prefix="kl-versus-scale-") as tmp:
        for n in sizes:
            results.append(one_n(n, a.runs, Path(tmp)))
    limit = f" --load-cheap-limit {a.load_cheap_limit:g}" if a.load_cheap_limit is not None else ""
    report(results, f"python -m benchmarks.versus --scale {' '.join(map(str, a.scale))} --runs {a.runs}{limit}", out,
           (time.time() - started) / 60)
    return 0


def report(results: list[dict[str, Any]], command: str, out: Path, minutes: float) -> None:
    """Ratios against the first (10,000) row and against the bare loop; JSON, SVG and the table."""
    base = results[0]
    json_per_object = base["json"]["bytes_per_object"]
    for r in results:
        r["time_per_object_vs_10k"] = r["us_per_object"] / base["us_per_object"]
        r["bare"]["time_per_object_vs_10k"] = r["bare"]["us_per_object"] / base["bare"]["us_per_object"]
        r["time_per_object_vs_bare"] = r["us_per_object"] / r["bare"]["us_per_object"]
        for side in (r, r["bare"]):
            side["rss_per_object_vs_json"] = side["rss_per_object"] / json_per_object
            side["peak_per_object_vs_json"] = side["peak_per_object"] / json_per_object
    from benchmarks.versus.cli import environment

    result = {"command": command, "environment": environment(), "minutes": minutes,
              "json_bytes_per_object": json_per_object, "results": results}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str) + "\n")
    chart = out.with_suffix(".svg")

    def both(field: str) -> tuple[list[float], list[float]]:
        return [r[field] for r in results], [r["bare"][field] for r in results]

    write_lines(chart, f"kubeloop informer (blue) and the bare loop (grey) vs N ConfigMaps ({result['environment']['date']})",
                [r["n"] for r in results],
                [("start -> synced, per object", "us", *both("us_per_object")),
                 ("RSS after compaction, per object", "bytes", *both("rss_per_object")),
                 ("RSS peak during the list, per object", "bytes", *both("peak_per_object")),
                 ("get p99", "us", *both("get_p99_us")),
                 ("one full garbage collection with the objects held", "ms", *both("gc_pause_ms"))])
    print("\n| N | us/object to synced: kubeloop (vs 10k) | bare (vs 10k) | kubeloop / bare | "
          "RSS B/object (x JSON): kubeloop / bare | peak B/object: kubeloop / bare | get p50 / p99 us | "
          "full GC pause ms: kubeloop / bare | emulator load s | emulator RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        e, b = r["emulator"], r["bare"]
        print(f"| {r['n']:,} | {r['us_per_object']:.1f} ({r['time_per_object_vs_10k']:.2f}x) | "
              f"{b['us_per_object']:.1f} ({b['time_per_object_vs_10k']:.2f}x) | {r['time_per_object_vs_bare']:.2f}x | "
              f"{r['rss_per_object']:.0f} ({r['rss_per_object_vs_json']:.2f}x) / {b['rss_per_object']:.0f} "
              f"({b['rss_per_object_vs_json']:.2f}x) | {r['peak_per_object']:.0f} / {b['peak_per_object']:.0f} | "
              f"{r['get_p50_us']:.1f} / {r['get_p99_us']:.1f} | {r['gc_pause_ms']:.1f} / {b['gc_pause_ms']:.1f} | "
              f"{e['load_s']:.1f} | {e['rss_mb']:.0f} |")
    print(f"\nwrote {out} and {chart} ({result['minutes']:.1f} min)")
