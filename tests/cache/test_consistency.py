"""The cache converges on the truth: after random churn with injected watch drops, 410s and server
errors, the store (and a subscriber's view built from events alone) equals a fresh LIST.

Runs for a bounded time. On a real cluster (KUBELOOP_TEST_KUBECONFIG) it runs without faults."""

from __future__ import annotations

import asyncio
import contextlib
import random
from typing import Any

from kubeloop.cache import SharedCache
from kubeloop.client import ApiError, Client
from kubeloop.meta import ADDED, DELETED, MODIFIED, RESYNC

from .informer_support import CM, FAST, client, cm, eventually, ns

__all__ = ["client", "ns"]

CHURN_SECONDS = 2.5


def team(obj: Any) -> list[str]:
    t = (obj["metadata"].get("labels") or {}).get("team")
    return [t] if t else []


async def churn(client: Client, ns: str, rng: random.Random, stop: asyncio.Event) -> int:
    ops = 0
    while not stop.is_set():
        name = f"o{rng.randrange(30)}"
        op = rng.random()
        with contextlib.suppress(ApiError):
            if op < 0.4:
                await client.create(cm(name, labels={"team": rng.choice("abc")}), namespace=ns)
            elif op < 0.75:
                await client.patch(CM, name, {"metadata": {"labels": {"team": rng.choice("abcd")}},
                                              "data": {"n": str(rng.random())}}, namespace=ns)
            else:
                await client.delete(CM, name, namespace=ns)
        ops += 1
        await asyncio.sleep(0)
    return ops


async def faults_loop(faults: Any, rng: random.Random, stop: asyncio.Event) -> int:
    n = 0
    while not stop.is_set():
        await asyncio.sleep(rng.uniform(0.05, 0.2))
        kind = rng.randrange(5)
        if kind == 0:
            faults.close_watches("configmaps")
        elif kind == 1:
            faults.expire_next_watch("configmaps")
            faults.close_watches("configmaps")
        elif kind in (2, 3):
            faults.compact()
            faults.close_watches("configmaps")
        else:
            faults.fail_next(rng.randrange(1, 4), rng.choice([500, 503, 429]), resource="configmaps",
                             retry_after=0, verbs=("list", "watch"))
            faults.close_watches("configmaps")
        n += 1
    faults.reset()
    return n


async def test_store_equals_a_fresh_list_after_churn_and_faults(client: Client, ns: str, apiserver: Any) -> None:
    rng = random.Random(20261122)
    for i in range(10):
        await client.create(cm(f"o{i}", labels={"team": "a"}), namespace=ns)
    async with SharedCache(client, watch_config=FAST) as cache:
        h = await cache.informer_for("default", CM, namespace=ns)
        h.add_index("team", team)
        mirror: dict[str, str] = {}  # name -> resourceVersion, from events alone
        sub = h.subscribe(queue_size=64)
        narrow = await cache.informer_for("default", CM, namespace=ns, label_selector="team=b")
        narrow_sub = narrow.subscribe(queue_size=10_000)
        narrow_mirror: set[str] = set()
        laggard = h.subscribe(queue_size=4)  # read only at the end: must overflow and resync
        laggard_mirror: dict[str, str] = {}

        def consume() -> None:
            for ev in sub.drain():
                if ev.type == RESYNC:
                    continue
                if ev.type == DELETED:
                    mirror.pop(ev.name, None)
                else:
                    assert ev.type in (ADDED, MODIFIED) and ev.new is not None
                    mirror[ev.name] = ev.new["metadata"]["resourceVersion"]
            for ev in narrow_sub.drain():
                if ev.type == DELETED:
                    narrow_mirror.discard(ev.name)
                elif ev.type != RESYNC:
                    narrow_mirror.add(ev.name)

        await h.wait_synced(5)
        stop = asyncio.Event()
        tasks = [asyncio.create_task(churn(client, ns, rng, stop))]
        if apiserver.faults is not None:
            tasks.append(asyncio.create_task(faults_loop(apiserver.faults, rng, stop)))
        loop = asyncio.get_running_loop()
        end = loop.time() + CHURN_SECONDS
        while loop.time() < end:
            await asyncio.sleep(0.05)
            consume()
        stop.set()
        ops, *nfaults = await asyncio.gather(*tasks)
        assert ops > 50

        truth = await client.list(CM, namespace=ns)
        want = {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in truth}

        def converged() -> bool:
            consume()
            for ev in laggard.drain():
                if ev.type == DELETED:
                    laggard_mirror.pop(ev.name, None)
                elif ev.type != RESYNC and ev.new is not None:
                    laggard_mirror[ev.name] = ev.new["metadata"]["resourceVersion"]
            have = {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in h.list()}
            return have == want and mirror == want and laggard_mirror == want

        await eventually(converged, timeout=10, what="store == LIST")
        by_name = {o["metadata"]["name"]: o for o in truth}
        for t in "abcd":
            assert {n for _, n in h.reader.index_keys("team", t)} == {
                n for n, o in by_name.items() if (o["metadata"].get("labels") or {}).get("team") == t}
            assert {o["metadata"]["name"] for o in h.reader.by_index("team", t)} == {
                n for _, n in h.reader.index_keys("team", t)}
        want_b = {n for n, o in by_name.items() if (o["metadata"].get("labels") or {}).get("team") == "b"}
        assert {n for _, n in narrow.reader.keys()} == want_b
        assert narrow_mirror == want_b
        for name, obj in by_name.items():
            cached = h.get(name, ns)
            assert cached is not None and cached["data"] == obj["data"]
            assert cached["metadata"].get("labels") == obj["metadata"].get("labels")
        assert h.ready
        counters = h.informer.watcher.counters
        print(f"ops={ops} faults={nfaults} {counters} overflows={sub.overflows}/{laggard.overflows}")
        assert laggard.overflows >= 1
        if apiserver.faults is not None:
            assert counters.relists >= 1 and counters.watch_restarts >= 1 and counters.errors >= 1
        h.release()
        narrow.release()
