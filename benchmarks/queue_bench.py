"""Work-queue throughput: items/s and µs per item through add -> get -> done.

Scenarios:
  core            the sans-IO core alone (add, pop, done; no asyncio)
  WorkQueue       WorkQueue with 1 or 8 worker tasks; a producer task adds
                  distinct keys and yields to the loop every 64 adds
                  (``batch 64``: workers find keys ready) or after every add
                  (``batch 1``: every get parks and is woken by the add, the
                  worst case for a quiet controller)
  +metrics        the same with a named queue (workqueue_* metrics on)
  asyncio.Queue   baseline: the same loop through a plain asyncio.Queue
                  (no dedup, no one-worker-per-key), for scale

Each scenario runs ``--repeat`` times; the median is reported.

    .venv/bin/python benchmarks/queue_bench.py [--items N] [--repeat R]

Writes benchmarks/results/queue.json and prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

from kubeloop.queue import QueueShutDown, WorkQueue, WorkQueueCore


def bench_core(items: int) -> float:
    q: WorkQueueCore[int] = WorkQueueCore()
    clock = time.monotonic
    start = time.perf_counter()
    for i in range(items):
        q.add(i, now=clock())
        key = q.pop(clock())
        assert key is not None
        q.done(key, now=clock())
    return time.perf_counter() - start


async def bench_shell(items: int, workers: int, name: str | None, batch: int) -> float:
    q: WorkQueue[int] = WorkQueue(name)
    finished = asyncio.Event()
    processed = 0

    async def worker() -> None:
        nonlocal processed
        while True:
            try:
                key = await q.get()
            except QueueShutDown:
                return
            q.done(key)
            processed += 1
            if processed == items:
                finished.set()

    start = time.perf_counter()
    async with asyncio.TaskGroup() as tg:
        for _ in range(workers):
            tg.create_task(worker())
        for i in range(items):
            q.add(i)
            if i % batch == batch - 1:
                await asyncio.sleep(0)
        await finished.wait()
        elapsed = time.perf_counter() - start
        q.shutdown()
    return elapsed


async def bench_asyncio_queue(items: int, workers: int, batch: int) -> float:
    q: asyncio.Queue[int] = asyncio.Queue()
    finished = asyncio.Event()
    processed = 0

    async def worker() -> None:
        nonlocal processed
        while True:
            key = await q.get()
            if key < 0:
                return
            q.task_done()
            processed += 1
            if processed == items:
                finished.set()

    start = time.perf_counter()
    async with asyncio.TaskGroup() as tg:
        for _ in range(workers):
            tg.create_task(worker())
        for i in range(items):
            q.put_nowait(i)
            if i % batch == batch - 1:
                await asyncio.sleep(0)
        await finished.wait()
        elapsed = time.perf_counter() - start
        for _ in range(workers):
            q.put_nowait(-1)
    return elapsed


def median_run(repeat: int, run: Callable[[], float]) -> float:
    return statistics.median(run() for _ in range(repeat))


def run_async(factory: Callable[[], Awaitable[float]]) -> float:
    async def main() -> float:
        return await factory()

    return asyncio.run(main())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=20_000, help="items per run (default 20000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per scenario; the median is kept")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "queue.json")
    args = parser.parse_args(argv)
    n = args.items

    def shell(workers: int, name: str | None, batch: int) -> Callable[[], float]:
        return lambda: run_async(lambda: bench_shell(n, workers, name, batch))

    def baseline(workers: int, batch: int) -> Callable[[], float]:
        return lambda: run_async(lambda: bench_asyncio_queue(n, workers, batch))

    scenarios: list[tuple[str, int, int, Callable[[], float]]] = [
        ("core (sans-IO)", 0, 0, lambda: bench_core(n))
    ]
    for batch in (64, 1):
        for workers in (1, 8):
            scenarios.append(("WorkQueue", workers, batch, shell(workers, None, batch)))
            scenarios.append(("WorkQueue +metrics", workers, batch, shell(workers, "bench", batch)))
            scenarios.append(("asyncio.Queue (baseline)", workers, batch, baseline(workers, batch)))
    rows = []
    for label, workers, batch, run in scenarios:
        seconds = median_run(args.repeat, run)
        rows.append(
            {
                "scenario": label,
                "workers": workers,
                "batch": batch,
                "items": n,
                "seconds": round(seconds, 6),
                "items_per_second": round(n / seconds),
                "us_per_item": round(seconds / n * 1e6, 3),
            }
        )

    result = {
        "benchmark": "queue",
        "what": "add -> get -> done per item (distinct keys); median of runs",
        "command": " ".join(["python benchmarks/queue_bench.py", *(sys.argv[1:] if argv is None else argv)]),
        "items": n,
        "repeat": args.repeat,
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "results": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")

    print(f"{'scenario':<26} {'workers':>7} {'batch':>5} {'items/s':>10} {'us/item':>8}")
    for row in rows:
        workers_label = "-" if row["workers"] == 0 else str(row["workers"])
        batch_label = "-" if row["batch"] == 0 else str(row["batch"])
        print(
            f"{row['scenario']:<26} {workers_label:>7} {batch_label:>5} "
            f"{row['items_per_second']:>10,} {row['us_per_item']:>8.2f}"
        )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
