"""Watch streams over real HTTP: event order, ERROR events, closing mid-stream, inactivity timeout,
metadata-only watches, malformed lines, and that watches never starve ordinary requests."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import orjson
import pytest
from aiohttp import web

from kubeloop.client import (
    ApiResource,
    Client,
    Forbidden,
    Gone,
    MalformedWatchLine,
    WatchConnectionLost,
    WatchEvent,
)
from kubeloop.client._watch import WATCH_READ_SIZE
from kubeloop.config import ClusterConfig
from kubeloop.testing import TestCluster

from ..builders import MINE, cm, label
from .stub_server import serve


async def collect(stream: AsyncIterator[WatchEvent], count: int, *, skip_bookmarks: bool = True,
                  within: float = 5.0) -> list[WatchEvent]:
    out: list[WatchEvent] = []

    async def run() -> None:
        async for ev in stream:
            if skip_bookmarks and ev.type == "BOOKMARK":
                continue
            out.append(ev)
            if len(out) >= count:
                return

    await asyncio.wait_for(run(), within)
    return out


async def test_watch_events_in_order(client: Client, ns: str) -> None:
    rv = (await client.list("v1/ConfigMap", namespace=ns)).resource_version
    # only this test's objects (label MINE): a real cluster adds its own ConfigMaps to a new namespace
    async with client.watch("v1/ConfigMap", namespace=ns, label_selector=MINE, resource_version=rv,
                            timeout_seconds=30) as w:
        a = await client.create(label(cm("w1", {"a": "1"})), namespace=ns)
        b = await client.patch("v1/ConfigMap", "w1", {"data": {"a": "2"}}, namespace=ns)
        await client.delete("v1/ConfigMap", "w1", namespace=ns)
        events = await collect(w, 3)
    assert [e.type for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    assert events[0].resource_version == a["metadata"]["resourceVersion"]
    assert events[1].object["data"] == {"a": "2"} and events[1].resource_version == b["metadata"]["resourceVersion"]
    assert all(e.object["kind"] == "ConfigMap" for e in events)
    assert orjson.loads(events[0].raw)["type"] == "ADDED"


async def test_watch_resource_version_zero_replays_state(client: Client, ns: str) -> None:
    for i in range(3):  # labelled: a real cluster has its own ConfigMaps in every namespace
        await client.create(label(cm(f"s{i}")), namespace=ns)
    async with client.watch("v1/ConfigMap", namespace=ns, label_selector=MINE, resource_version="0") as w:
        events = await collect(w, 3)
    assert sorted(e.object["metadata"]["name"] for e in events) == ["s0", "s1", "s2"]
    assert {e.type for e in events} == {"ADDED"}


async def test_watch_label_selector_and_metadata_only(client: Client, ns: str) -> None:
    rv = (await client.list("v1/ConfigMap", namespace=ns)).resource_version
    async with client.watch("v1/ConfigMap", namespace=ns, resource_version=rv, label_selector={"pick": "me"},
                            metadata_only=True) as w:
        await client.create(cm("ignored", {"x": "1"}), namespace=ns)
        obj = cm("picked", {"x": "1"})
        obj["metadata"]["labels"] = {"pick": "me"}
        await client.create(obj, namespace=ns)
        [ev] = await collect(w, 1)
    assert ev.type == "ADDED" and ev.object["metadata"]["name"] == "picked"
    assert ev.object["kind"] == "PartialObjectMetadata" and "data" not in ev.object


async def test_watch_server_timeout_ends_stream(client: Client, ns: str) -> None:
    rv = (await client.list("v1/ConfigMap", namespace=ns)).resource_version
    events = []
    # a selector nothing matches: a real cluster may add its own ConfigMaps to the namespace meanwhile
    async with client.watch("v1/ConfigMap", namespace=ns, resource_version=rv, label_selector=MINE,
                            timeout_seconds=1) as w:
        async for ev in w:
            events.append(ev)
    assert all(e.type == "BOOKMARK" for e in events)


async def test_watch_expired_resource_version_is_error_event(client: Client, ns: str, apiserver: TestCluster) -> None:
    faults = apiserver.require_faults()
    faults.expire_next_watch("configmaps")
    rv = (await client.list("v1/ConfigMap", namespace=ns)).resource_version
    async with client.watch("v1/ConfigMap", namespace=ns, resource_version=rv) as w:
        [ev] = await collect(w, 1)
    assert ev.type == "ERROR"
    err = ev.error()
    assert isinstance(err, Gone) and err.code == 410


async def test_watch_closed_mid_stream_keeps_earlier_events(client: Client, ns: str, apiserver: TestCluster) -> None:
    faults = apiserver.require_faults()
    rv = (await client.list("v1/ConfigMap", namespace=ns)).resource_version
    seen: list[str] = []
    async with client.watch("v1/ConfigMap", namespace=ns, label_selector=MINE, resource_version=rv) as w:
        for i in range(3):
            await client.create(label(cm(f"c{i}")), namespace=ns)
        async for ev in w:
            if ev.type != "ADDED":
                continue
            seen.append(ev.object["metadata"]["name"])
            if len(seen) == 3:
                assert faults.close_watches("configmaps") >= 1
        # the loop ended: the server closed the stream after delivering everything before it
    assert seen == ["c0", "c1", "c2"]
    assert apiserver.stats()["open_watches"].get("core/v1/configmaps", 0) == 0


async def test_open_watches_are_counted_and_closed(client: Client, ns: str, apiserver: TestCluster) -> None:
    apiserver.require_faults()
    async with client.watch("v1/ConfigMap", namespace=ns, timeout_seconds=30):
        await asyncio.sleep(0.05)
        assert apiserver.stats()["open_watches"].get("core/v1/configmaps") == 1
    # the server notices a closed connection when it next writes to it
    await client.create(cm("poke"), namespace=ns)
    for _ in range(50):
        if not apiserver.stats()["open_watches"].get("core/v1/configmaps"):
            break
        await asyncio.sleep(0.02)
    assert not apiserver.stats()["open_watches"].get("core/v1/configmaps")


async def test_watch_inactivity_timeout(client: Client, ns: str) -> None:
    rv = (await client.list("v1/ConfigMap", namespace=ns)).resource_version
    with pytest.raises(WatchConnectionLost, match="inactivity"):
        async with client.watch("v1/ConfigMap", namespace=ns, resource_version=rv, allow_bookmarks=False,
                                inactivity_timeout=0.3) as w:
            async for _ in w:
                pass


async def test_watch_http_error_raises_typed(client: Client, ns: str, apiserver: TestCluster) -> None:
    faults = apiserver.require_faults()
    await client.resolve("v1/ConfigMap")
    faults.fail_next(1, 403, resource="configmaps", verbs=("watch",))
    stream = client.watch("v1/ConfigMap", namespace=ns, timeout_seconds=1)
    with pytest.raises(Forbidden):
        async for _ in stream:
            pass


async def test_watches_do_not_starve_requests(apiserver: TestCluster, ns: str) -> None:
    async with apiserver.client(qps=None, connection_limit=2) as c:
        streams = [c.watch("v1/ConfigMap", namespace=ns, timeout_seconds=30) for _ in range(6)]
        async with contextlib.AsyncExitStack() as stack:
            for s in streams:
                await stack.enter_async_context(s)
            got = await asyncio.wait_for(asyncio.gather(*(c.list("v1/ConfigMap", namespace=ns) for _ in range(4))), 5)
            assert len(got) == 4


async def test_send_initial_events(client: Client, ns: str) -> None:
    await client.create(label(cm("i0")), namespace=ns)
    from kubeloop.client import ApiError
    try:
        async with client.watch("v1/ConfigMap", namespace=ns, label_selector=MINE, send_initial_events=True) as w:
            events = await collect(w, 2, skip_bookmarks=False)
    except ApiError as exc:  # servers without the WatchList feature refuse it
        pytest.skip(f"server does not support sendInitialEvents: {exc}")
    assert events[0].type == "ADDED" and events[0].object["metadata"]["name"] == "i0"
    assert events[1].type == "BOOKMARK"
    assert events[1].object["metadata"].get("annotations", {}).get("k8s.io/initial-events-end") == "true"


# -- a stream the emulator would never send: a tiny real HTTP server of our own ------------------

CONFIGMAPS = ApiResource("", "v1", "ConfigMap", "configmaps", namespaced=True)


@contextlib.asynccontextmanager
async def raw_server(chunks: list[bytes]) -> AsyncIterator[str]:
    async def handler(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        await resp.prepare(request)
        for chunk in chunks:
            await resp.write(chunk)
            await asyncio.sleep(0)
        await resp.write_eof()
        return resp

    async with serve(handler, "/api/v1/namespaces/default/configmaps") as url:
        yield url


def line(etype: str, name: str, rv: int, pad: int = 0) -> bytes:
    obj = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": name, "resourceVersion": str(rv)},
           "data": {"pad": "x" * pad}}
    return orjson.dumps({"type": etype, "object": obj}) + b"\n"


async def test_malformed_line_after_earlier_events() -> None:
    body = line("ADDED", "a", 1) + line("MODIFIED", "a", 2)[:20]
    rest = line("MODIFIED", "a", 2)[20:] + b'{"type": "ADDED", "object": {trunc\n' + line("ADDED", "b", 3)
    async with raw_server([body, rest]) as url, Client(ClusterConfig(server=url), qps=None) as c:
        got: list[str] = []
        with pytest.raises(MalformedWatchLine) as exc:
            async for ev in c.watch(CONFIGMAPS):
                got.append(f"{ev.type}:{ev.resource_version}")
        assert got == ["ADDED:1", "MODIFIED:2"]
        assert b"trunc" in exc.value.line


async def test_huge_lines_and_split_chunks() -> None:
    big = line("ADDED", "big", 1, pad=3 * 2**20)  # a 3 MiB object: more than aiohttp's readline allows
    chunks = [big[i:i + 100_000] for i in range(0, len(big), 100_000)] + [line("ADDED", "small", 2)]
    async with raw_server(chunks) as url, Client(ClusterConfig(server=url), qps=None) as c:
        events = [ev async for ev in c.watch(CONFIGMAPS)]
    assert [e.object["metadata"]["name"] for e in events] == ["big", "small"]
    assert len(events[0].object["data"]["pad"]) == 3 * 2**20


async def test_batches_api() -> None:
    chunks = [b"".join(line("ADDED", f"o{i}", i) for i in range(5)) + b"{bad\n" + line("ADDED", "after", 9)]
    async with raw_server(chunks) as url, Client(ClusterConfig(server=url), qps=None) as c:
        async with c.watch(CONFIGMAPS) as w:
            first = await w.batches(max_events=3)
            assert [e.object["metadata"]["name"] for e in first] == ["o0", "o1", "o2"]
            second = await w.batches()
            assert [e.object["metadata"]["name"] for e in second] == ["o3", "o4"]  # stops before the bad line
            with pytest.raises(MalformedWatchLine):
                await w.batches()


async def test_a_plain_http_watch_reads_heap_sized_chunks() -> None:
    """asyncio reads plain TCP with recv(256 KiB), which glibc may serve with mmap + mremap + munmap
    for every small read (CPython gh-85451): a watch socket reads at most WATCH_READ_SIZE at once,
    and a 3 MiB line still arrives whole."""
    big = line("ADDED", "big", 1, pad=3 * 2**20)
    async with raw_server([big]) as url, Client(ClusterConfig(server=url), qps=None) as c:
        async with c.watch(CONFIGMAPS) as w:
            assert w._resp is not None and w._resp.connection is not None
            transport = w._resp.connection.transport
            assert transport is not None and getattr(transport, "max_size") == WATCH_READ_SIZE  # noqa: B009
            events = [ev async for ev in w]
    assert len(events[0].object["data"]["pad"]) == 3 * 2**20
