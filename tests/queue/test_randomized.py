"""Many asyncio workers, random adds, delays and rate-limited requeues.

Asserts the two promises controllers rely on: a key is never processed by two
workers at once, and no add is lost (every add is followed by a processing of
that key that starts after the add).
"""

from __future__ import annotations

import asyncio
import itertools
import random

import pytest

from kubeloop.queue import LOW_PRIORITY, ItemExponentialBackoff, QueueShutDown, WorkQueue


@pytest.mark.parametrize(
    ("seed", "debounce"),
    [(1, 0.0), (2, 0.0), (3, 0.0), (4, 0.002)],
)
async def test_random_workers_never_overlap_and_never_lose_an_add(seed: int, debounce: float) -> None:
    rng = random.Random(seed)
    q: WorkQueue[str] = WorkQueue(
        rate_limiter=ItemExponentialBackoff(0.0005, 0.004),
        starvation_every=4,
        debounce=debounce,
    )
    keys = [f"k{i}" for i in range(25)]
    tick = itertools.count()
    last_add: dict[str, int] = {}
    last_start: dict[str, int] = {}
    active: set[str] = set()
    overlaps: list[str] = []
    runs = 0

    def record_add(key: str) -> None:
        last_add[key] = next(tick)

    async def worker() -> None:
        nonlocal runs
        while True:
            try:
                key = await q.get()
            except QueueShutDown:
                return
            if key in active:
                overlaps.append(key)
            active.add(key)
            last_start[key] = next(tick)
            runs += 1
            await asyncio.sleep(rng.choice((0, 0, 0, 0.0005)))
            roll = rng.random()
            if roll < 0.1:  # the reconcile failed: retry with backoff
                record_add(key)
                q.add_rate_limited(key, priority=rng.choice((0, LOW_PRIORITY)))
            elif roll < 0.15:  # requeue_after
                record_add(key)
                q.add_after(key, rng.uniform(0, 0.003))
            elif roll < 0.2:  # its own object changed meanwhile
                record_add(key)
                q.add(key)
            else:
                q.forget(key)
            active.discard(key)
            q.done(key)

    async with asyncio.TaskGroup() as tg:
        for _ in range(8):
            tg.create_task(worker())
        for _ in range(1500):
            key = rng.choice(keys[:5]) if rng.random() < 0.4 else rng.choice(keys)  # a few hot keys
            roll = rng.random()
            record_add(key)
            if roll < 0.6:
                q.add(key, priority=rng.choice((0, 0, 0, 5, LOW_PRIORITY)))
            elif roll < 0.9:
                q.add_after(key, rng.uniform(0, 0.005))
            else:
                q.add_rate_limited(key)
            if rng.random() < 0.3:
                await asyncio.sleep(rng.choice((0, 0, 0.0005)))
        for _ in range(600):  # up to 3 s for the queue to go idle; a stuck key shows up as a lost add
            if not (len(q) or q.processing_count):
                break
            await asyncio.sleep(0.005)
        assert await q.shutdown_and_drain(timeout=5)

    assert overlaps == []
    lost = sorted(k for k, added in last_add.items() if last_start.get(k, -1) < added)
    assert lost == []
    assert runs > 100
