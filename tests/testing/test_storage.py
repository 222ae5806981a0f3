"""Storage: one global resourceVersion, snapshots for continue/Exact lists, bounded history (sans-IO)."""

from __future__ import annotations

from typing import Any

from kubeloop.meta import ADDED, DELETED, MODIFIED
from kubeloop.testing.apiserver.storage import VersionedStore

from ..builders import cm


def _cm(name: str, v: str = "1") -> dict[str, Any]:
    return cm(name, {"v": v}, namespace="default")


def test_every_commit_gets_the_next_resource_version_across_buckets() -> None:
    store = VersionedStore()
    a, b = store.bucket("/configmaps"), store.bucket("/secrets")
    rvs = [store.commit(a, ADDED, _cm("x"), None).rv, store.commit(b, ADDED, _cm("y"), None).rv,
           store.commit(a, ADDED, _cm("z"), None).rv]
    assert rvs == [1, 2, 3]
    assert a.objects[("default", "z")].obj["metadata"]["resourceVersion"] == "3"


def test_snapshot_rewinds_creates_updates_and_deletes() -> None:
    store = VersionedStore()
    b = store.bucket("/configmaps")
    first = store.commit(b, ADDED, _cm("a"), None)
    store.commit(b, ADDED, _cm("b"), None)
    at = store.rv
    store.commit(b, MODIFIED, _cm("a", "2"), first.new)
    store.commit(b, DELETED, _cm("b"), b.objects[("default", "b")])
    store.commit(b, ADDED, _cm("c"), None)
    rewound = b.sorted_snapshot(at)
    assert rewound is not None
    snap = rewound[0]
    assert sorted(snap) == [("default", "a"), ("default", "b")]
    assert snap[("default", "a")].obj["data"] == {"v": "1"}
    assert sorted(b.objects) == [("default", "a"), ("default", "c")]


def test_a_rewound_snapshot_is_kept_for_the_next_pages_and_dropped_once_expired() -> None:
    store = VersionedStore(history_size=4)
    b = store.bucket("/configmaps")
    store.commit(b, ADDED, _cm("b"), None)
    store.commit(b, ADDED, _cm("a"), None)
    at = store.rv
    store.commit(b, ADDED, _cm("c"), None)
    snap = b.sorted_snapshot(at)
    assert snap is not None and snap[1] == [("default", "a"), ("default", "b")]
    store.commit(b, DELETED, _cm("a"), b.objects[("default", "a")])  # later writes leave the past alone
    again = b.sorted_snapshot(at)
    assert again is not None and again[0] is snap[0] and again[1] == [("default", "a"), ("default", "b")]
    for i in range(4):  # history moves past `at`: its pages expire
        store.commit(b, ADDED, _cm(f"n{i}"), None)
    assert b.sorted_snapshot(at) is None and b._rewound is None


def test_history_eviction_and_compaction_expire_old_versions() -> None:
    store = VersionedStore(history_size=3)
    b = store.bucket("/configmaps")
    for i in range(5):
        store.commit(b, ADDED, _cm(f"o{i}"), None)
    assert b.changes_since(0) is None  # evicted: a watch from RV 0 history would be incomplete
    since = b.changes_since(3)
    assert since is not None and [c.rv for c in since] == [4, 5]
    assert b.sorted_snapshot(1) is None
    store.compact()
    assert b.changes_since(4) is None
    assert b.changes_since(5) == []


def test_stored_bytes_omit_kind_and_api_version() -> None:
    store = VersionedStore()
    b = store.bucket("/configmaps")
    st = store.commit(b, ADDED, _cm("a"), None).new
    assert st.body.startswith(b'{"metadata"')
    assert b'"kind"' not in st.body
