"""Watcher overhead per watch event: the sans-IO machine alone, and the asyncio driver over an
in-memory source beside a bare `async for` over the same source (so only kubeloop.watch is timed,
not HTTP or JSON decoding; see client_bench.py for those). Best of --repeat.

Writes benchmarks/results/watch.json and prints a table.

    .venv/bin/python benchmarks/watch_bench.py [--events 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import platform
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from kubeloop.client import WatchEvent
from kubeloop.watch import ListPage, Watcher, WatchMachine

RESULTS = Path(__file__).parent / "results" / "watch.json"


def make_objects(n: int) -> list[dict[str, Any]]:
    return [{"metadata": {"name": f"o{i % 1000}", "namespace": "ns", "resourceVersion": str(i + 10)}}
            for i in range(n)]


class MemorySource:
    """Lists nothing, then streams every object as MODIFIED, then hangs."""

    def __init__(self, objects: list[dict[str, Any]]) -> None:
        self.objects = objects

    async def list_page(self, **_: Any) -> ListPage:
        return ListPage([], "9")

    def watch(self, **_: Any) -> AsyncIterator[WatchEvent]:
        return self._stream()

    async def _stream(self) -> AsyncIterator[WatchEvent]:
        for o in self.objects:
            yield WatchEvent("MODIFIED", o)
        await asyncio.sleep(3600)


def bench_machine(objects: list[dict[str, Any]]) -> float:
    m = WatchMachine()
    m.next_action(0.0)
    m.on_list_page(ListPage([], "9"), 0.0)
    m.next_action(0.0)
    feed = m.on_watch_event
    start = time.perf_counter()
    for o in objects:
        feed("MODIFIED", o, 1.0)
    return time.perf_counter() - start


async def bench_bare(objects: list[dict[str, Any]]) -> float:
    n, total = 0, len(objects)
    start = time.perf_counter()
    async for _ in MemorySource(objects)._stream():
        n += 1
        if n == total:
            break
    return time.perf_counter() - start


async def bench_watcher(objects: list[dict[str, Any]]) -> float:
    watcher = Watcher(MemorySource(objects))
    n, total = 0, len(objects) + 2  # Init and InitDone of the empty list first
    start = time.perf_counter()
    async for _ in watcher.events():
        n += 1
        if n == total:
            watcher.stop()
    return time.perf_counter() - start


def best(fn: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        times.append(fn())
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    objects = make_objects(args.events)
    n = len(objects)
    machine = best(lambda: bench_machine(objects), args.repeat)
    bare = best(lambda: asyncio.run(bench_bare(objects)), args.repeat)
    driven = best(lambda: asyncio.run(bench_watcher(objects)), args.repeat)
    rows = {
        "machine_us_per_event": machine / n * 1e6,
        "bare_async_for_us_per_event": bare / n * 1e6,
        "watcher_us_per_event": driven / n * 1e6,
        "watcher_overhead_us_per_event": (driven - bare) / n * 1e6,
    }
    result = {"benchmark": "watch", "events": n, "repeat": args.repeat, "python": platform.python_version(),
              "machine": platform.machine(), "results": rows}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{'measure':<34}{'µs/event':>10}")
    for key, value in rows.items():
        print(f"{key:<34}{value:>10.2f}")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
