"""SharedCache integration tests over real HTTP: sharing, subset scopes, collection, clusters."""

from __future__ import annotations

import asyncio
import gc
import weakref
from typing import Any

import pytest

from kubeloop.cache import MetadataOnlyError, Reader, SharedCache, drop_fields
from kubeloop.client import Client
from kubeloop.meta import ADDED, DELETED, MODIFIED, RESYNC

from .informer_support import CM, FAST, MINE, client, cm, collect, eventually, names, ns, open_watches

__all__ = ["client", "ns"]


async def test_many_readers_of_one_scope_share_one_watch(client: Client, ns: str, apiserver: Any) -> None:
    await client.create(cm("one"), namespace=ns)
    async with SharedCache(client, watch_config=FAST) as cache:
        handles = [await cache.informer_for("default", CM, namespace=ns, label_selector=MINE) for _ in range(5)]
        # the plural names the same scope
        handles.append(await cache.informer_for("default", "v1/configmaps", namespace=ns, label_selector=MINE))
        await asyncio.gather(*(h.wait_synced(5) for h in handles))
        assert len({id(h.informer) for h in handles}) == 1
        subs = [h.subscribe() for h in handles]
        for s in subs:
            assert names(await collect(s, 1)) == [(ADDED, "one")]
        if apiserver.is_emulator:
            await eventually(lambda: open_watches(apiserver) == 1, what="one watch")
            await asyncio.sleep(0.1)
            assert open_watches(apiserver) == 1
        assert len(cache.informers()) == 1 and cache.stats()[0]["users"] == 6
        for h in handles:
            h.release()


async def test_every_read_front_is_one_reader_and_answers_alike(client: Client, ns: str) -> None:
    await client.create(cm("one", labels={"team": "a"}), namespace=ns)
    async with SharedCache(client, watch_config=FAST) as cache:
        h = await cache.informer_for("default", CM, namespace=ns)
        await h.wait_synced(5)
        # a list from the watch cache may be a moment older than the create: it can arrive by watch
        await eventually(lambda: (ns, "one") in h.keys(), what="the object in the cache")
        h.add_index("team", lambda o: (o["metadata"].get("labels") or {}).get("team"))
        fronts: list[Reader] = [h, h.reader, h.informer.reader, h.informer.store]
        for r in fronts:
            assert isinstance(r, Reader)
            # only this test's objects: a real cluster has its own ConfigMaps in every namespace
            assert (ns, "one") in r.keys() and r.index_keys("team", "a") == {(ns, "one")}
            assert r.get("one", ns) == r.list(ns, label_selector="team=a")[0] == r.by_index("team", "a")[0]
        h.release()


async def test_subset_scopes_are_served_locally_and_track_moves(client: Client, ns: str, apiserver: Any) -> None:
    await client.create(cm("in", labels={"tier": "web", "env": "prod"}), namespace=ns)
    await client.create(cm("out", labels={"tier": "db"}), namespace=ns)
    async with SharedCache(client, watch_config=FAST) as cache:
        broad = await cache.informer_for("default", CM)  # all namespaces
        await broad.wait_synced(5)
        in_ns = await cache.informer_for("default", CM, namespace=ns)
        web = await cache.informer_for("default", CM, namespace=ns, label_selector="tier=web")
        prod_web = await cache.informer_for("default", CM, namespace=ns, label_selector={"tier": "web", "env": "prod"})
        by_name = await cache.informer_for("default", CM, namespace=ns, field_selector="metadata.name=in")
        for h in (in_ns, web, prod_web, by_name):
            assert h.informer is broad.informer and h.shared_from == broad.scope
            await h.wait_synced(1)
        if apiserver.is_emulator:
            await eventually(lambda: open_watches(apiserver) == 1, what="one watch")
        # only this test's objects: a real cluster has its own ConfigMaps in every namespace; a list
        # from the API server's watch cache may be a moment older than the creates (they arrive by watch)
        await eventually(lambda: sorted(n for _, n in in_ns.reader.keys() if n in ("in", "out")) == ["in", "out"],
                         what="both ConfigMaps")
        assert [o["metadata"]["name"] for o in web.list()] == ["in"]
        assert web.get("out", ns) is None and web.get("in", ns) is not None
        assert len(prod_web.reader) == 1 and [n for _, n in by_name.reader.keys()] == ["in"]
        assert web.reader.list(label_selector="env=prod")[0]["metadata"]["name"] == "in"
        assert web.reader.list(namespace="elsewhere") == []
        sub = web.subscribe()
        assert names(await collect(sub, 1)) == [(ADDED, "in")]
        await client.patch(CM, "out", {"metadata": {"labels": {"tier": "web"}}}, namespace=ns)  # moves in
        await client.patch(CM, "in", {"metadata": {"labels": {"tier": "cache"}}}, namespace=ns)  # moves out
        await client.patch(CM, "out", {"data": {"k": "v2"}}, namespace=ns)  # changes inside
        await client.patch(CM, "in", {"data": {"k": "v3"}}, namespace=ns)  # changes outside: not seen
        await client.delete(CM, "out", namespace=ns)
        got = await collect(sub, 4)
        assert names(got) == [(ADDED, "out"), (DELETED, "in"), (MODIFIED, "out"), (DELETED, "out")]
        assert got[1].old is not None and got[1].old["metadata"]["labels"]["tier"] == "web"
        await asyncio.sleep(0.05)
        assert sub.get_nowait() is None
        assert web.reader.keys() == []
        await asyncio.sleep(0.1)
        if apiserver.is_emulator:
            assert open_watches(apiserver) == 1
        for h in (broad, in_ns, web, prod_web, by_name):
            h.release()


async def test_no_sharing_across_transforms_or_representations(client: Client, ns: str, apiserver: Any) -> None:
    await client.create(cm("t", data={"k": "v"}), namespace=ns)
    no_data = drop_fields("data")
    async with SharedCache(client, watch_config=FAST) as cache:
        stripped = await cache.informer_for("default", CM, namespace=ns, transform=no_data)
        meta = await cache.informer_for("default", CM, namespace=ns, metadata_only=True)
        narrower = await cache.informer_for("default", CM, namespace=ns, label_selector="a=b", transform=no_data)
        await cache.wait_synced(stripped, meta, narrower, timeout=5)
        assert stripped.informer is not meta.informer  # another transform: never shared
        assert narrower.informer is stripped.informer  # same transform: shareable
        # a list from the API server's watch cache may be a moment older than the create
        await eventually(lambda: stripped.get("t", ns) is not None and meta.get("t", ns) is not None,
                         what="the ConfigMap in both informers")
        assert "data" not in stripped.get("t", ns)  # type: ignore[operator]
        assert meta.get("t", ns)["kind"] == "PartialObjectMetadata"  # type: ignore[index]
        if apiserver.is_emulator:
            await eventually(lambda: open_watches(apiserver) == 2, what="two watches")
            await asyncio.sleep(0.1)
            assert open_watches(apiserver) == 2
        for h in (stripped, meta, narrower):
            h.release()


@pytest.mark.parametrize("full_first", [True, False])
async def test_a_metadata_only_scope_is_served_by_a_full_informer_of_the_kind(
        client: Client, ns: str, apiserver: Any, full_first: bool) -> None:
    """Issue 31 item 9: a metadata-only ``owns()`` beside a full informer of the same kind opened a
    second watch. It is served by the full informer (whichever came first: a later full informer
    takes the metadata-only one's users over), and reads and events still give PartialObjectMetadata,
    exactly what its own watch would (a field it does not hold still raises MetadataOnlyError)."""
    await client.create(cm("m1", data={"k": "v"}), namespace=ns)
    async with SharedCache(client, watch_config=FAST) as cache:
        if full_first:
            full = await cache.informer_for("default", CM, namespace=ns, label_selector=MINE)
            await full.wait_synced(5)
        meta = await cache.informer_for("default", CM, namespace=ns, label_selector=MINE, metadata_only=True)
        await meta.wait_synced(5)
        sub = meta.subscribe()
        if not full_first:
            full = await cache.informer_for("default", CM, namespace=ns, label_selector=MINE)
            await full.wait_synced(5)
            await eventually(lambda: meta.informer is full.informer, what="taken over by the full informer")
        assert meta.informer is full.informer and meta.shared_from == full.scope
        if apiserver.is_emulator:
            await eventually(lambda: open_watches(apiserver) == 1, what="one watch")
        # a list from the watch cache may be a moment older than the create: it can arrive by watch
        await eventually(lambda: full.get("m1", ns) is not None, what="m1 in the cache")
        assert full.get("m1", ns)["data"] == {"k": "v"}  # type: ignore[index]
        got = meta.get("m1", ns)
        assert got is not None and got["kind"] == "PartialObjectMetadata" and got["metadata"]["name"] == "m1"
        with pytest.raises(MetadataOnlyError):
            got["data"]
        assert [o["kind"] for o in meta.list()] == ["PartialObjectMetadata"]
        replayed = [e for e in sub.drain() if e.type != RESYNC]  # the initial list (or the take-over's resync)
        assert replayed and all(e.obj is not None and e.obj["kind"] == "PartialObjectMetadata" for e in replayed)
        await client.patch(CM, "m1", {"data": {"k": "v2"}}, namespace=ns)
        await client.delete(CM, "m1", namespace=ns)
        got_events = await collect(sub, 2)
        assert names(got_events) == [(MODIFIED, "m1"), (DELETED, "m1")]
        modified, deleted = got_events
        assert modified.new is not None and modified.new["kind"] == "PartialObjectMetadata"
        assert modified.old is not None and modified.old["kind"] == "PartialObjectMetadata"
        assert deleted.old is not None and deleted.old["kind"] == "PartialObjectMetadata"
        for h in (meta, full):
            h.release()


async def test_unused_informer_is_collected_after_the_grace_period(client: Client, ns: str, apiserver: Any) -> None:
    await client.create(cm("g"), namespace=ns)
    async with SharedCache(client, watch_config=FAST, grace_period=0.2) as cache:
        h = await cache.informer_for("default", CM, namespace=ns)
        await h.wait_synced(5)
        first = h.informer
        sub = h.subscribe()
        h.release()
        h.release()  # idempotent
        assert sub.closed
        with pytest.raises(RuntimeError):
            h.subscribe()
        await asyncio.sleep(0.05)
        again = await cache.informer_for("default", CM, namespace=ns)  # within the grace period: reused
        assert again.informer is first
        again.release()
        ref = weakref.ref(first)
        store_ref = weakref.ref(first.store)
        del first, h, again, sub
        await eventually(lambda: not cache.informers(), what="collection")
        if apiserver.is_emulator:
            await eventually(lambda: open_watches(apiserver) == 0, what="watch closed")
        await asyncio.sleep(0.05)
        gc.collect()
        assert ref() is None and store_ref() is None  # memory released
        fresh = await cache.informer_for("default", CM, namespace=ns)
        await fresh.wait_synced(5)
        assert fresh.get("g", ns) is not None
        fresh.release()


async def test_leaving_the_cache_stops_every_informer(client: Client, ns: str, apiserver: Any) -> None:
    async with SharedCache(client, watch_config=FAST, grace_period=60) as cache:
        a = await cache.informer_for("default", CM, namespace=ns)
        b = await cache.informer_for("default", "v1/Secret", namespace=ns)
        await cache.wait_synced(timeout=5)
        sub = a.subscribe()
    assert a.informer.stopped and b.informer.stopped and sub.closed
    if apiserver.is_emulator:
        await eventually(lambda: not apiserver.stats()["open_watches"], what="no watches")
    with pytest.raises(RuntimeError):
        await cache.informer_for("default", CM)


async def test_clusters_are_part_of_every_key_and_event(client: Client, ns: str, apiserver: Any) -> None:
    from kubeloop.config import load_kubeconfig

    await client.create(cm("c"), namespace=ns)
    other = Client(load_kubeconfig(apiserver.kubeconfig), qps=None)
    try:
        async with SharedCache({"east": client}, watch_config=FAST) as cache:
            with pytest.raises(KeyError):
                await cache.informer_for("west", CM, namespace=ns)
            cache.add_cluster("west", other)  # added later
            # the test's own objects: a real cluster has kube-root-ca.crt in every namespace, and a
            # list from its watch cache comes in no particular order
            east = await cache.informer_for("east", CM, namespace=ns, label_selector=MINE)
            west = await cache.informer_for("west", CM, namespace=ns, label_selector=MINE)
            await cache.wait_synced(timeout=5)
            assert east.informer is not west.informer
            assert east.reader.cluster == "east" and west.reader.cluster == "west"
            (ev_e,) = await collect(east.subscribe(), 1)
            (ev_w,) = await collect(west.subscribe(), 1)
            assert ev_e.key == ("east", ns, "c") and ev_w.key == ("west", ns, "c")
            assert sorted(cache.clusters) == ["east", "west"]
            east.release()
            west.release()
    finally:
        await other.close()


async def test_a_broad_informer_opened_later_takes_the_narrower_users_over(
        client: Client, ns: str, emulator: Any) -> None:
    """Issue 11 item 4: sharing does not depend on order. A namespace-wide informer opened after a
    labelled one takes its users (reads and subscriptions) over, and the narrower watch is closed."""
    await client.create(cm("n1"), namespace=ns)
    await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other"}}, namespace=ns)
    before = open_watches(emulator)
    async with SharedCache(client, watch_config=FAST, grace_period=60) as cache:
        narrow = await cache.informer_for("default", CM, namespace=ns, label_selector=MINE)
        await narrow.wait_synced(5)
        sub = narrow.subscribe()
        assert sorted(names(await collect(sub, 1))) == [(ADDED, "n1")]
        await eventually(lambda: open_watches(emulator) == before + 1, what="the narrow watch")
        broad = await cache.informer_for("default", CM, namespace=ns)
        await broad.wait_synced(5)
        await eventually(lambda: narrow.informer is broad.informer, what="the narrow handle moved")
        await eventually(lambda: open_watches(emulator) == before + 1, what="one watch left")
        assert len(cache.informers()) == 1 and narrow.shared_from == broad.scope
        assert [o["metadata"]["name"] for o in narrow.list()] == ["n1"]  # still narrowed
        assert narrow.get("other", ns) is None and broad.get("other", ns) is not None
        await client.create(cm("n2"), namespace=ns)
        await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other2"}}, namespace=ns)
        await client.delete(CM, "n1", namespace=ns)
        seen: dict[str, bool] = {}

        def done() -> bool:
            for ev in sub.drain():
                if ev.type in (ADDED, MODIFIED):
                    seen[ev.name] = True
                elif ev.type == DELETED:
                    seen.pop(ev.name, None)
            return set(seen) == {"n2"}
        await eventually(done, what="the subscription follows the broad informer")
        narrow.release()
        assert cache.stats()[0]["users"] == 1
        broad.release()
