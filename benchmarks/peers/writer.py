"""The churn writer, its own process: merge-patch ConfigMaps round-robin at a fixed rate, each
change stamped with the wall-clock send time in an annotation (handlers compute their lag from it).

    python -m benchmarks.peers.writer KUBECONFIG NAMESPACE RATE SECONDS KEYS CONCURRENCY

Prints one JSON line: writes, seconds, errors.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable

from benchmarks.peers.operators.report import STAMP
from kubeloop.client import Client
from kubeloop.config import load_kubeconfig


def name(i: int) -> str:
    return f"churn-{i:05d}"


async def paced(send: Callable[[int], Awaitable[None]], total: int, rate: float,
                concurrency: int) -> tuple[float, int]:
    """Call ``send(i)`` for i < total, started at ``rate``/s, at most ``concurrency`` at once;
    (seconds taken, calls that raised). The benchmarks' writers share it."""
    sem = asyncio.Semaphore(concurrency)
    errors = 0
    start = time.perf_counter()

    async def one(i: int) -> None:
        nonlocal errors
        try:
            await send(i)
        except Exception:
            errors += 1
        finally:
            sem.release()

    async with asyncio.TaskGroup() as tg:
        for i in range(total):
            delay = start + i / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            await sem.acquire()
            tg.create_task(one(i))
    return time.perf_counter() - start, errors


async def write(kubeconfig: str, ns: str, rate: float, seconds: float, keys: int, concurrency: int) -> dict[str, float]:
    async with Client(load_kubeconfig(kubeconfig), qps=None, timeout=30) as client:
        await client.resolve("v1/ConfigMap")
        total = int(rate * seconds)

        async def send(i: int) -> None:
            patch = {"metadata": {"annotations": {STAMP: repr(time.time())}}}
            await client.patch("v1/ConfigMap", name(i % keys), patch, namespace=ns)
        elapsed, errors = await paced(send, total, rate, concurrency)
        return {"writes": total, "seconds": elapsed, "errors": errors}


if __name__ == "__main__":
    kc, namespace, r, s, k, c = sys.argv[1:7]
    print(json.dumps(asyncio.run(write(kc, namespace, float(r), float(s), int(k), int(c)))), flush=True)
