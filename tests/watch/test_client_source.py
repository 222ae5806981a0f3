"""Watcher over real HTTP against the emulator (or KUBELOOP_TEST_KUBECONFIG's cluster), through the
informers' `kubeloop.cache._source.ClientSource` (the one adapter from `kubeloop.client` to a
`WatchSource`). The store built from the watcher's events must equal a fresh LIST after drops, 410s
and errors."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

import orjson
import pytest
import pytest_asyncio

from kubeloop.cache import ClientSource
from kubeloop.client import ApiError, Client, RetryPolicy
from kubeloop.testing import TestCluster
from kubeloop.watch import ErrorKind, ListSemantic, WatchConfig, Watcher, WatcherEvent, WatchSource

from .. import builders
from ..local_http import serve
from .fakes import Store

CM = "v1/ConfigMap"


@pytest_asyncio.fixture
async def client(apiserver: TestCluster) -> AsyncIterator[Client]:
    """The plugin's `client`, but with no retries: the watcher does the retrying."""
    async with apiserver.client(qps=None, retry=RetryPolicy(max_attempts=1), timeout=10) as c:
        yield c


@pytest.fixture
def ns(namespace: str) -> str:
    """The plugin's `namespace` fixture under the short name these tests use."""
    return namespace


def cm(name: str, value: str = "1") -> dict[str, Any]:
    """A ConfigMap labelled as this test's own: a real cluster adds its own ConfigMaps to a namespace."""
    return builders.label(builders.cm(name, {"v": value}))


FAST = WatchConfig(page_size=2, list_semantic=ListSemantic.MOST_RECENT, backoff_initial=0.02, backoff_max=0.1,
                   watch_timeout=(30, 30))
"""Quorum reads in pages of 2 (a list from the watch cache, the default, is one response)."""


async def live(client: Client, ns: str) -> dict[str, str]:
    listed = await client.list(CM, namespace=ns, label_selector=builders.MINE)
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in listed.items}


def view(store: Store) -> dict[str, str]:
    return {k: v["metadata"]["resourceVersion"] for k, v in store.items.items()}


async def until(events: AsyncGenerator[WatcherEvent, None], store: Store, pred: Callable[[], bool],
                within: float = 5.0) -> None:
    async with asyncio.timeout(within):
        while not pred():
            store.apply(await anext(events))


async def converge(events: AsyncGenerator[WatcherEvent, None], store: Store, client: Client, ns: str) -> None:
    expected = await live(client, ns)
    await until(events, store, lambda: store.synced and view(store) == expected)


def source_for(client: Client, ns: str) -> WatchSource:
    return ClientSource(client, CM, namespace=ns, label_selector=builders.MINE)


async def test_list_in_pages_then_watch(client: Client, ns: str) -> None:
    for i in range(5):
        await client.create(cm(f"c{i}"), namespace=ns)
    watcher = Watcher(source_for(client, ns), FAST)
    store = Store()
    async with contextlib.aclosing(watcher.events()) as events:
        await converge(events, store, client, ns)
        assert watcher.counters.list_requests == 3
        await client.create(cm("new"), namespace=ns)
        await client.delete(CM, "c1", namespace=ns)
        await converge(events, store, client, ns)
    assert watcher.counters.relists == 0


async def test_dropped_watches_resume_and_410_relists(client: Client, ns: str, apiserver: Any) -> None:
    faults = apiserver.require_faults()
    await client.create(cm("a"), namespace=ns)
    await client.create(cm("b"), namespace=ns)
    watcher = Watcher(source_for(client, ns), FAST)
    store = Store()
    async with contextlib.aclosing(watcher.events()) as events:
        await converge(events, store, client, ns)
        await client.create(cm("c"), namespace=ns)
        await converge(events, store, client, ns)
        faults.close_watches()
        await client.create(cm("d"), namespace=ns)
        await converge(events, store, client, ns)
        assert watcher.counters.relists == 0 and watcher.counters.watches >= 2
        # 410 as an ERROR event on the next watch
        faults.expire_next_watch("configmaps")
        faults.close_watches()
        await client.delete(CM, "a", namespace=ns)
        await converge(events, store, client, ns)
        # deleted while the history was compacted away: only the relist can tell
        faults.compact()
        faults.close_watches()
        await client.delete(CM, "b", namespace=ns)
        faults.compact()
        await converge(events, store, client, ns)
    assert watcher.counters.relists >= 1
    assert watcher.last_error is not None


async def test_server_errors_back_off_and_recover(client: Client, ns: str, apiserver: Any) -> None:
    faults = apiserver.require_faults()
    await client.create(cm("a"), namespace=ns)
    faults.fail_next(2, 500, resource="configmaps", verbs=("list",))
    watcher = Watcher(source_for(client, ns), FAST)
    store = Store()
    async with contextlib.aclosing(watcher.events()) as events:
        await until(events, store, lambda: store.synced)
        await converge(events, store, client, ns)
    assert watcher.counters.errors >= 2
    assert watcher.last_error is not None and watcher.last_error.kind is ErrorKind.SERVER


@pytest.mark.parametrize("semantic", list(ListSemantic))
@pytest.mark.parametrize("streaming", [False, True])
async def test_list_semantics_and_streaming(client: Client, ns: str, apiserver: Any, semantic: ListSemantic,
                                            streaming: bool) -> None:
    for i in range(3):
        await client.create(cm(f"c{i}"), namespace=ns)
    config = WatchConfig(page_size=2, list_semantic=semantic, streaming_list=streaming, backoff_initial=0.02,
                         backoff_max=0.1, watch_timeout=(30, 30))
    watcher = Watcher(source_for(client, ns), config)
    store = Store()
    async with contextlib.aclosing(watcher.events()) as events:
        await converge(events, store, client, ns)
        await client.create(cm("more"), namespace=ns)
        await converge(events, store, client, ns)
    if streaming:
        # a 1.24 server (the real one, the emulator by default) refuses streaming lists: the watcher
        # lists instead; the emulator with the WatchList feature gate serves them
        streams = apiserver.is_emulator and apiserver.server.feature_gates.enabled("WatchList")
        assert watcher.machine.streaming_supported is streams
        assert (watcher.counters.list_requests == 0) is streams


async def test_missing_kind_waits_for_resource(client: Client) -> None:
    source = ClientSource(client, "example.com/v1/Widget")
    watcher = Watcher(source, WatchConfig(backoff_initial=0.02, backoff_max=0.05))
    got: list[WatcherEvent] = []
    task = asyncio.create_task(watcher.run(got.append))
    try:
        async with asyncio.timeout(3):
            while watcher.counters.errors < 2:  # noqa: ASYNC110
                await asyncio.sleep(0.01)
        assert watcher.state.value == "WaitingForResource"
        assert got == []
    finally:
        watcher.stop()
        await task


async def test_store_equals_a_fresh_list_after_random_churn_and_faults(client: Client, ns: str,
                                                                      apiserver: Any) -> None:
    import random

    faults = apiserver.require_faults()
    rng = random.Random(1234)
    watcher = Watcher(source_for(client, ns), FAST)
    store = Store()
    names = [f"c{i}" for i in range(12)]

    async def churn() -> None:
        for step in range(150):
            name = rng.choice(names)
            with contextlib.suppress(ApiError):
                if rng.random() < 0.3:
                    await client.delete(CM, name, namespace=ns)
                else:
                    try:
                        await client.create(cm(name, str(step)), namespace=ns)
                    except ApiError:
                        await client.patch(CM, name, {"data": {"v": str(step)}}, namespace=ns)
            r = rng.random()
            if r < 0.04:
                faults.close_watches()
            elif r < 0.06:
                faults.expire_next_watch("configmaps")
                faults.close_watches()
            elif r < 0.07:
                faults.compact()
                faults.close_watches()
            elif r < 0.08:
                faults.fail_next(1, 503, resource="configmaps", verbs=("watch", "list"))
            await asyncio.sleep(0.002)

    async def consume() -> None:
        async for event in events:
            store.apply(event)

    async with contextlib.aclosing(watcher.events()) as events:
        async with asyncio.TaskGroup() as tg:
            consumer = tg.create_task(consume())
            await churn()
            faults.reset()
            expected = await live(client, ns)
            async with asyncio.timeout(10):
                while not (store.synced and view(store) == expected):  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
            consumer.cancel()
    assert view(store) == await live(client, ns)
    assert watcher.counters.watches > 1


async def test_a_410_after_a_fault_storm_does_not_wait_for_the_grown_backoff(client: Client, ns: str,
                                                                              apiserver: Any) -> None:
    """Issue 11 item 11: after a storm of 500s the server is healthy again but the next fresh watch
    meets a compacted resourceVersion (410). The cache must converge at once, not after the next,
    fully grown backoff step (5.12 s here)."""
    faults = apiserver.require_faults()
    config = WatchConfig(backoff_initial=0.02, backoff_factor=4.0, backoff_max=10.0, backoff_jitter=0.0,
                         min_watch_duration=0.5, watch_timeout=(30, 30))
    await client.create(cm("a"), namespace=ns)
    watcher = Watcher(source_for(client, ns), config)
    store = Store()
    async with contextlib.aclosing(watcher.events()) as events:
        await converge(events, store, client, ns)
        await asyncio.sleep(0.6)  # a healthy first watch
        faults.fail_next(4, 500, resource="configmaps", verbs=("watch",))  # the storm: 0.02+0.08+0.32+1.28 s
        faults.expire_next_watch("configmaps")  # then the first accepted watch gets a 410
        started = asyncio.get_running_loop().time()
        faults.close_watches("configmaps")
        await client.create(cm("b"), namespace=ns)
        await converge(events, store, client, ns)
        elapsed = asyncio.get_running_loop().time() - started
    assert watcher.counters.relists >= 1 and watcher.last_error is not None
    assert elapsed < 4.0, elapsed  # 1.7 s of storm; the grown backoff would have added 5.12 s


async def test_a_misspelt_built_in_kind_fails_at_once_in_the_shared_cache(client: Client) -> None:
    """Issue 11 item 14: an informer for `v1/ConfigMapp` must not wait for a CRD forever."""
    from kubeloop.cache import SharedCache
    from kubeloop.client import UnknownKind

    async with SharedCache(client) as cache:
        with pytest.raises(UnknownKind, match="ConfigMap"):
            await asyncio.wait_for(cache.informer_for(resource="v1/ConfigMapp"), 5)


async def test_a_malformed_watch_line_over_http_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    """Issue 11 item 13, end to end: a server (a proxy, say) sends a line that is not a watch event
    in the middle of a healthy stream; the user hears about it at WARNING, and the cache recovers."""
    from aiohttp import web

    from kubeloop.config import ClusterConfig

    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "5"}}
    watches = 0

    async def discovery(request: web.Request) -> web.Response:
        return web.json_response({"kind": "APIResourceList", "groupVersion": "v1", "resources": [
            {"name": "configmaps", "namespaced": True, "kind": "ConfigMap", "verbs": ["list", "watch"]}]})

    async def configmaps(request: web.Request) -> web.StreamResponse:
        nonlocal watches
        if request.query.get("watch") not in ("1", "true"):
            return web.json_response({"kind": "ConfigMapList", "apiVersion": "v1",
                                      "metadata": {"resourceVersion": "5"}, "items": [obj]})
        watches += 1
        resp = web.StreamResponse()
        await resp.prepare(request)
        bookmark = {"type": "BOOKMARK", "object": {"kind": "ConfigMap", "apiVersion": "v1",
                                                   "metadata": {"resourceVersion": "5"}}}
        await resp.write(orjson.dumps(bookmark) + b"\n")
        await resp.write(b"<html>502 Bad Gateway</html>\n" if watches == 1 else b"")
        await asyncio.sleep(0.2 if watches == 1 else 30)
        return resp

    app = web.Application()
    app.router.add_get("/api/v1", discovery)
    app.router.add_get("/api/v1/namespaces/ns/configmaps", configmaps)
    async with serve(app) as url, Client(ClusterConfig(server=url), qps=None,
                                         retry=RetryPolicy(max_attempts=1)) as client:
        watcher = Watcher(ClientSource(client, CM, namespace="ns"), FAST, name="configmaps in ns")
        store = Store()
        with caplog.at_level("WARNING", logger="kubeloop.watch"):
            consumer = asyncio.create_task(watcher.run(store.apply))
            async with asyncio.timeout(5):
                while watches < 2:  # the watcher resumed after the broken stream  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
            watcher.stop()
            await consumer
        assert store.synced
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("configmaps in ns" in w and "502 Bad Gateway" in w for w in warnings), warnings
