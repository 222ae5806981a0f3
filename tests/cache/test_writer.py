"""`StoreWriter`, sans-IO: the readers' store survives relists; every write reports its `Event`."""

from __future__ import annotations

from typing import Any

from kubeloop.cache import CacheReader, Event, StoreWriter, Subscription, thaw
from kubeloop.meta import ADDED, DELETED, MODIFIED, REAL_CLOCK


def cm(name: str, rv: int, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": str(rv), "uid": f"uid-{name}"},
            "data": data or {"k": str(rv)}}


def writer(**kwargs: Any) -> StoreWriter:
    options: dict[str, Any] = {"transform": None, "filter": None, "codec": "zstd", **kwargs}
    return StoreWriter(cluster="c1", resource="core/v1/configmaps", name="test", clock=REAL_CLOCK, **options)


def listed(w: StoreWriter, rv: int, *objs: dict[str, Any]) -> list[Event]:
    """One (re)list of ``objs``, then the difference it made (as the informer reports a relist)."""
    w.begin_list()
    for o in objs:
        w.load(o)
    previous = w.finish_list(str(rv))
    return w.changes_since(previous, initial=False)


def test_a_relist_changes_the_contents_of_the_store_readers_hold_not_the_store() -> None:
    w = writer()
    store = w.store
    reader = CacheReader(store, "c1", "core/v1/configmaps")
    sub = Subscription(store, "c1", "core/v1/configmaps")
    listed(w, 3, cm("a", 1), cm("b", 2), cm("c", 3))
    assert w.store is store and sorted(n for _, n in reader.keys()) == ["a", "b", "c"]
    events = listed(w, 9, cm("b", 2), cm("c", 7, k="changed"), cm("d", 8))  # a gone, c changed, d new
    assert w.store is store
    assert sorted(n for _, n in reader.keys()) == ["b", "c", "d"]
    assert thaw(reader.get("c", "ns"))["data"] == {"k": "changed"} and store.resource_version == "9"
    assert [(e.type, e.name) for e in events] == [(DELETED, "a"), (MODIFIED, "c"), (ADDED, "d")]
    assert events[0].old is not None and events[0].old["metadata"]["name"] == "a"  # decoded before the swap
    assert events[1].old is not None and events[1].old["data"] == {"k": "3"}
    assert events[1].new is not None and events[1].new["data"] == {"k": "changed"}
    sub._offer_batch(store.keys(), initial=True)  # a subscription made before the relist reads the new contents
    assert sorted(e.name for e in sub.drain()) == ["b", "c", "d"]


def test_a_relist_keeps_the_indexes_and_builds_nothing_the_readers_see_before_it_ends() -> None:
    w = writer()
    w.add_index("k", lambda o: o["data"]["k"])
    listed(w, 2, cm("a", 1), cm("b", 2))
    w.begin_list()
    w.load(cm("a", 5, k="x"))
    assert sorted(w.store.index_keys("k", "1")) == [("ns", "a")]  # the list in progress is not visible
    w.finish_list("5")
    assert w.store.keys() == [("ns", "a")] and w.store.index_keys("k", "x") == {("ns", "a")}


def test_writes_report_events_whose_old_is_decoded_only_when_read() -> None:
    w = writer()
    listed(w, 1, cm("a", 1))
    ev = w.apply(cm("a", 2, k="two"), report=True)
    assert ev is not None and (ev.type, ev.key) == (MODIFIED, ("c1", "ns", "a"))
    assert type(ev._old) is tuple  # the replaced entry, not decoded yet
    assert ev.old is not None and ev.old["data"] == {"k": "1"} and ev.new is not None and ev.new["data"] == {"k": "two"}
    assert w.apply(cm("a", 2, k="two"), report=True) is None  # the same version again: nothing
    assert w.apply(cm("b", 3), report=False) is None and w.store.get("b", "ns") is not None  # nobody listens
    added = w.apply(cm("e", 4), report=True)
    assert added is not None and added.type == ADDED and added.old is None
    gone = w.delete(cm("a", 5))
    assert gone is not None and gone.type == DELETED and gone.new is None
    assert gone.old is not None and gone.old["data"] == {"k": "two"}
    assert w.delete(cm("zz", 6)) is None


def test_an_object_the_transform_raises_on_keeps_its_last_good_version_until_fixed() -> None:
    def transform(o: dict[str, Any]) -> dict[str, Any]:
        if o["data"].get("k") == "bad":
            raise ValueError("no")
        return o

    w = writer(transform=transform)
    listed(w, 1, cm("a", 1))
    assert w.apply(cm("a", 2, k="bad"), report=True) is None
    assert len(w.broken) == 1 and "ValueError: no" in w.broken.describe()
    assert thaw(w.store.get("a", "ns"))["data"] == {"k": "1"}
    listed(w, 3, cm("a", 3, k="bad"))  # a relist keeps the last good version too, and the failure
    assert thaw(w.store.get("a", "ns"))["data"] == {"k": "1"} and len(w.broken) == 1
    assert w.apply(cm("a", 4, k="good"), report=True) is not None
    assert not w.broken and w.broken.describe() == ""


def test_release_empties_the_store_readers_hold() -> None:
    w = writer()
    reader = CacheReader(w.store, "c1")
    listed(w, 1, cm("a", 1))
    w.release()
    assert len(reader) == 0 and reader.get("a", "ns") is None
