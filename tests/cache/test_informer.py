"""Informer integration tests over real HTTP (emulator, or KUBELOOP_TEST_KUBECONFIG's cluster)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import secrets
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from kubeloop.cache import (
    OWNER_INDEX,
    ClientSource,
    Informer,
    InformerNotReady,
    MetadataOnlyError,
    ReadOnlyError,
    ZstdDictCodec,
    thaw,
)
from kubeloop.client import Client
from kubeloop.config import load_kubeconfig
from kubeloop.meta import ADDED, DELETED, MODIFIED, RESYNC
from kubeloop.watch import WatchConfig

from ..local_http import serve
from .informer_support import CM, FAST, MINE, client, cm, collect, eventually, names, ns

__all__ = ["client", "ns"]


def informer(client: Client, namespace: str, **kwargs: Any) -> Informer:
    """An informer on this test's ConfigMaps (label MINE): a real cluster adds its own to a namespace."""
    source = ClientSource(client, CM, namespace=namespace, label_selector=MINE,
                          metadata_only=kwargs.pop("metadata_only", False))
    return Informer(source, resource="core/v1/configmaps", watch_config=FAST, **kwargs)


async def test_sync_then_ordered_events_with_initial_flag(client: Client, ns: str) -> None:
    for i in range(3):
        await client.create(cm(f"a{i}"), namespace=ns)
    async with informer(client, ns) as inf:
        sub = inf.subscribe()
        assert not inf.synced and not inf.ready and inf.reason
        await inf.wait_synced(5)
        assert inf.synced and inf.ready and inf.reason == ""
        initial = await collect(sub, 3)
        assert sorted(names(initial)) == [(ADDED, "a0"), (ADDED, "a1"), (ADDED, "a2")]
        assert all(e.initial and e.cluster == "default" and e.namespace == ns for e in initial)
        await client.patch(CM, "a0", {"data": {"k": "v2"}}, namespace=ns)
        await client.create(cm("b"), namespace=ns)
        await client.delete(CM, "a1", namespace=ns)
        live = await collect(sub, 3)
        assert names(live) == [(MODIFIED, "a0"), (ADDED, "b"), (DELETED, "a1")]
        assert not any(e.initial for e in live)
        mod, _, dele = live
        assert mod.old is not None and mod.old["data"]["k"] == "v" and mod.new is not None
        assert mod.new["data"]["k"] == "v2"
        assert dele.new is None and dele.old is not None and dele.old["metadata"]["name"] == "a1"
        assert sorted(n for _, n in inf.reader.keys()) == ["a0", "a2", "b"]


async def test_late_subscriber_gets_current_contents_and_closed_subscription_stops(client: Client, ns: str) -> None:
    for i in range(4):
        await client.create(cm(f"c{i}"), namespace=ns)
    async with informer(client, ns) as inf:
        await inf.wait_synced(5)
        late = inf.subscribe()
        got = await collect(late, 4)
        assert sorted(names(got)) == [(ADDED, f"c{i}") for i in range(4)]
        assert all(e.initial for e in got) and got[0].new is not None
        closed = inf.subscribe(replay=False)
        closed.close()
        assert closed not in inf.subscriptions
        await client.create(cm("d"), namespace=ns)
        assert names(await collect(late, 1)) == [(ADDED, "d")]
        assert closed.get_nowait() is None
        quiet = inf.subscribe(replay=False)
        assert quiet.get_nowait() is None


async def test_slow_subscriber_overflows_into_resync_without_blocking_others(client: Client, ns: str) -> None:
    for i in range(3):
        await client.create(cm(f"s{i}"), namespace=ns)
    async with informer(client, ns) as inf:
        await inf.wait_synced(5)
        slow = inf.subscribe(queue_size=2, replay=False)
        fast = inf.subscribe(replay=False)
        await client.delete(CM, "s0", namespace=ns)
        for i in range(5):
            await client.create(cm(f"n{i}"), namespace=ns)
        await client.delete(CM, "n4", namespace=ns)
        got_fast = await collect(fast, 7)
        assert names(got_fast)[0] == (DELETED, "s0") and names(got_fast)[-1] == (DELETED, "n4")
        assert slow.overflows == 1
        first = await slow.get()
        assert first.type == RESYNC
        rest = slow.drain()
        deletes = sorted(e.name for e in rest if e.type == DELETED)
        adds = sorted(e.name for e in rest if e.type == ADDED)
        assert deletes == ["n4", "s0"]  # nothing deleted while it lagged is lost
        assert adds == sorted(n for _, n in inf.reader.keys())  # then the current state
        assert all(e.initial for e in rest if e.type == ADDED)
        await client.create(cm("after"), namespace=ns)
        assert names(await collect(slow, 1)) == [(ADDED, "after")]


async def test_a_streaming_list_cut_before_its_end_is_listed_again(client: Client, ns: str, apiserver: Any) -> None:
    """The server ends the stream while still sending the initial events (no initial-events-end
    bookmark): nothing is synced from the partial list; the informer lists again and holds exactly
    what is there, written meanwhile included."""
    faults = apiserver.require_faults()
    if not apiserver.server.feature_gates.enabled("WatchList"):
        pytest.skip("needs streaming lists, a feature after 1.24 (KUBELOOP_TEST_FEATURE_GATES=WatchList=true, "
                    "as `make test-watchlist` runs it)")
    n, big = 1500, "x" * 10_000  # ~15 MB in all: more than the sockets buffer, so the cut lands mid-stream
    sem = asyncio.Semaphore(32)

    async def create(i: int) -> None:
        async with sem:
            await client.create(cm(f"s{i:04}", data={"k": big}), namespace=ns)

    await asyncio.gather(*(create(i) for i in range(n)))
    source = ClientSource(client, CM, namespace=ns, label_selector=MINE)
    async with Informer(source, resource="core/v1/configmaps",
                        watch_config=dataclasses.replace(FAST, streaming_list=True)) as inf:
        await eventually(lambda: inf.events_handled > 0, timeout=30, interval=0, what="the first initial event")
        assert not inf.synced
        faults.close_watches("configmaps")
        await client.create(cm("later"), namespace=ns)
        await inf.wait_synced(60)
        assert inf.watcher.counters.streaming_fallbacks == 1  # the stream was cut before its end
        held = sorted(name for _, name in inf.reader.keys())
        assert held == sorted([f"s{i:04}" for i in range(n)] + ["later"])


async def test_relist_after_410_reports_vanished_objects_as_deleted(client: Client, ns: str, apiserver: Any) -> None:
    faults = apiserver.require_faults()
    for i in range(3):
        await client.create(cm(f"r{i}"), namespace=ns)
    async with informer(client, ns) as inf:
        await inf.wait_synced(5)
        sub = inf.subscribe(replay=False)
        reader = inf.reader  # held across the relist (which swaps in a new store)
        relists = inf.watcher.counters.relists
        # cut the informer off (every watch fails), change things, then compact the history:
        # when it reconnects, its resourceVersion is gone (410) and it must relist
        faults.fail_next(10_000, 503, resource="configmaps", verbs=("watch",))
        faults.close_watches("configmaps")
        await client.delete(CM, "r0", namespace=ns)
        await client.patch(CM, "r1", {"data": {"k": "changed"}}, namespace=ns)
        faults.compact()
        faults.reset()
        await eventually(lambda: reader.get("r0", ns) is None and
                         (reader.get("r1", ns) or {}).get("data", {}).get("k") == "changed", what="relist")
        got = sub.drain()
        assert (DELETED, "r0") in names(got) and (MODIFIED, "r1") in names(got)
        assert inf.watcher.counters.relists > relists
        assert inf.ready
        await client.create(cm("r3"), namespace=ns)  # the swapped-in store keeps receiving changes
        await eventually(lambda: reader.get("r3", ns) is not None, what="event after relist")
        assert sorted(n for _, n in reader.keys()) == ["r1", "r2", "r3"]


async def test_the_store_a_reader_took_before_a_relist_holds_what_the_relist_found(
        client: Client, ns: str, apiserver: Any) -> None:
    """Readers hold the `Store` itself (kube-runtime's reader handle): a relist exchanges its
    contents, so nobody has to look the store up again on the informer."""
    faults = apiserver.require_faults()
    for i in range(2):
        await client.create(cm(f"h{i}"), namespace=ns)
    async with informer(client, ns) as inf:
        await inf.wait_synced(5)
        store = inf.store
        relists = inf.watcher.counters.relists
        faults.fail_next(10_000, 503, resource="configmaps", verbs=("watch",))
        faults.close_watches("configmaps")
        await client.delete(CM, "h0", namespace=ns)
        await client.create(cm("h2"), namespace=ns)
        faults.compact()
        faults.reset()
        await eventually(lambda: inf.watcher.counters.relists > relists and inf.synced and inf.ready,
                         what="relist")
        await eventually(lambda: store.get("h0", ns) is None and store.get("h2", ns) is not None,
                         what="the relist's contents in the store held before it")
        assert inf.store is store and sorted(n for _, n in store.keys()) == ["h1", "h2"]


async def test_cached_objects_are_read_only(client: Client, ns: str) -> None:
    await client.create(cm("ro", labels={"a": "b"}), namespace=ns)
    async with informer(client, ns) as inf:
        await inf.wait_synced(5)
        obj = inf.reader.get("ro", ns)
        assert obj is not None
        with pytest.raises(ReadOnlyError):
            obj["data"]["k"] = "x"  # type: ignore[index]
        with pytest.raises(ReadOnlyError):
            obj["metadata"]["labels"]["a"] = "c"  # type: ignore[index]
        copy = thaw(obj)
        copy["data"]["k"] = "x"
        assert inf.reader.get("ro", ns)["data"]["k"] == "v"  # type: ignore[index]


async def test_default_transform_drops_managed_fields_and_none_keeps_them(client: Client, ns: str) -> None:
    await client.apply(cm("mf"), field_manager="test", namespace=ns)
    raw = await client.get(CM, "mf", namespace=ns)
    assert raw["metadata"].get("managedFields")
    async with informer(client, ns) as stripped, informer(client, ns, transform=None) as kept:
        await stripped.wait_synced(5)
        await kept.wait_synced(5)
        # a list from the API server's watch cache may be a moment older than the apply
        await eventually(lambda: stripped.reader.get("mf", ns) is not None and kept.reader.get("mf", ns) is not None)
        assert "managedFields" not in stripped.reader.get("mf", ns)["metadata"]  # type: ignore[index]
        assert kept.reader.get("mf", ns)["metadata"]["managedFields"]  # type: ignore[index]


class CountingCodec(ZstdDictCodec):
    """The default codec, counting decodes."""

    def __init__(self) -> None:
        super().__init__()
        self.decodes = 0

    def decode(self, stored: Any) -> dict[str, Any]:
        self.decodes += 1
        return super().decode(stored)


async def test_a_delete_is_delivered_without_decoding_the_object_and_old_reads_it(client: Client, ns: str) -> None:
    codec = CountingCodec()
    await client.create(cm("d1", data={"k": "last"}), namespace=ns)
    async with informer(client, ns, codec=codec) as inf:
        await inf.wait_synced(5)
        sub = inf.subscribe(replay=False)
        decoded = codec.decodes
        await client.delete(CM, "d1", namespace=ns)
        (ev,) = await collect(sub, 1)
        assert (ev.type, ev.name, ev.new) == (DELETED, "d1", None)
        assert codec.decodes == decoded  # most subscribers only want the key
        assert ev.old is not None and ev.old["data"] == {"k": "last"}  # read: decoded now, once
        assert ev.obj is ev.old and codec.decodes == decoded + 1
        assert inf.reader.get("d1", ns) is None


async def test_an_informer_nobody_subscribed_to_keeps_its_cache_and_indexes_exact(client: Client, ns: str) -> None:
    def keep(obj: Any) -> bool:
        return (obj["metadata"].get("labels") or {}).get("drop") != "yes"

    inf = informer(client, ns, filter=keep)
    inf.add_index("tier", lambda o: (o["metadata"].get("labels") or {}).get("tier"))
    async with inf:
        await inf.wait_synced(5)
        assert not inf.subscriptions  # writes below build no events
        await client.create(cm("u1", labels={"tier": "web"}), namespace=ns)
        await client.create(cm("u2", labels={"tier": "web"}), namespace=ns)
        await client.create(cm("u3"), namespace=ns)
        await client.patch(CM, "u1", {"metadata": {"labels": {"tier": "db"}}, "data": {"k": "v2"}}, namespace=ns)
        await client.patch(CM, "u3", {"metadata": {"labels": {"drop": "yes"}}}, namespace=ns)
        await client.delete(CM, "u2", namespace=ns)
        await client.create(cm("u4", labels={"tier": "web"}), namespace=ns)
        await eventually(lambda: inf.reader.get("u4", ns) is not None)
        assert sorted(n for _, n in inf.reader.keys()) == ["u1", "u4"]
        u1 = inf.reader.get("u1", ns)
        assert u1 is not None and u1["data"]["k"] == "v2"
        assert inf.store.index_keys("tier", "db") == {(ns, "u1")}
        assert inf.store.index_keys("tier", "web") == {(ns, "u4")}
        late = inf.subscribe()
        assert sorted(names(await collect(late, 2))) == [(ADDED, "u1"), (ADDED, "u4")]


async def test_filter_removes_objects_that_stop_passing(client: Client, ns: str) -> None:
    await client.create(cm("f1", labels={"keep": "yes"}), namespace=ns)
    await client.create(cm("f2"), namespace=ns)

    def keep(obj: Any) -> bool:
        return (obj["metadata"].get("labels") or {}).get("keep") == "yes"

    async with informer(client, ns, filter=keep) as inf:
        await inf.wait_synced(5)
        sub = inf.subscribe(replay=False)
        assert [n for _, n in inf.reader.keys()] == ["f1"]
        await client.patch(CM, "f1", {"metadata": {"labels": {"keep": "no"}}}, namespace=ns)
        await client.patch(CM, "f2", {"metadata": {"labels": {"keep": "yes"}}}, namespace=ns)
        assert names(await collect(sub, 2)) == [(DELETED, "f1"), (ADDED, "f2")]
        assert [n for _, n in inf.reader.keys()] == ["f2"]


async def test_indexes_stay_exact_under_label_changes_and_deletes(client: Client, ns: str) -> None:
    def by_team(obj: Any) -> list[str]:
        team = (obj["metadata"].get("labels") or {}).get("team")
        return [team] if team else []

    # a real owner: on a real cluster the garbage collector deletes dependents of a missing owner
    boss = await client.create(cm("boss"), namespace=ns)
    boss_uid = boss["metadata"]["uid"]
    owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "boss", "uid": boss_uid}
    await client.create(cm("i1", labels={"team": "a"}), namespace=ns)
    dep = cm("i2", labels={"team": "a"})
    dep["metadata"]["ownerReferences"] = [owner]
    await client.create(dep, namespace=ns)
    async with informer(client, ns) as inf:
        inf.add_index("team", by_team)  # before the first list
        inf.add_index("team", by_team)  # same name and function: a no-op
        with pytest.raises(ValueError):
            inf.add_index("team", lambda o: [])
        await inf.wait_synced(5)
        inf.add_index("name-len", lambda o: [str(len(o["metadata"]["name"]))])  # after: built from contents
        sub = inf.subscribe(replay=False)

        def team(key: str) -> list[str]:
            return sorted(o["metadata"]["name"] for o in inf.reader.by_index("team", key))

        assert team("a") == ["i1", "i2"] and team("b") == []
        assert [o["metadata"]["name"] for o in inf.reader.by_index(OWNER_INDEX, boss_uid)] == ["i2"]
        assert inf.reader.index_keys("name-len", "2") == {(ns, "i1"), (ns, "i2")}
        await client.patch(CM, "i1", {"metadata": {"labels": {"team": "b"}}}, namespace=ns)
        await client.delete(CM, "i2", namespace=ns)
        await client.create(cm("i3"), namespace=ns)
        await collect(sub, 3)
        assert team("a") == [] and team("b") == ["i1"]
        assert inf.reader.by_index(OWNER_INDEX, boss_uid) == []
        assert inf.reader.index_keys("name-len", "2") == {(ns, "i1"), (ns, "i3")}
        assert "a" not in inf.reader.index_values("team")


async def test_metadata_only_informer_caches_only_metadata(client: Client, ns: str) -> None:
    await client.create(cm("m1", labels={"x": "y"}, data={"big": "z" * 1000}), namespace=ns)
    async with informer(client, ns, metadata_only=True) as inf:
        await inf.wait_synced(5)
        obj = inf.reader.get("m1", ns)
        assert obj is not None and "data" not in obj
        assert obj["kind"] == "PartialObjectMetadata" and obj["metadata"]["labels"]["x"] == "y"
        sub = inf.subscribe(replay=False)
        await client.create(cm("m2", data={"big": "z"}), namespace=ns)
        (ev,) = await collect(sub, 1)
        assert ev.type == ADDED and ev.new is not None and "data" not in ev.new


async def test_metadata_only_object_refuses_fields_it_does_not_hold(client: Client, ns: str) -> None:
    """Issue 11 item 2: `status`/`spec`/`data` of a metadata-only object raise, naming the option."""
    await client.create(cm("m1", data={"k": "v"}), namespace=ns)
    async with informer(client, ns, metadata_only=True) as inf:
        await inf.wait_synced(5)
        # a list from the watch cache (resourceVersion 0) may be a moment older than the create:
        # the watch then brings it
        obj = await eventually(lambda: inf.reader.get("m1", ns), what="m1 in the cache")
        for read in (lambda: obj["data"], lambda: obj.get("data"), lambda: obj.get("status", {}),
                     lambda: obj["spec"]):
            with pytest.raises(MetadataOnlyError, match="metadata_only=False"):
                read()
        with pytest.raises(LookupError):  # a LookupError, but not a KeyError a caller would swallow
            obj["status"]
        assert not isinstance(MetadataOnlyError("status", obj), KeyError)
        assert obj["metadata"]["name"] == "m1" and obj.get("metadata") is not None
    async with informer(client, ns) as full:
        await full.wait_synced(5)
        await eventually(lambda: full.reader.get("m1", ns) is not None)  # the watch cache may lag the create
        whole = full.reader.get("m1", ns)
        assert whole is not None and whole.get("status") is None and whole["data"]["k"] == "v"


async def test_forbidden_list_is_not_ready_with_the_reason_and_logged(
        client: Client, ns: str, apiserver: Any, caplog: pytest.LogCaptureFixture) -> None:
    from kubeloop.cache import SharedCache

    faults = apiserver.require_faults()
    await client.create(cm("p1"), namespace=ns)
    faults.fail_next(10_000, 403, resource="configmaps", verbs=("list", "watch"))
    caplog.set_level(logging.WARNING, logger="kubeloop")
    async with SharedCache(client, watch_config=FAST) as cache:
        h = await cache.informer_for("default", CM, namespace=ns)
        with pytest.raises(InformerNotReady) as exc:
            await h.wait_synced(0.5)
        assert "forbidden" in str(exc.value).lower() and "403" in str(exc.value)
        assert not h.ready and h.reason.startswith("forbidden") and "injected fault (403)" in h.reason
        assert any("FORBIDDEN" in r.getMessage() and r.levelno >= logging.ERROR for r in caplog.records)
        assert str(h.scope) in cache.not_ready()
        faults.reset()  # permission granted: it recovers on its own
        await h.wait_synced(5)
        assert h.ready and h.reason == "" and h.get("p1", ns) is not None
        assert cache.ready
        h.release()


def widget_crd(group: str) -> dict[str, Any]:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": schema}}]},
    }


async def test_kind_whose_crd_appears_later_starts_syncing_without_blocking_others(
        client: Client, ns: str, caplog: pytest.LogCaptureFixture) -> None:
    from kubeloop.cache import SharedCache

    group = f"kl{secrets.token_hex(3)}.example.com"
    caplog.set_level(logging.INFO, logger="kubeloop")
    async with SharedCache(client, watch_config=FAST) as cache:
        widgets = await cache.informer_for("default", f"{group}/v1/Widget", namespace=ns)
        cms = await cache.informer_for("default", CM, namespace=ns)
        await cms.wait_synced(5)  # unaffected by the missing kind
        await asyncio.sleep(0.2)
        assert not widgets.ready and "waiting for" in widgets.reason and "CRD" in widgets.reason
        assert any("Widget" in r.getMessage() for r in caplog.records)
        await client.create(widget_crd(group))
        try:
            await widgets.wait_synced(10)
            assert widgets.ready
            again = await cache.informer_for("default", f"{group}/v1/Widget", namespace=ns)
            assert again.informer is widgets.informer  # now resolvable: still the same informer
            again.release()
            sub = widgets.subscribe()
            w = {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"n": 1}}
            await client.create(w, namespace=ns)
            (ev,) = await collect(sub, 1)
            assert ev.type == ADDED and ev.name == "w1" and ev.new is not None and ev.new["spec"]["n"] == 1
        finally:
            await client.delete("apiextensions.k8s.io/v1/CustomResourceDefinition", f"widgets.{group}")
        widgets.release()
        cms.release()


async def test_a_waiting_informer_is_woken_when_discovery_serves_the_kind(client: Client, ns: str) -> None:
    from kubeloop.cache import SharedCache

    group = f"kl{secrets.token_hex(3)}.example.com"
    # default watch backoff (0.8 s doubling to 30 s): only the discovery poll makes this quick
    async with SharedCache(client, discovery_poll_interval=0.05) as cache:
        widgets = await cache.informer_for("default", f"{group}/v1/Widget", namespace=ns)
        await asyncio.sleep(2.5)  # a few failed attempts: the watch backoff is now >= 1.6 s
        assert not widgets.ready
        await client.create(widget_crd(group))
        try:
            loop = asyncio.get_running_loop()
            start = loop.time()
            await widgets.wait_synced(10)
            assert loop.time() - start < 1.0
        finally:
            await client.delete("apiextensions.k8s.io/v1/CustomResourceDefinition", f"widgets.{group}")
        widgets.release()


async def test_close_stops_and_waits_like_the_manager(client: Client, ns: str) -> None:
    await client.create(cm("a"), namespace=ns)
    inf = informer(client, ns)
    await inf.close()  # never started: returns at once
    running = informer(client, ns)
    task = asyncio.create_task(running.run())
    await running.wait_synced(5)
    await running.close()
    assert task.done() and running.stopped and not running.ready
    await task


def _metric(function: str) -> float:
    from kubeloop.metrics import REGISTRY

    value = REGISTRY.get_sample_value("kubeloop_cache_object_errors_total",
                                      {"resource": "core/v1/configmaps", "function": function})
    return value or 0.0


async def test_a_raising_transform_or_index_keeps_the_last_good_version_and_says_so(
        client: Client, ns: str, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 11 item 7: a transform or index function that raises neither deletes nor silently
    freezes the object: the last good version stays, the informer is not ready naming the object
    and the function, one ERROR per object, and a metric counts it."""

    def picky(obj: dict[str, Any]) -> dict[str, Any]:
        if (obj.get("data") or {}).get("bad") == "transform":
            raise ValueError("cannot transform this")
        return obj

    def by_bad(obj: Any) -> list[str]:
        if (obj.get("data") or {}).get("bad") == "index":
            raise KeyError("no such field")
        return [obj["metadata"]["name"]]

    caplog.set_level(logging.ERROR, logger="kubeloop")
    await client.create(cm("t1", data={"v": "1"}), namespace=ns)
    await client.create(cm("t2", data={"v": "1"}), namespace=ns)
    before_t, before_i = _metric("transform"), _metric("index:by-bad")
    async with informer(client, ns, transform=picky) as inf:
        inf.add_index("by-bad", by_bad)
        await inf.wait_synced(5)
        assert inf.ready
        for i in range(3):  # three failing versions of t1: still one ERROR
            await client.patch(CM, "t1", {"data": {"v": str(i), "bad": "transform"}}, namespace=ns)
        await client.patch(CM, "t2", {"data": {"v": "2", "bad": "index"}}, namespace=ns)
        await eventually(lambda: not inf.ready and ("t1" in inf.reason or "t2" in inf.reason), what="not ready")
        await eventually(lambda: _metric("transform") >= before_t + 3 and _metric("index:by-bad") >= before_i + 1,
                         what="counted")
        reason = inf.reason
        assert ("picky" in reason and f"{ns}/t1" in reason) or ("by-bad" in reason and f"{ns}/t2" in reason)
        assert "1 more" in reason
        t1, t2 = inf.reader.get("t1", ns), inf.reader.get("t2", ns)  # the last good versions
        assert t1 is not None and t1["data"]["v"] == "1" and t2 is not None and t2["data"]["v"] == "1"
        errors = [r for r in caplog.records if r.levelno == logging.ERROR and "t1" in r.getMessage()]
        assert len(errors) == 1 and "picky" in errors[0].getMessage()
        # fixed objects make it ready again
        await client.patch(CM, "t1", {"data": {"v": "9", "bad": None}}, namespace=ns)
        await client.patch(CM, "t2", {"data": {"v": "9", "bad": None}}, namespace=ns)
        await eventually(lambda: inf.ready, what="ready again")
        t1 = inf.reader.get("t1", ns)
        assert t1 is not None and t1["data"]["v"] == "9" and inf.reader.by_index("by-bad", "t2")


async def test_a_cache_whose_watch_keeps_failing_is_not_ready_with_the_reason(client: Client, ns: str,
                                                                             emulator: Any) -> None:
    """Issue 11 item 10: /readyz must not stay green on a stuck cache (its reason is what /readyz shows)."""
    config = WatchConfig(backoff_initial=0.02, backoff_max=0.1, min_watch_duration=0.0, healthy_watch_duration=0.2)
    await client.create(cm("s1"), namespace=ns)
    source = ClientSource(client, CM, namespace=ns, label_selector=MINE)
    async with Informer(source, resource="core/v1/configmaps", watch_config=config) as inf:
        inf.stuck_after = 0.5
        await inf.wait_synced(5)
        assert inf.ready
        emulator.faults.fail_next(100_000, 500, resource="configmaps", verbs=("list", "watch"))
        emulator.faults.close_watches("configmaps")
        await eventually(lambda: not inf.ready, what="not ready once stuck")
        assert "watch failing for" in inf.reason and "500" in inf.reason
        assert inf.reader.get("s1", ns) is not None  # still serving what it had
        emulator.faults.reset()
        await client.create(cm("s2"), namespace=ns)  # progress on the new watch
        await eventually(lambda: inf.reader.get("s2", ns) is not None, what="watching again")
        await eventually(lambda: inf.ready, what="ready again")


async def test_streamed_lists_are_opt_in_and_fall_back_to_list_when_refused(client: Client, ns: str,
                                                                             emulator: Any) -> None:
    """Issue 11 item 5, issue 32: by default an informer lists as client-go does (one LIST, no
    sendInitialEvents attempt that a 1.24 server would refuse); with `streaming_list` it streams
    where the server can (the emulator with its WatchList feature gate: KUBELOOP_TEST_FEATURE_GATES),
    and a server that refuses (422, as kube-apiserver 1.24 answers for resourceVersionMatch on a
    watch: the emulator without the gate) gets a LIST instead."""
    await client.create(cm("l1"), namespace=ns)
    streams = emulator.feature_gates.enabled("WatchList")
    source = ClientSource(client, CM, namespace=ns, label_selector=MINE)
    async with Informer(source, resource="core/v1/configmaps") as inf:
        await inf.wait_synced(5)
        assert inf.reader.get("l1", ns) is not None
        assert inf.watcher.counters.list_requests == 1 and inf.watcher.counters.streaming_fallbacks == 0
    streaming = WatchConfig(streaming_list=True)
    source = ClientSource(client, CM, namespace=ns, label_selector=MINE)
    async with Informer(source, resource="core/v1/configmaps", watch_config=streaming) as inf:
        await inf.wait_synced(5)
        assert inf.reader.get("l1", ns) is not None
        assert inf.watcher.machine.streaming_supported is streams
        assert (inf.watcher.counters.list_requests == 0) is streams
    if not streams:
        return
    emulator.faults.fail_next(1, 422, resource="configmaps", verbs=("watch",))  # a server refusing once
    source = ClientSource(client, CM, namespace=ns, label_selector=MINE)
    async with Informer(source, resource="core/v1/configmaps", watch_config=streaming) as inf:
        await inf.wait_synced(5)
        assert inf.reader.get("l1", ns) is not None
        assert inf.watcher.counters.list_requests >= 1 and not inf.watcher.machine.streaming_supported


async def test_a_list_that_never_answers_hits_its_deadline_and_is_retried(client: Client, ns: str,
                                                                        emulator: Any) -> None:
    """Issue 11 item 10: a LIST has a deadline (the client's request timeout per page; a streaming
    list has `list_deadline`): a server that does not answer leaves the informer retrying with the
    reason, never hanging."""
    await client.create(cm("d1"), namespace=ns)
    slow = Client(load_kubeconfig(emulator.kubeconfig), qps=None, timeout=0.3)
    try:
        emulator.faults.delay(1.0, resource="configmaps")
        source = ClientSource(slow, CM, namespace=ns, label_selector=MINE)
        async with Informer(source, resource="core/v1/configmaps", watch_config=FAST) as inf:
            await eventually(lambda: "timed out" in inf.reason, what="the list timed out")
            assert not inf.synced
            emulator.faults.delay(0)
            await inf.wait_synced(5)
            assert inf.reader.get("d1", ns) is not None
    finally:
        emulator.faults.delay(0)
        await slow.close()


@contextlib.asynccontextmanager
async def ignoring_send_initial_events(upstream: str) -> AsyncIterator[str]:
    """A proxy in front of the emulator that drops ``sendInitialEvents`` (and its
    ``resourceVersionMatch``) from every request: the emulator then answers a watch as a server that
    ignores the parameter does, with the objects as ADDED events and no initial-events-end bookmark."""
    session = aiohttp.ClientSession(auto_decompress=False)

    async def forward(request: web.Request) -> web.StreamResponse:
        query = {k: v for k, v in request.query.items() if k not in ("sendInitialEvents", "resourceVersionMatch")}
        headers = {k: v for k, v in request.headers.items() if k.lower() in ("accept", "authorization", "content-type")}
        async with session.request(request.method, upstream + request.path, params=query, headers=headers,
                                   data=await request.read()) as up:
            resp = web.StreamResponse(status=up.status, headers={"Content-Type": up.headers.get("Content-Type", "")})
            await resp.prepare(request)
            async for chunk in up.content.iter_any():
                await resp.write(chunk)
            return resp

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", forward)
    try:
        async with serve(app) as url:
            yield url
    finally:
        await session.close()


async def test_a_quiet_resource_syncs_by_list_deadline_on_a_server_that_ignores_send_initial_events(
        client: Client, ns: str, emulator: Any) -> None:
    """Issue 31 item 7: the streaming list's deadline was checked only when an event arrived, so a
    quiet resource on a server that ignores sendInitialEvents (no end bookmark, no later event) stayed
    unsynced until the watch ended (5-10 minutes). The watcher now honours the machine's timer."""
    await client.create(cm("q1"), namespace=ns)
    async with ignoring_send_initial_events(emulator.url) as url:
        config = dataclasses.replace(load_kubeconfig(emulator.kubeconfig), server=url)
        async with Client(config, qps=None) as proxied:
            source = ClientSource(proxied, CM, namespace=ns, label_selector=MINE)
            streaming = dataclasses.replace(FAST, streaming_list=True, list_deadline=1.0)
            async with Informer(source, resource="core/v1/configmaps", watch_config=streaming) as inf:
                await inf.wait_synced(8)
                assert inf.reader.get("q1", ns) is not None
                m = inf.watcher.machine
                assert m.counters.streaming_fallbacks == 1 and not m.streaming_supported
                assert m.counters.list_requests >= 1
