"""kubeloop's side: one `Informer` (default transform and codec) with one index (a label value)
and one subscriber reading every event, run as its own process (see `benchmarks.versus.child`), on
the event loop ``kubeloop run`` uses (`kubeloop.meta.run_event_loop`: uvloop where installed)."""

from __future__ import annotations

import time

T_START = time.time()

import asyncio  # noqa: E402
import gc  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Mapping  # noqa: E402
from typing import Any  # noqa: E402

from benchmarks.versus.child import (  # noqa: E402
    COMPRESSION_ENV,
    LABEL,
    LOAD_CHEAP_LIMIT_ENV,
    answer_marks,
    args,
    emit,
    hwm,
    reads,
    resource_of,
    rss,
    run,
    until_closed,
)
from kubeloop.cache import ClientSource, Event, Informer, ZstdDictCodec  # noqa: E402
from kubeloop.client import Client  # noqa: E402
from kubeloop.meta import event_loop_factory  # noqa: E402

T_IMPORTED = time.time()


def by_group(obj: Mapping[str, Any]) -> str | None:
    value = (obj["metadata"].get("labels") or {}).get(LABEL)
    return str(value) if value is not None else None


def new_informer(client: Client, resource: str, namespace: str, **source: Any) -> Informer:
    inf = Informer(ClientSource(client, resource, namespace=namespace, **source), resource=resource)
    inf.add_index("group", by_group)
    limit = os.environ.get(LOAD_CHEAP_LIMIT_ENV)
    if limit is not None:
        inf.load_cheap_limit = float(limit)
    return inf


async def drain(inf: Informer, seen: list[int], sink: bool = False) -> None:
    """The one subscriber: reads every event's key. With `sink`, live events are handed to a
    function in the informer's task (as a controller's are, and as client-go calls its handlers);
    what was queued before (the initial list) is read as usual."""
    def count(ev: Event) -> None:
        _ = ev.key
        seen[0] += 1

    async for ev in inf.subscribe(sink=count if sink else None):
        count(ev)


def warm_codec() -> None:
    """Load the default codec's compression library, as the empty warm-up list never does (it
    learns no dictionary): its code (~0.7 MB of RSS) is a fixed cost of the process, like aiohttp's,
    so the baseline holds it. The codec's contexts go with it; the informer's own are measured."""
    codec = ZstdDictCodec()
    for i in range(codec.train_after + 2):
        codec.decode(codec.encode({"metadata": {"name": f"warm-{i}"}, "data": {"k": "v" * 64}}))


def held(inf: Informer) -> int:
    store = inf.store  # counted through the index, by keys: nothing is decoded for the count
    return sum(len(store.index_keys("group", g)) for g in store.index_values("group"))


async def main() -> None:
    mode, kind, namespace, kubeconfig = args()
    resource = resource_of(kind)
    emit("imported", t_start=T_START, t_imported=T_IMPORTED)
    compression = {"on": True, "off": False}.get(os.environ.get(COMPRESSION_ENV, "auto"))
    async with await Client.from_kubeconfig(kubeconfig, compression=compression) as client:
        base = 0
        traced = mode == "traced"
        if mode != "warmup":
            # run every code path once on an empty list, so the baseline holds what any run holds
            warm = new_informer(client, resource, namespace, label_selector="versus/none=1")
            async with warm:
                await warm.wait_synced(600)
            del warm
            warm_codec()
            gc.collect()
            if traced:
                tracemalloc.start()
            base = rss()
        t0 = time.time()
        seen = [0]
        inf = new_informer(client, resource, namespace)
        async with inf, asyncio.TaskGroup() as tg:
            reader = tg.create_task(drain(inf, seen, sink=mode == "churn-sink"))
            await inf.wait_synced(3600)
            t_synced = time.time()
            fields: dict[str, Any] = {"objects": held(inf), "rss": rss() - base, "hwm": hwm() - base, "t0": t0}
            if traced:
                fields["traced"], fields["traced_peak"] = tracemalloc.get_traced_memory()
            emit("synced", **fields, t_synced=t_synced)
            await inf.compacted()
            gc.collect()
            fields = {"rss": rss() - base, "hwm": hwm() - base}
            if traced:
                fields["traced"], fields["traced_peak"] = tracemalloc.get_traced_memory()
            emit("compacted", **fields)
            if mode == "scale":
                emit("gets", **get_latency(inf))
            if mode in ("churn", "churn-sink"):
                await churn(inf, seen)
            else:
                await until_closed()
            reader.cancel()


def get_latency(inf: Informer, samples: int = 20000) -> dict[str, Any]:
    """`get` of random keys through the informer's reader (a cold object: decoded on each read)."""
    rng = random.Random(1)
    keys = inf.reader.keys()
    return reads([(name, ns) for ns, name in (rng.choice(keys) for _ in range(samples))], inf.reader.get)


async def churn(inf: Informer, seen: list[int]) -> None:
    """Answer the parent's marks with CPU seconds and events seen; a mark waits until the store has
    deflated every changed object (write-back compaction is part of the cost of an event)."""
    async def compacted() -> None:
        while inf.store.pending_compaction:  # noqa: ASYNC110  # a store count: no event to wait on
            await asyncio.sleep(0.05)

    emit("ready")
    await answer_marks(seen, compacted)


if __name__ == "__main__":
    run(main, event_loop_factory())  # the loop `kubeloop run` uses (KUBELOOP_EVENT_LOOP=asyncio: asyncio's)
