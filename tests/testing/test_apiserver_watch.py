"""WATCH: resume from a resourceVersion, 410 when too old, bookmarks, timeouts, selector enter/leave,
streaming lists (sendInitialEvents), and watch-related fault injection."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from kubeloop.testing import APIServer
from tests.testing.conftest import Http, cm

BASE = "/api/v1/namespaces/default/configmaps"


async def test_watch_from_list_rv_sees_every_write_in_order(http: Http) -> None:
    _, lst = await http.get(BASE)
    rv = lst["metadata"]["resourceVersion"]
    task = asyncio.create_task(http.watch(BASE, 3, resourceVersion=rv))
    await asyncio.sleep(0.05)
    _, _a = await http.post(BASE, cm("a"))
    await http.req("PATCH", BASE + "/a", {"data": {"x": "y"}}, ctype="application/merge-patch+json")
    await http.req("DELETE", BASE + "/a")
    events = await asyncio.wait_for(task, 5)
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and len(set(rvs)) == 3
    assert events[0]["object"]["kind"] == "ConfigMap"


async def test_resume_replays_history_and_too_old_is_410() -> None:
    async with APIServer(history_size=3) as server:
        import aiohttp

        async with aiohttp.ClientSession() as s:
            http = Http(s, server.url)
            _, lst = await http.get(BASE)
            start = lst["metadata"]["resourceVersion"]
            for i in range(2):
                await http.post(BASE, cm(f"c{i}"))
            replay = await http.watch(BASE, 2, resourceVersion=start)
            assert [e["object"]["metadata"]["name"] for e in replay] == ["c0", "c1"]
            for i in range(2, 6):
                await http.post(BASE, cm(f"c{i}"))
            expired = await http.watch(BASE, 1, resourceVersion=start)
            assert expired[0]["type"] == "ERROR" and expired[0]["object"]["code"] == 410


async def test_selector_leave_is_deleted_with_old_object_and_new_rv(http: Http) -> None:
    await http.post(BASE, cm("s", {"app": "x"}))
    _, lst = await http.get(BASE)
    task = asyncio.create_task(http.watch(BASE, 1, resourceVersion=lst["metadata"]["resourceVersion"],
                                          labelSelector="app=x"))
    await asyncio.sleep(0.05)
    _, out = await http.req("PATCH", BASE + "/s", {"metadata": {"labels": {"app": None}}},
                            ctype="application/merge-patch+json")
    (ev,) = await asyncio.wait_for(task, 5)
    assert ev["type"] == "DELETED"
    assert ev["object"]["metadata"]["labels"] == {"app": "x"}
    assert ev["object"]["metadata"]["resourceVersion"] == out["metadata"]["resourceVersion"]


async def test_timeout_ends_stream_with_bookmark(http: Http) -> None:
    events = await asyncio.wait_for(
        http.watch(BASE, 100, resourceVersion="0", timeoutSeconds="1", allowWatchBookmarks="true"), 5)
    assert events and all(e["type"] == "BOOKMARK" for e in events)
    assert int(events[-1]["object"]["metadata"]["resourceVersion"]) > 0


async def test_idle_watch_gets_periodic_bookmarks_between_changes_and_ends_on_time(http: Http) -> None:
    # the server's bookmark interval is 0.2 s here: changes in between must not stop the bookmarks
    loop = asyncio.get_running_loop()
    start = loop.time()
    task = asyncio.create_task(http.watch(BASE, 100, resourceVersion="0", timeoutSeconds="1",
                                          allowWatchBookmarks="true"))
    await asyncio.sleep(0.3)
    await http.post(BASE, cm("mid"))
    events = await asyncio.wait_for(task, 5)
    took = loop.time() - start
    assert [e["object"]["metadata"]["name"] for e in events if e["type"] == "ADDED"] == ["mid"]
    mid = next(i for i, e in enumerate(events) if e["type"] == "ADDED")
    assert any(e["type"] == "BOOKMARK" for e in events[:mid]) and sum(e["type"] == "BOOKMARK" for e in events[mid:]) >= 2
    assert 0.9 <= took < 3


async def test_send_initial_events_streaming_list(watchlist_http: Http) -> None:
    http = watchlist_http
    await http.post(BASE, cm("a"))
    await http.post(BASE, cm("b"))
    task = asyncio.create_task(http.watch(BASE, 4, sendInitialEvents="true", resourceVersionMatch="NotOlderThan",
                                          allowWatchBookmarks="true"))
    await asyncio.sleep(0.05)
    await http.post(BASE, cm("c"))
    events = await asyncio.wait_for(task, 5)
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in events] == [
        ("ADDED", "a"), ("ADDED", "b"), ("BOOKMARK", None), ("ADDED", "c")]
    assert events[2]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    code, _ = await http.get(BASE, watch="true", sendInitialEvents="true")
    assert code == 422
    code, st = await http.get(BASE, sendInitialEvents="true", resourceVersionMatch="NotOlderThan", resourceVersion="1")
    assert code == 422 and st["details"]["causes"][0]["field"] == "sendInitialEvents"  # forbidden for a list


async def test_send_initial_events_is_not_1_24(http: Http) -> None:
    """What kube-apiserver 1.24 answered (checked on the real server): the parameter is unknown, so
    `resourceVersionMatch` on a watch is invalid, and without it the watch is an ordinary one."""
    await http.post(BASE, cm("a"))
    code, st = await http.get(BASE, watch="true", sendInitialEvents="true", resourceVersionMatch="NotOlderThan",
                              allowWatchBookmarks="true")
    assert code == 422 and st["message"] == (
        'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden '
        "for watch, resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is "
        "provided]")
    assert [c["message"] for c in st["details"]["causes"]] == [
        "Forbidden: resourceVersionMatch is forbidden for watch",
        "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"]
    code, st = await http.get(BASE, watch="true", sendInitialEvents="true", resourceVersionMatch="NotOlderThan",
                              resourceVersion="1", allowWatchBookmarks="true")
    assert code == 422 and st["message"] == ('ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: '
                                             "Forbidden: resourceVersionMatch is forbidden for watch")
    code, lst = await http.get(BASE, sendInitialEvents="true", resourceVersionMatch="NotOlderThan", resourceVersion="1")
    assert code == 200 and [i["metadata"]["name"] for i in lst["items"]] == ["a"]
    events = await http.watch(BASE, 1, sendInitialEvents="true", timeoutSeconds="1")
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "a")]  # no bookmark follows


async def test_initial_events_are_streamed_and_precede_live_changes(watchlist_http: Http) -> None:
    """A streaming list of several of the server's writes: the watch's namespace and selector
    only, in key order; an object changed while they are being sent appears in them as it was
    when the watch started, and its change follows the initial-events-end bookmark."""
    http = watchlist_http
    await http.post("/api/v1/namespaces", {"metadata": {"name": "other"}})
    big = "x" * 1500
    for i in range(400):
        await http.post(BASE, cm(f"c{i:03}", {"keep": "yes" if i % 4 else "no"}, k=big))
    await http.post("/api/v1/namespaces/other/configmaps", cm("c000", {"keep": "yes"}, k=big))
    events: list[dict[str, Any]] = []
    params = {"watch": "true", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
              "allowWatchBookmarks": "true", "labelSelector": "keep=yes"}
    async with http.s.get(http.url + BASE, params=params) as r:
        async for line in r.content:
            events.append(orjson.loads(line))
            if len(events) == 1:  # the server is still sending the initial events
                await http.req("PUT", BASE + "/c399", cm("c399", {"keep": "yes"}, k="changed"))
            if events[-1]["type"] == "MODIFIED":
                break
    kinds = [(e["type"], e["object"]["metadata"].get("name")) for e in events]
    initial = [f"c{i:03}" for i in range(400) if i % 4]
    assert kinds == [("ADDED", n) for n in initial] + [("BOOKMARK", None), ("MODIFIED", "c399")]
    assert all(e["object"]["metadata"]["namespace"] == "default" for e in events if e["type"] == "ADDED")
    assert events[len(initial) - 1]["object"]["data"] == {"k": big}  # c399 as at the watch's start
    assert events[-1]["object"]["data"] == {"k": "changed"}


async def test_faults_close_watches_and_expire_next_watch(server: APIServer, http: Http) -> None:
    task = asyncio.create_task(http.watch(BASE, 10, resourceVersion="0"))
    for _ in range(50):
        if server.stats()["open_watches"].get("core/v1/configmaps") == 1:
            break
        await asyncio.sleep(0.01)
    assert server.stats()["open_watches"] == {"core/v1/configmaps": 1}
    assert server.faults.close_watches() == 1
    assert await asyncio.wait_for(task, 5) == []
    assert server.stats()["open_watches"] == {}
    server.faults.expire_next_watch("configmaps")
    (ev,) = await http.watch(BASE, 1, resourceVersion="0")
    assert ev["type"] == "ERROR" and ev["object"]["reason"] == "Expired"
    assert server.stats()["requests"]["watch core/v1/configmaps"] == 2


async def test_client_hang_up_is_counted_immediately(server: APIServer, http: Http) -> None:
    for _ in range(3):
        await http.watch(BASE, 1, resourceVersion="0", allowWatchBookmarks="true", timeoutSeconds="1")
    await http.post(BASE, cm("z"))
    for _ in range(3):
        await http.watch(BASE, 1, resourceVersion="0")
    for _ in range(100):
        if not server.stats()["open_watches"]:
            break
        await asyncio.sleep(0.01)
    assert server.stats()["open_watches"] == {}


async def test_watch_option_validation(watchlist_http: Http) -> None:
    """With streaming lists (the WatchList gate), the rules of the versions that have them."""
    http = watchlist_http
    code, st = await http.get(BASE, watch="true", sendInitialEvents="true", resourceVersionMatch="NotOlderThan")
    assert code == 422 and [c["field"] for c in st["details"]["causes"]] == ["allowWatchBookmarks"]
    code, st = await http.get(BASE, watch="true", resourceVersion="1", resourceVersionMatch="Exact")
    assert code == 422 and [c["message"] for c in st["details"]["causes"]] == [
        "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        'Unsupported value: "Exact": supported values: "NotOlderThan"']
