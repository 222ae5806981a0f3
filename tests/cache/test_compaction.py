"""Deferred compaction: a list is loaded in the codec's cheap form and compacted afterwards.

Reads must be identical before, during and after compaction, whatever happens to the objects
meanwhile (updates, deletes, relists); the informer's compactor must finish on its own.
"""

from __future__ import annotations

import asyncio
import copy
import math
import time
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.cache import OWNER_INDEX, ClientSource, Compactor, Informer, Store, thaw
from kubeloop.cache._codec import CODECS
from kubeloop.cache._entry import record, record_form, record_rv, with_form
from kubeloop.cache._store import LOAD_COMPACT_SIZE, IndexFunctionError
from kubeloop.client import Client
from kubeloop.testing import VirtualClock

from .informer_support import CM, FAST, MINE, client, cm, eventually, ns

__all__ = ["client", "ns"]


def pod(i: int, rv: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": f"p{i}", "namespace": f"ns{i % 3}", "uid": f"00000000-0000-4000-8000-{i:012x}",
            "resourceVersion": str(rv), "labels": {"app": f"a{i % 4}", "tier": "web"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"rs{i % 5}",
                                 "uid": f"rs-uid-{i % 5}"}],
        },
        "spec": {"nodeName": f"node-{i % 7}", "containers": [{"name": "c", "image": f"img:{i}"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def snapshot(store: Store) -> dict[tuple[str, str], Any]:
    return {k: thaw(store.get_key(k)) for k in store.keys()}


COMPRESSING = ("zstd", "zlib")


@pytest.mark.parametrize("name", COMPRESSING)
def test_the_deferred_form_decodes_and_compacts_without_decoding(name: str) -> None:
    codec = CODECS[name](train_after=4)  # type: ignore[call-arg]
    objs = [pod(i) for i in range(20)]
    cheap = [codec.encode_deferred(o) for o in objs]
    assert [codec.decode(c) for c in cheap] == objs
    assert all(len(c) == len(orjson.dumps(o)) + 1 for c, o in zip(cheap, objs, strict=True))
    compacted = [codec.compact(c) for c in cheap]
    # the first train_after objects are the dictionary's samples and stay JSON; the rest shrink
    assert compacted[:4] == cheap[:4]
    assert all(len(c) < len(r) / 2 for c, r in zip(compacted[4:], cheap[4:], strict=True))
    assert [codec.decode(c) for c in compacted] == objs
    assert [codec.compact(c) for c in compacted[4:]] == compacted[4:]  # already compact: unchanged


@pytest.mark.parametrize("codec", ["zstd", "zlib", "json", "dict"])
def test_load_then_compact_reads_the_same_as_apply(codec: str) -> None:
    objs = [pod(i) for i in range(200)]
    applied = Store(codec=codec)
    loaded = Store(codec=codec)
    applied.add_index("node", lambda o: o["spec"]["nodeName"])
    loaded.add_index("node", lambda o: o["spec"]["nodeName"])
    for o in objs:
        applied.apply(copy.deepcopy(o))
        loaded.load(copy.deepcopy(o))
    assert loaded.pending_compaction == (200 if codec in COMPRESSING else 0)
    assert loaded.resource_version == "1"

    def same() -> None:
        assert snapshot(loaded) == snapshot(applied)
        assert loaded.list_keys(label_selector="app=a1") == applied.list_keys(label_selector="app=a1")
        for index, key in (("node", "node-3"), (OWNER_INDEX, "rs-uid-2")):
            assert loaded.index_keys(index, key) == applied.index_keys(index, key) != set()
        assert loaded.uid_of("p5", "ns2") == "00000000-0000-4000-8000-000000000005"

    same()
    # change some objects before they are compacted: compaction must not resurrect old data
    for i in range(0, 200, 7):
        newer = pod(i, rv=2)
        newer["spec"]["nodeName"] = "moved"
        loaded.apply(copy.deepcopy(newer))
        applied.apply(newer)
    for i in range(3, 200, 11):
        loaded.delete(f"ns{i % 3}", f"p{i}")
        applied.delete(f"ns{i % 3}", f"p{i}")
    oldest = loaded.compact(limit=50)
    # 50 compacted; listed versions replaced or deleted meanwhile are skipped, not counted
    if codec in COMPRESSING:
        assert oldest is not None and 0 < loaded.pending_compaction <= 150
    else:
        assert oldest is None and loaded.pending_compaction == 0
    same()
    assert loaded.compact() is None and loaded.pending_compaction == 0
    same()
    if codec in COMPRESSING:
        assert loaded.stats()["payload_bytes"] < applied.stats()["payload_bytes"] * 1.1


def big_pod(i: int) -> dict[str, Any]:
    """A pod whose JSON is over LOAD_COMPACT_SIZE (a Pod from a real cluster usually is)."""
    o = pod(i)
    o["metadata"]["annotations"] = {"note": f"{i:05d} " + "configuration text " * 120}
    return o


@pytest.mark.parametrize("codec", COMPRESSING)
def test_large_listed_objects_are_compressed_as_they_load_small_ones_wait(codec: str) -> None:
    s = Store(codec=codec)
    assert len(s.codec.encode_deferred(big_pod(0))) >= LOAD_COMPACT_SIZE > len(s.codec.encode_deferred(pod(0)))
    train = s.codec.train_after  # type: ignore[attr-defined]
    bigs = [big_pod(i) for i in range(train + 20)]
    smalls = [pod(i) for i in range(1000, 1010)]
    for o in bigs + smalls:
        s.load(copy.deepcopy(o))
    # the dictionary's samples stay JSON until the compactor; after them, large objects are small at once
    assert s.pending_compaction == train + len(smalls)
    assert s.stats()["payload_bytes"] < sum(len(orjson.dumps(o)) for o in bigs) / 2
    expected = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in bigs + smalls}
    assert snapshot(s) == expected
    assert s.compact() is None and s.pending_compaction == 0 and snapshot(s) == expected

    never = Store(codec=codec)
    never.load_compact_size = math.inf
    for o in bigs:
        never.load(copy.deepcopy(o))
    assert never.pending_compaction == len(bigs)


@pytest.mark.parametrize("codec", COMPRESSING)
def test_a_list_longer_than_the_cheap_limit_is_compressed_as_it_loads(codec: str) -> None:
    s = Store(codec=codec)
    objs = [pod(i) for i in range(300)]
    sizes = [len(s.codec.encode_deferred(o)) for o in objs]
    assert max(sizes) < LOAD_COMPACT_SIZE  # small objects: only the limit compresses them at load
    s.load_cheap_limit = sum(sizes[:100]) - 1  # reached by the 100th object
    for o in objs:
        s.load(copy.deepcopy(o))
    # 100 wait uncompressed; then every object is compressed at once, but the codec's first
    # `train_after` calls keep theirs as the samples its dictionary is learnt from (queued too)
    train = s.codec.train_after  # type: ignore[attr-defined]
    assert s.pending_compaction == 100 + train
    expected = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objs}
    assert snapshot(s) == expected
    cheap = sum(sizes[:100 + train])
    assert cheap < s.stats()["payload_bytes"] < cheap + sum(sizes[100 + train:]) / 2
    # compacting what waits frees the limit again: the next list waits uncompressed as the first did
    assert s.compact() is None and s.pending_compaction == 0 and snapshot(s) == expected
    for o in [pod(i) for i in range(1000, 1050)]:
        s.load(o)
    assert s.pending_compaction == 50

    unlimited = Store(codec=codec)
    unlimited.load_cheap_limit = math.inf
    for o in objs:
        unlimited.load(copy.deepcopy(o))
    assert unlimited.pending_compaction == len(objs)


def test_a_codec_fault_while_loading_keeps_the_object_as_json_for_the_compactor() -> None:
    s = Store(codec="zstd")
    for i in range(20):
        s.load(big_pod(i))
    good = s.pending_compaction

    def broken(stored: Any) -> Any:
        raise RuntimeError("codec fault")

    s._compact = broken  # a codec that fails from now on
    s.load(big_pod(99))
    assert s.pending_compaction == good + 1
    assert thaw(s.get("p99", "ns0")) == big_pod(99)
    with pytest.raises(RuntimeError, match="codec fault"):  # the compactor reports it
        s.compact()
    assert thaw(s.get("p99", "ns0")) == big_pod(99)


def test_load_of_an_existing_name_replaces_it_and_a_failing_index_changes_nothing() -> None:
    s = Store()
    s.load(pod(1))
    s.load(pod(1, rv=5))
    assert len(s) == 1 and s.resource_version_of("p1", "ns1") == "5"

    def bad(o: Any) -> str:
        if o["metadata"]["name"] == "p2":
            raise RuntimeError("boom")
        return "k"

    s.add_index("bad", bad)
    with pytest.raises(IndexFunctionError, match="index 'bad'") as failed:
        s.load(pod(2))
    assert isinstance(failed.value.__cause__, RuntimeError)
    assert s.keys() == [("ns1", "p1")] and s.index_keys("bad", "k") == {("ns1", "p1")}
    with pytest.raises(ValueError):
        s.load({"metadata": {}})


@settings(max_examples=200, deadline=None)
@given(st.text() | st.text(min_size=255, max_size=300) | st.sampled_from(["", "0", "12345", "\u00e9" * 200]),
       st.binary(max_size=64), st.binary(max_size=64))
def test_a_record_keeps_its_resource_version_and_form_exactly(rv: str, form: bytes, other: bytes) -> None:
    rec = record(rv, form)
    assert type(rec) is bytes and record_rv(rec) == rv and record_form(rec) == form
    moved = with_form(rec, other)  # compaction: another form of the same version
    assert record_rv(moved) == rv and record_form(moved) == other
    shared = record(rv, {"a": form})  # a form that is not bytes (a codec that shares objects)
    assert record_rv(shared) == rv and record_form(shared) == {"a": form}
    assert record_form(with_form(shared, other)) == other and record_rv(with_form(rec, {"b": 1})) == rv


def test_deferred_writes_compact_once_quiet_and_skip_replaced_and_deleted_versions() -> None:
    s = Store(defer_writes=True)
    for i in range(30):
        s.apply(pod(i))
    t0 = time.monotonic()
    assert s.pending_compaction == 30
    s.apply(pod(4, rv=2))  # replaces the version queued first
    s.delete("ns2", "p5")
    assert thaw(s.get("p4", "ns1"))["metadata"]["resourceVersion"] == "2"  # read from the cheap form
    # nothing written after `before` is touched; the oldest write still queued is reported
    oldest = s.compact(t0 - 60)
    assert oldest is not None and oldest <= t0
    assert s.pending_compaction == 31
    assert s.compact(time.monotonic()) is None and s.pending_compaction == 0
    expected = {(f"ns{i % 3}", f"p{i}"): pod(i, rv=2 if i == 4 else 1) for i in range(30) if i != 5}
    s.clear_hot()
    assert snapshot(s) == expected
    plain = Store()
    for obj in expected.values():
        plain.apply(copy.deepcopy(obj))
    # as compact as encoding at once (the dictionary learnt may differ a little)
    assert abs(s.stats()["payload_bytes"] - plain.stats()["payload_bytes"]) < plain.stats()["payload_bytes"] * 0.05
    # a store whose codec cannot defer encodes at once and queues nothing
    d = Store(codec="dict", defer_writes=True)
    d.apply(pod(1))
    assert d.pending_compaction == 0 and d.compact(time.monotonic()) is None


async def test_deferred_writes_are_timed_by_the_store_clock() -> None:
    """The store reads when a write was made from its injected clock, as the work queue does."""
    clock = VirtualClock()
    s = Store(defer_writes=True, clock=clock)
    s.apply(pod(1))
    assert s.compact(clock.monotonic() - 2.0) == clock.monotonic()  # written now: not due 2 s ago
    assert s.pending_compaction == 1
    await clock.advance(3.0)  # three (virtual) seconds pass, no real time
    assert s.compact(clock.monotonic() - 2.0) is None and s.pending_compaction == 0


async def test_the_compactor_waits_on_the_clock_for_written_objects() -> None:
    clock = VirtualClock()
    s = Store(defer_writes=True, clock=clock)
    compactor = Compactor(s, "test")
    task = asyncio.create_task(compactor.run())
    try:
        s.apply(pod(1))
        compactor.written()
        await asyncio.sleep(0.05)  # real time passes; the clock does not
        assert s.pending_compaction == 1 and clock.pending == 1
        await clock.advance(compactor.delay)
        await eventually(lambda: s.pending_compaction == 0, timeout=2)
    finally:
        task.cancel()
        compactor.stop()


def informer(client: Client, namespace: str, *, label_selector: str = MINE, **kwargs: Any) -> Informer:
    """An informer on this test's ConfigMaps only: a real cluster adds its own (kube-root-ca.crt)."""
    source = ClientSource(client, CM, namespace=namespace, label_selector=label_selector)
    return Informer(source, resource="core/v1/configmaps", watch_config=FAST, **kwargs)


async def test_informer_compacts_in_the_background_and_reads_stay_exact(client: Client, ns: str) -> None:
    for i in range(40):
        await client.create(cm(f"c{i}", labels={"n": str(i % 3)}, data={"text": f"value {i} " * 20}),
                            namespace=ns)
    async with informer(client, ns) as inf:
        inf.compact_batch = 4  # many small batches: the watch keeps running between them
        await inf.wait_synced(5)
        assert inf.store.pending_compaction > 0  # synced before compaction finished
        during = {k: thaw(inf.reader.get(k[1], k[0])) for k in inf.reader.keys()}
        await client.patch(CM, "c1", {"data": {"text": "patched"}}, namespace=ns)
        await client.delete(CM, "c2", namespace=ns)
        await asyncio.wait_for(inf.compacted(), 5)
        # every listed object is compact; only the patched c1's write may wait for `compact_delay`
        assert inf.store.pending_compaction <= 1 and inf.compacted_at is not None

        def caught_up() -> bool:
            c1 = inf.reader.get("c1", ns)
            return inf.reader.get("c2", ns) is None and c1 is not None and c1["data"]["text"] == "patched"

        await eventually(caught_up)
        for (namespace, name), obj in during.items():
            if name not in ("c1", "c2"):
                assert thaw(inf.reader.get(name, namespace)) == obj
        assert sorted(inf.store.list_keys(label_selector="n=0")) == sorted(
            (ns, f"c{i}") for i in range(0, 40, 3))
        stats = inf.store.stats()
        assert stats["objects"] == 39 and stats["pending_compaction"] <= 1
        json_size = sum(len(orjson.dumps(thaw(inf.reader.get(n, s)))) for s, n in inf.reader.keys())
        assert stats["payload_bytes"] < json_size / 2
    await asyncio.wait_for(inf.compacted(), 1)  # a stopped informer never blocks the waiter


async def test_informer_deflates_watched_changes_once_they_stay_unchanged(client: Client, ns: str) -> None:
    for i in range(12):
        await client.create(cm(f"c{i}", data={"text": f"value {i} " * 20}), namespace=ns)
    async with informer(client, ns) as inf:
        inf.compact_delay = 0.3
        await asyncio.wait_for(inf.compacted(), 5)
        compact = inf.store.stats()["payload_bytes"]
        for i in range(3):  # c0 changes repeatedly, then stays
            await client.patch(CM, "c0", {"data": {"text": f"changed {i} " * 20}}, namespace=ns)
        await eventually(lambda: inf.store.pending_compaction > 0)
        assert inf.store.stats()["payload_bytes"] > compact  # the changed object is held as JSON for now
        await eventually(lambda: inf.store.pending_compaction == 0, timeout=5)
        assert inf.store.stats()["payload_bytes"] < compact * 1.2
        assert inf.reader.get("c0", ns)["data"]["text"] == "changed 2 " * 20


async def test_an_informer_with_no_cheap_allowance_holds_its_list_compressed_at_sync(client: Client, ns: str) -> None:
    for i in range(30):
        await client.create(cm(f"c{i}", data={"text": f"value {i} " * 20}), namespace=ns)
    inf = informer(client, ns)
    # the lowest peak: every listed object compressed as it arrives (a list, and any relist, is
    # built in a store of its own that takes the informer's limit)
    inf.load_cheap_limit = 0
    async with inf:
        await inf.wait_synced(5)
        # the list's store took the limit (`Store.load` under it: the test above); at most the
        # codec's dictionary samples wait for the compactor
        assert inf.store.load_cheap_limit == 0
        assert inf.store.pending_compaction <= inf.store.codec.train_after  # type: ignore[attr-defined]
        # a list from the API server's watch cache may be a moment older than the last create:
        # what it missed arrives by watch
        await eventually(lambda: len(inf.store) == 30, timeout=5)
        assert sorted(thaw(inf.reader.get(f"c{i}", ns))["data"]["text"] for i in range(30)) == sorted(
            f"value {i} " * 20 for i in range(30))


async def test_compacted_returns_for_an_empty_list_and_after_a_stop_before_sync(client: Client, ns: str) -> None:
    async with informer(client, ns) as inf:
        await asyncio.wait_for(inf.compacted(), 5)
        assert len(inf.store) == 0
    never = informer(client, ns)
    never.stop()
    await never.run()
    await asyncio.wait_for(never.compacted(), 1)
