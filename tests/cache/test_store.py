"""Store and indexes: exact against a brute-force model under random churn."""

from __future__ import annotations

import random
import sys
import tracemalloc
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

import orjson
import pytest

from kubeloop.cache import (
    NAMESPACE_INDEX,
    OWNER_INDEX,
    OWNER_REF_INDEX,
    FrozenDict,
    ReadOnlyError,
    Store,
    owner_ref_key,
    thaw,
)
from kubeloop.cache._entry import LABELS, REC
from kubeloop.cache._index import owner_ref_index, owner_uid_index
from kubeloop.cache._store import IndexFunctionError
from kubeloop.meta import ADDED, DELETED, MODIFIED, LabelSelector

CODECS = ["zstd", "zlib", "json", "dict"]


def obj(ns: str, name: str, rv: int, labels: dict[str, str] | None = None,
        owners: Iterable[tuple[str, str]] = (), node: str = "") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name, "namespace": ns, "uid": f"uid-{ns}-{name}", "resourceVersion": str(rv),
            "labels": dict(labels or {}),
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": oname, "uid": ouid}
                                for ouid, oname in owners],
        },
        "spec": {"nodeName": node, "unschedulable": rv % 2 == 0},
    }


def app_index(o: Mapping[str, Any]) -> str | None:
    return (o["metadata"].get("labels") or {}).get("app")


def label_pairs_index(o: Mapping[str, Any]) -> list[str]:
    return [f"{k}={v}" for k, v in (o["metadata"].get("labels") or {}).items()]


def node_index(o: Mapping[str, Any]) -> list[str]:
    node = o["spec"].get("nodeName")
    return [node, node] if node else []  # duplicates are filed once


class Model:
    """The obvious implementation: a dict, with every index recomputed from scratch."""

    def __init__(self) -> None:
        self.objs: dict[tuple[str, str], dict[str, Any]] = {}

    def index(self, fn: Any) -> dict[str, set[tuple[str, str]]]:
        out: dict[str, set[tuple[str, str]]] = {}
        for key, o in self.objs.items():
            keys = fn(FrozenDict(o))
            if isinstance(keys, str):
                keys = [keys]
            for k in keys or ():
                out.setdefault(k, set()).add(key)
        return out


def random_obj(rng: random.Random, rv: int) -> dict[str, Any]:
    ns = rng.choice(["", "a", "b"])
    name = f"o{rng.randrange(10)}"
    labels = {k: rng.choice(["x", "y", "z"]) for k in rng.sample(["app", "tier", "env"], rng.randrange(4))}
    owners = [(f"rs-uid-{u}", f"rs-{u}") for u in rng.sample(range(4), rng.randrange(3))]
    return obj(ns, name, rv, labels, owners, node=rng.choice(["", "n1", "n2"]))


def check(store: Store, model: Model, fns: dict[str, Any], rng: random.Random) -> None:
    assert len(store) == len(model.objs)
    assert set(store.keys()) == set(model.objs)
    assert len(store.keys()) == len(store)
    for key, o in model.objs.items():
        assert key in store
        got = store.get(key[1], key[0])
        assert got == o
        assert store.resource_version_of(key[1], key[0]) == o["metadata"]["resourceVersion"]
        assert store.labels_of(key[1], key[0]) == o["metadata"]["labels"]
    assert ("zz", "nope") not in store and store.get("nope", "zz") is None
    for name, fn in fns.items():
        want = model.index(fn)
        assert set(store.index_values(name)) == set(want), name
        for k, keys in want.items():
            assert store.index_keys(name, k) == keys, (name, k)
            assert sorted(map(thaw, store.by_index(name, k)), key=lambda o: (o["metadata"]["namespace"],
                          o["metadata"]["name"])) == sorted((model.objs[x] for x in keys),
                                                            key=lambda o: (o["metadata"]["namespace"],
                                                                           o["metadata"]["name"]))
        assert store.index_keys(name, "absent-key") == set()
    want_ns = model.index(lambda o: o["metadata"]["namespace"])
    assert set(store.index_values(NAMESPACE_INDEX)) == set(want_ns)
    for ns, keys in want_ns.items():
        assert store.index_keys(NAMESPACE_INDEX, ns) == keys
        assert {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in store.list(namespace=ns)} == keys
    sel = rng.choice(["app=x", "app in (x,y),tier", "!env", "tier notin (z)", "", "app,env!=y"])
    want_sel = {k for k, o in model.objs.items() if LabelSelector.parse(sel).matches(o["metadata"]["labels"])}
    assert set(store.list_keys(label_selector=sel)) == want_sel
    assert {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in store.list(label_selector=sel)} == want_sel
    fsel = rng.choice(["spec.nodeName=n1", "metadata.name=o1", "metadata.namespace=a,spec.nodeName!=n2",
                       "spec.unschedulable=true"])
    from kubeloop.cache._entry import field_value
    from kubeloop.meta import FieldSelector

    parsed = FieldSelector.parse(fsel)
    want_f = {k for k, o in model.objs.items()
              if parsed.matches({r.field: field_value(o, r.field) for r in parsed.requirements})}
    assert set(store.list_keys(field_selector=fsel)) == want_f


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_churn_matches_model(codec: str, seed: int) -> None:
    rng = random.Random(seed)
    store = Store(codec=codec, hot_size=rng.choice([0, 3, 64]), defer_writes=rng.random() < 0.5)
    model = Model()
    fns: dict[str, Any] = {OWNER_INDEX: owner_uid_index, OWNER_REF_INDEX: owner_ref_index, "app": app_index}
    store.add_index("app", app_index)
    rv = 0
    for step in range(220):
        rv += 1
        op = rng.random()
        if op < 0.6:
            o = random_obj(rng, rv)
            key = (o["metadata"]["namespace"], o["metadata"]["name"])
            prev = model.objs.get(key)
            change = store.apply(thaw(o))
            assert change.key == key and change.new == o
            assert change.kind == (ADDED if prev is None else MODIFIED)
            assert change.old == prev
            model.objs[key] = o
            assert store.resource_version == str(rv)
        elif op < 0.85:
            key = rng.choice([*model.objs, ("a", "missing")])
            old = store.delete(key[0], key[1], resource_version=str(rv))
            assert old == model.objs.pop(key, None)
            assert store.resource_version == str(rv)
        else:
            keep = [o for o in model.objs.values() if rng.random() < 0.6]
            fresh = [random_obj(rng, rv + i) for i in range(rng.randrange(5))]
            rv += 5
            changed = []
            for o in keep:
                if rng.random() < 0.3:
                    o = thaw(o)
                    o["metadata"]["labels"]["app"] = rng.choice(["x", "y", "w"])
                    o["metadata"]["resourceVersion"] = str(rv)
                changed.append(o)
            new_model = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in changed + fresh}
            result = store.replace([thaw(o) for o in changed + fresh], resource_version=str(rv))
            assert {c.key for c in result.deleted} == set(model.objs) - set(new_model)
            assert {c.key for c in result.added} == set(new_model) - set(model.objs)
            for c in result.deleted:
                assert c.new is None and c.old == model.objs[c.key] and c.kind == DELETED
            for c in result.modified:
                assert c.old == model.objs[c.key] and c.new == new_model[c.key]
                assert c.old["metadata"]["resourceVersion"] != c.new["metadata"]["resourceVersion"]
            unchanged = {k for k in set(model.objs) & set(new_model)
                         if model.objs[k]["metadata"]["resourceVersion"]
                         == new_model[k]["metadata"]["resourceVersion"]}
            assert {c.key for c in result.modified} == (set(model.objs) & set(new_model)) - unchanged
            model.objs = new_model
            assert store.resource_version == str(rv)
        if rng.random() < 0.2:  # deferred writes compacted part way: reads must not change
            store.compact(limit=rng.choice([1, 5, None]))
        if step == 90:
            store.add_index("labels", label_pairs_index)  # added late: built from current contents
            fns["labels"] = label_pairs_index
        if step == 150:
            store.add_index("node", node_index)
            fns["node"] = node_index
            store.remove_index("app")
            del fns["app"]
        if step % 10 == 0 or step > 200:
            check(store, model, fns, rng)
    check(store, model, fns, rng)


def test_reads_are_read_only_and_shared_copy_is_safe() -> None:
    store = Store()
    store.apply(obj("a", "p", 1, {"app": "x"}))
    got = store.get("p", "a")
    assert got is not None
    with pytest.raises(ReadOnlyError):
        got["metadata"]["labels"]["app"] = "hacked"
    with pytest.raises(ReadOnlyError):
        store.list()[0]["spec"].update({"x": 1})
    with pytest.raises(ReadOnlyError):
        store.by_index(NAMESPACE_INDEX, "a")[0]["metadata"]["ownerReferences"].append({})
    mine = thaw(got)
    mine["metadata"]["labels"]["app"] = "mine"
    assert store.get("p", "a")["metadata"]["labels"]["app"] == "x"  # type: ignore[index]


def test_index_function_failure_leaves_store_untouched() -> None:
    store = Store(codec="json")
    store.apply(obj("a", "p", 1, {"app": "x"}))

    def picky(o: Mapping[str, Any]) -> list[str]:
        if o["metadata"]["name"] == "bad":
            raise RuntimeError("boom")
        return [o["metadata"]["name"]]

    store.add_index("picky", picky)
    with pytest.raises(IndexFunctionError, match="index 'picky'"):  # names the index; caused by the RuntimeError
        store.apply(obj("a", "bad", 2))
    assert ("a", "bad") not in store and len(store) == 1
    with pytest.raises(IndexFunctionError):
        store.replace([obj("a", "q", 3), obj("a", "bad", 4)], "4")
    assert store.keys() == [("a", "p")] and store.index_keys("picky", "p") == {("a", "p")}
    assert store.resource_version == "1"
    with pytest.raises(ValueError, match=r"metadata\.name"):
        store.apply({"metadata": {}})

    def late(o: Mapping[str, Any]) -> list[str]:
        raise RuntimeError("late")

    with pytest.raises(RuntimeError):
        store.add_index("late-bad", late)  # fails on the existing object: not added
    assert "late-bad" not in store.indexes
    store.apply(obj("a", "r", 6))
    assert store.index_keys("picky", "r") == {("a", "r")}


def test_index_keys_change_and_leave_everywhere() -> None:
    store = Store(codec="zstd", hot_size=0)
    store.add_index("app", app_index)
    store.add_index("labels", label_pairs_index)
    store.apply(obj("a", "p", 1, {"app": "x", "tier": "web"}, owners=[("u1", "rs1")]))
    assert store.index_keys("app", "x") == {("a", "p")}
    assert store.index_keys(OWNER_INDEX, "u1") == {("a", "p")}
    assert store.index_keys(OWNER_REF_INDEX, owner_ref_key("apps/v1", "ReplicaSet", "a", "rs1")) == {("a", "p")}
    assert store.object_index_keys("labels", "p", "a") == ("app=x", "tier=web")
    store.apply(obj("a", "p", 2, {"app": "y"}, owners=[("u2", "rs2")]))
    assert store.index_keys("app", "x") == set() and store.index_keys("app", "y") == {("a", "p")}
    assert store.index_values("labels") == ["app=y"]
    assert store.index_values(OWNER_INDEX) == ["u2"]
    store.delete("a", "p")
    for ix in store.indexes:
        assert store.index_values(ix) == []
    assert store.delete("a", "p") is None
    with pytest.raises(KeyError):
        store.by_index("nope", "x")
    with pytest.raises(ValueError, match="already exists"):
        store.add_index("app", app_index)


def test_same_resource_version_is_not_reencoded_and_cluster_scope() -> None:
    store = Store(codec="json")
    store.apply(obj("", "node-1", 7, {"role": "x"}))
    data_before = store._by_ns[""]["node-1"][REC]
    change = store.apply(obj("", "node-1", 7, {"role": "x"}))
    assert store._by_ns[""]["node-1"][REC] is data_before
    assert change.old == change.new and change.kind == MODIFIED
    assert store.get("node-1") == obj("", "node-1", 7, {"role": "x"})
    assert store.keys() == [("", "node-1")] and store.namespaces() == [""]
    assert store.uid_of("node-1") == "uid--node-1"


def test_label_pool_shares_identical_label_sets() -> None:
    store = Store(codec="json")
    for i in range(20):
        # the same set written in either order is one set (the order a writer used does not matter)
        labels = {"app": "x", "tier": "web"} if i % 2 else {"tier": "web", "app": "x"}
        store.apply(obj("a", f"p{i}", i + 1, labels))
    tuples = {id(e[LABELS]) for e in store._by_ns["a"].values()}
    assert len(tuples) == 1
    stats = store.stats()
    assert stats["objects"] == 20 and stats["label_sets"] == 1 and stats["payload_bytes"] > 0
    assert store.labels_of("p1", "a") == {"app": "x", "tier": "web"}
    store.apply(obj("a", "p1", 30, {"app": "x", "tier": "db"}))  # a changed value is another set
    assert store.labels_of("p1", "a") == {"app": "x", "tier": "db"} and store.stats()["label_sets"] == 2
    assert [o["metadata"]["name"] for o in store.list(label_selector="tier=db")] == ["p1"]


def test_hot_cache_serves_repeated_reads_and_is_bounded() -> None:
    store = Store(codec="zstd", hot_size=4)
    for i in range(10):
        store.apply(obj("a", f"p{i}", i + 1))
    assert store.stats()["hot_views"] == 0  # writes do not enter the LRU by default
    for i in range(6):
        store.get(f"p{i}", "a")
    assert store.stats()["hot_views"] == 4
    first = store.get("p0", "a")
    assert store.get("p0", "a") is first  # served from the LRU
    store.apply(obj("a", "p0", 99))
    assert store.get("p0", "a") is not first and store.get("p0", "a")["metadata"]["resourceVersion"] == "99"  # type: ignore[index]
    store.clear_hot()
    assert store.stats()["hot_views"] == 0


def test_replace_to_empty_reports_everything_deleted() -> None:
    store = Store()
    for i in range(5):
        store.apply(obj("a", f"p{i}", i + 1))
    res = store.replace([], "100")
    assert len(res) == 5 and len(res.deleted) == 5 and len(store) == 0
    assert {c.old["metadata"]["name"] for c in res.deleted if c.old is not None} == {f"p{i}" for i in range(5)}
    assert store.namespaces() == [] and store.index_values(OWNER_INDEX) == []


def test_uid_and_resource_version_survive_compaction() -> None:
    store = Store(codec="json")
    cases = [("p1", "0b9e6c1a-3f1e-4c1e-9a57-2b8f0a5a9c11", "12345"),
             ("p2", "0B9E6C1A-3F1E-4C1E-9A57-2B8F0A5A9C11", "007"),  # not canonical: kept as text
             ("p3", "not-a-uuid", "abc"), ("p4", "", "0"), ("p5", "x" * 36, "99999999999999999999999")]
    for name, uid, rv in cases:
        o = obj("a", name, 1)
        o["metadata"]["uid"], o["metadata"]["resourceVersion"] = uid, rv
        store.apply(o)
        assert store.uid_of(name, "a") == uid and store.resource_version_of(name, "a") == rv
        assert store.resource_version == rv
    same = obj("a", "p2", 1)
    same["metadata"]["resourceVersion"] = "7"  # numerically equal, textually different: a change
    assert store.apply(same).old["metadata"]["resourceVersion"] == "007"  # type: ignore[index]
    assert store.resource_version_of("p2", "a") == "7"


def test_stored_objects_add_no_work_for_the_garbage_collector() -> None:
    # A full collection walks every GC-tracked object: a store of a million objects must not be
    # a million of them (each full collection of a 1,000,000-object informer sync took ~0.3 s).
    import gc

    store = Store()
    store.add_index("app", app_index)
    gc.collect()
    before = len(gc.get_objects())
    for i in range(5000):
        store.load(obj(f"ns{i % 3}", f"p{i}", i + 1, {"app": f"a{i % 50}"}, owners=[(f"rs-{i % 7}", "rs")]))
    for i in range(0, 5000, 3):
        store.apply(obj(f"ns{i % 3}", f"p{i}", 9000 + i, {"app": f"b{i % 60}"}))
    store.compact()
    assert len(store.by_index("app", "a1")) == sum(1 for i in range(5000) if i % 50 == 1 and i % 3)
    gc.collect()
    assert len(gc.get_objects()) - before < 500


def test_an_index_added_while_objects_wait_for_compaction_loses_none() -> None:
    store, plain = Store(), Store()
    for i in range(300):
        store.load(obj("a", f"p{i}", i + 1, {"app": f"a{i % 5}"}))
        plain.load(obj("a", f"p{i}", i + 1, {"app": f"a{i % 5}"}))
    store.compact(limit=100)
    store.add_index("app", app_index)
    store.compact()
    plain.compact()
    assert store.pending_compaction == 0
    assert store.stats()["payload_bytes"] == plain.stats()["payload_bytes"]  # every object deflated
    assert len(store.by_index("app", "a3")) == 60
    store.remove_index("app")
    assert store.get("p7", "a") == obj("a", "p7", 8, {"app": "a2"})


def test_a_stored_object_holds_one_object_of_its_own_beside_its_name() -> None:
    # What the store keeps per object: one entry tuple, whose items are the object's name (the
    # bucket's key itself), what objects share (namespace, label set, index keys) and one record of
    # its own: resourceVersion and form in one bytes object. No uid or version objects beside it
    # (each cost ~40-60 bytes): nothing the store does needs the uid, and the version is in the record.
    store = Store(codec="json", owner_index=False, hot_size=0)
    store.add_index("app", app_index)
    for i in range(500):
        o = obj("a", f"p{i}", 100000 + i, {"app": f"x{i % 2}"})
        o["metadata"]["uid"] = str(uuid.UUID(int=i))
        store.load(o)
    bucket = store._by_ns["a"]
    seen: dict[int, int] = {}
    for e in bucket.values():
        for item in e:
            seen[id(item)] = seen.get(id(item), 0) + 1
    for name, e in bucket.items():
        own = [item for item in e if item is not name and seen[id(item)] == 1]
        assert own == [e[REC]] and type(e[REC]) is bytes, own
        form = orjson.dumps(thaw(store.get(name, "a")))
        assert len(e[REC]) == 1 + len("100000") + len(form)  # length byte, version, JSON
    assert store.resource_version_of("p7", "a") == "100007" and store.uid_of("p7", "a") == str(uuid.UUID(int=7))


def test_a_resource_version_that_is_not_text_is_refused_and_changes_nothing() -> None:
    store = Store()
    bad = obj("a", "p", 1)
    bad["metadata"]["resourceVersion"] = 7
    for write in (store.apply, store.load):
        with pytest.raises(ValueError, match="resourceVersion must be a string"):
            write(bad)
    assert len(store) == 0 and store.keys() == []


def test_a_key_snapshot_reads_as_the_keys_and_holds_no_tuple_per_key() -> None:
    store = Store(codec="json")
    for i in range(3000):
        store.apply(obj(f"ns{i % 4}", f"p{i}", i + 1))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        snap = store.key_snapshot()
        made = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert made < 3000 * (8 + 2) + 4 * 1024  # a list slot per name, not a (namespace, name) tuple each
    keys = store.keys()
    assert len(snap) == 3000 and list(snap) == keys and [snap[i] for i in range(3000)] == keys
    assert snap[-1] == keys[-1] and snap[10:20:3] == keys[10:20:3] and snap[5:2] == []
    with pytest.raises(IndexError):
        snap[3000]
    store.delete("ns1", "p1")
    store.apply(obj("ns9", "new", 1))
    assert list(snap) == keys  # a snapshot: later writes do not change it
    assert list(Store().key_snapshot()) == [] and sys.getsizeof(snap) < 200
