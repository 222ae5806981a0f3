"""Issue 32: how an informer lists. Its first LIST asks what client-go asks (resourceVersion 0,
served whole from the watch cache, `limit` ignored) and is read item by item as it arrives; a
server that pages gets followed page by page; a relist after a 410 is a quorum read and the watch
resumes from the list's resourceVersion; a malformed item fails the list with a typed error, and
the list is made again from scratch (nothing of the failed one stays, nothing is lost)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from aiohttp import web

from kubeloop.cache import ClientSource, Informer
from kubeloop.client import ApiError, Client
from kubeloop.client._list_stream import FEED_SIZE
from kubeloop.config import ClusterConfig
from kubeloop.watch import InitApply, InitDone, ListSemantic, WatchConfig, Watcher

from ..local_http import serve_get
from .informer_support import CM, FAST, MINE, client, cm, eventually, ns

__all__ = ["client", "ns"]

PAD = "x" * 2000


class Recording:
    """A `ClientSource` that remembers what each LIST and WATCH asked for (a wrapper, no HTTP change)."""

    def __init__(self, source: ClientSource) -> None:
        self.source = source
        self.lists: list[dict[str, Any]] = []
        self.listed: list[Any] = []  # each list stream, to read its resourceVersion afterwards
        self.log: list[tuple[str, dict[str, Any]]] = []  # ("list" | "watch", what it asked), in order

    async def list_page(self, **kw: Any) -> Any:
        self.lists.append(kw)
        self.log.append(("list", kw))
        return await self.source.list_page(**kw)

    def list_stream(self, **kw: Any) -> Any:
        self.lists.append(kw)
        self.log.append(("list", kw))
        stream = self.source.list_stream(**kw)
        self.listed.append(stream)
        return stream

    def watch(self, **kw: Any) -> Any:
        self.log.append(("watch", kw))
        return self.source.watch(**kw)


async def make(client: Client, ns: str, count: int, pad: str = "") -> None:
    await asyncio.gather(*(client.create(cm(f"c{i:02d}", data={"pad": pad}), namespace=ns) for i in range(count)))


async def test_the_first_list_is_one_response_read_item_by_item(client: Client, ns: str) -> None:
    await make(client, ns, 60, PAD)  # ~130 KB: several of the reader's slices
    source = Recording(ClientSource(client, CM, namespace=ns, label_selector=MINE))
    watcher = Watcher(source, WatchConfig(page_size=5))  # the default semantic: resourceVersion 0
    batches: list[int] = []
    seen: set[str] = set()

    async def until_synced() -> None:
        async for batch in watcher.event_batches():
            batches.append(sum(type(e) is InitApply for e in batch))
            seen.update(e.obj["metadata"]["name"] for e in batch if type(e) is InitApply)
            if any(type(e) is InitDone for e in batch):
                return

    await asyncio.wait_for(until_synced(), 10)
    watcher.stop()
    assert source.lists == [{"limit": 5, "continue_token": None, "resource_version": "0",
                             "resource_version_match": "NotOlderThan"}]
    assert watcher.counters.list_requests == 1  # limit ignored: one response, not 12 pages
    # the response came out a slice at a time, each item once (a list from the watch cache may be a
    # moment older than the last create: the watch brings the rest)
    assert len([n for n in batches if n]) > 3 and max(batches) <= FEED_SIZE // len(PAD) + 1
    assert len(seen) == sum(batches) and seen <= {f"c{i:02d}" for i in range(60)}


async def test_a_server_that_pages_is_followed_page_by_page(client: Client, ns: str) -> None:
    await make(client, ns, 10)
    source = Recording(ClientSource(client, CM, namespace=ns, label_selector=MINE))
    config = WatchConfig(page_size=3, list_semantic=ListSemantic.MOST_RECENT)
    async with Informer(source, resource="core/v1/configmaps", watch_config=config) as inf:
        await inf.wait_synced(10)
        assert sorted(name for _, name in inf.store.keys()) == [f"c{i:02d}" for i in range(10)]
    assert inf.watcher.counters.list_requests == 4
    assert [kw["continue_token"] is None for kw in source.lists] == [True, False, False, False]


async def test_a_watch_config_changes_only_what_it_sets(client: Client, ns: str) -> None:
    source = ClientSource(client, CM, namespace=ns, label_selector=MINE)
    default = Informer(source).watcher.config
    given = Informer(source, watch_config=WatchConfig(backoff_max=1.0)).watcher.config
    assert (given.page_size, given.list_semantic, given.streaming_list) == (
        default.page_size, default.list_semantic, default.streaming_list)
    assert default.list_semantic is ListSemantic.ANY and given.backoff_max == 1.0


async def test_a_relist_after_410_is_a_quorum_read_and_the_watch_resumes_from_it(client: Client, ns: str,
                                                                                 emulator: Any) -> None:
    await make(client, ns, 3)
    source = Recording(ClientSource(client, CM, namespace=ns, label_selector=MINE))
    async with Informer(source, resource="core/v1/configmaps", watch_config=FAST) as inf:
        await inf.wait_synced(10)
        assert source.lists[0]["resource_version"] == "0"
        emulator.faults.expire_next_watch("configmaps")
        emulator.faults.close_watches("configmaps")
        await eventually(lambda: len(source.lists) == 2, what="a relist after the 410")
        await client.delete(CM, "c00", namespace=ns)
        await client.create(cm("c09"), namespace=ns)
        await eventually(lambda: sorted(n for _, n in inf.store.keys()) == ["c01", "c02", "c09"],
                         what="the store follows the server after the relist")
    relist = source.lists[1]
    assert relist["resource_version"] is None and relist["resource_version_match"] is None  # a quorum read
    at = [i for i, (what, _) in enumerate(source.log) if what == "list"][1]
    after = next(kw for what, kw in source.log[at:] if what == "watch")
    assert after["resource_version"] == source.listed[1].resource_version != ""  # resumes from the relist


class CorruptingProxy:
    """An HTTP proxy to the test's API server (through its `Client`) that breaks one item of the
    first ConfigMap LIST response and holds the next LIST until `release` is set."""

    def __init__(self, upstream: Client, bad_item: bytes) -> None:
        self.upstream = upstream
        self.bad_item = bad_item
        self.lists = 0
        self.release = asyncio.Event()
        self.url = ""

    async def handle(self, req: web.Request) -> web.StreamResponse:
        params = dict(req.query)
        accept = req.headers.get("Accept", "application/json")
        transport = self.upstream.transport
        if params.get("watch") in ("1", "true"):
            resp = await transport.open_stream(req.path, params=params, accept=accept)
            out = web.StreamResponse(headers={"Content-Type": "application/json"})
            await out.prepare(req)
            try:
                async for chunk in resp.content.iter_any():
                    await out.write(chunk)
            except ConnectionResetError:  # the informer closed its watch
                pass
            finally:
                resp.close()
            return out
        is_list = req.path.endswith("/configmaps")
        if is_list:
            self.lists += 1
            if self.lists > 1:
                await self.release.wait()
        try:
            status, body = await transport.request("GET", req.path, params=params, accept=accept)
        except ApiError as exc:
            return web.json_response(exc.status, status=exc.code or 500)
        if is_list and self.lists == 1:
            assert self.bad_item in body
            body = body.replace(self.bad_item, self.bad_item + b",,")  # invalid JSON inside that item
        return web.Response(body=body, status=status, content_type="application/json")


@pytest_asyncio.fixture
async def proxy(client: Client) -> AsyncIterator[CorruptingProxy]:
    p = CorruptingProxy(client, b'"name":"c05"')
    async with serve_get(p.handle) as url:
        p.url = url
        try:
            yield p
        finally:
            p.release.set()


async def test_a_malformed_item_fails_the_list_typed_and_the_next_list_loses_nothing(
        client: Client, ns: str, proxy: CorruptingProxy) -> None:
    await make(client, ns, 10)
    async with Client(ClusterConfig(server=proxy.url), qps=None, timeout=10) as through:
        source = ClientSource(through, CM, namespace=ns, label_selector=MINE)
        async with Informer(source, resource="core/v1/configmaps", watch_config=FAST) as inf:
            await eventually(lambda: "not valid JSON" in inf.reason, what="the malformed item reported")
            await eventually(lambda: proxy.lists == 2, what="the list made again, from scratch")
            assert not inf.synced
            # meanwhile the server changes: the failed list's items must not outlive it
            await client.delete(CM, "c01", namespace=ns)
            await client.create(cm("c10"), namespace=ns)
            proxy.release.set()
            await inf.wait_synced(10)
            want = sorted({f"c{i:02d}" for i in range(11)} - {"c01"})
            await eventually(lambda: sorted(n for _, n in inf.store.keys()) == want, what="exactly the server's objects")
            assert inf.ready
