"""Unit tests of the write tracker (own-event filtering, held events, overlay, pending, expiry) and of the
client write hook that feeds it."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kubeloop.client import ApiResource, WriteRequest
from kubeloop.controller._readyourwrites import ObjectKey, ReadYourWrites, WriteTracker

K = ("default", "", "ConfigMap", "ns", "a")


def obj(rv: str, uid: str = "u1", **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns",
                                                                 "resourceVersion": rv, "uid": uid}, **extra}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def deliveries() -> tuple[list[str], Any]:
    got: list[str] = []
    return got, lambda tag: (lambda: got.append(tag))


def test_own_event_is_skipped_foreign_one_is_delivered() -> None:
    t = WriteTracker()
    got, d = deliveries()
    w = t.begin(K, "5", owner="req")
    t.finish(w, obj("7"))
    t.on_event(K, "5", "7", d("own"))
    assert got == [] and t.own_events_skipped == 1 and len(t) == 0
    # someone else wrote in between: old rv differs, so the event is delivered
    w = t.begin(K, "7", owner="req")
    t.finish(w, obj("9"))
    t.on_event(K, "8", "9", d("mixed"))
    assert got == ["mixed"]


def test_events_for_a_write_in_flight_are_held_until_it_returns() -> None:
    t = WriteTracker()
    got, d = deliveries()
    w = t.begin(K, None, owner="req")
    t.on_event(K, None, "3", d("create-event"))  # the watch was faster than the response
    assert got == []
    t.finish(w, obj("3"))
    assert got == [] and t.own_events_skipped == 1
    w = t.begin(K, "3")
    t.on_event(K, "3", "4", d("foreign"))
    t.fail(w)  # the write failed: whatever happened was someone else's
    assert got == ["foreign"]


def test_chained_writes_are_each_recognised() -> None:
    t = WriteTracker()
    got, d = deliveries()
    w1 = t.begin(K, "5")
    t.finish(w1, obj("6"))
    assert t.prior_rv(K, "5") == "6"  # our newer write, not the stale cache
    w2 = t.begin(K, t.prior_rv(K, "5"))
    t.finish(w2, obj("8"))
    t.on_event(K, "5", "6", d("first"))
    t.on_event(K, "6", "8", d("second"))
    assert got == [] and len(t) == 0


def test_noop_write_is_forgotten() -> None:
    t = WriteTracker()
    w = t.begin(K, "5", owner="r")
    t.finish(w, obj("5"))
    assert len(t) == 0 and t.pending("r") == []


def test_overlay_and_pending() -> None:
    t = WriteTracker()
    w = t.begin(K, "5", owner="r")
    t.finish(w, obj("7", data={"x": "new"}))
    cached = obj("5", data={"x": "old"})
    assert t.overlay(K, cached)["data"] == {"x": "new"}  # type: ignore[index]
    assert t.overlay(K, None)["data"] == {"x": "new"}  # type: ignore[index]
    assert [p.rv for p in t.pending("r")] == ["7"]
    newer = obj("9", data={"x": "newest"})
    assert t.overlay(K, newer) is newer
    t.on_observed(K, "9")
    assert t.pending("r") == [] and t.overlay(K, cached) is cached


def test_delete_hides_the_cached_object_until_the_delete_event() -> None:
    t = WriteTracker()
    got, d = deliveries()
    w = t.begin(K, "5", uid="u1")
    t.finish(w, {"kind": "Status", "status": "Success"})
    assert t.overlay(K, obj("5", uid="u1")) is None
    recreated = obj("12", uid="u2")
    assert t.overlay(K, recreated) is recreated
    t.on_event(K, "5", None, d("deleted"))
    assert got == ["deleted"] and len(t) == 0


def test_listeners_and_expiry() -> None:
    clock = Clock()
    t = WriteTracker(ttl=10, clock=clock)
    woken: list[int] = []
    t.add_listener(lambda: woken.append(1))
    w = t.begin(K, "1", owner="r")
    t.finish(w, obj("2"))
    t.on_observed(K, "3")
    assert woken == [1] and len(t) == 0
    w = t.begin(("default", "", "ConfigMap", "ns", "b"), None, owner="r")
    t.finish(w, obj("4"))
    clock.now = 11
    assert t.pending("r") == [] and len(t) == 0
    t.release([])


def _simulate(ops: list[tuple[str, int]]) -> tuple[set[int], set[int], set[int]]:
    """Run writes (own or foreign) and lagging watch deliveries through a tracker.

    Returns (foreign event ids, own event ids, delivered ids)."""
    t = WriteTracker()
    server_rv = 1
    cache_rv = 1
    queue: list[tuple[int, str, str, str]] = []  # (id, old, new, who)
    delivered: set[int] = set()
    foreign: set[int] = set()
    own: set[int] = set()
    next_id = 0

    def deliver_one() -> None:
        nonlocal cache_rv
        eid, old, new, _ = queue.pop(0)
        cache_rv = int(new)
        t.on_event(K, old, new, lambda e=eid: delivered.add(e))

    for op, n in ops:
        if op == "deliver":
            for _ in range(min(n, len(queue))):
                deliver_one()
        elif op == "foreign":
            queue.append((next_id, str(server_rv), str(server_rv + 1), "foreign"))
            foreign.add(next_id)
            next_id += 1
            server_rv += 1
        else:  # own write; `n` events are delivered while it is in flight
            w = t.begin(K, t.prior_rv(K, str(cache_rv)), owner="r")
            queue.append((next_id, str(server_rv), str(server_rv + 1), "own"))
            own.add(next_id)
            next_id += 1
            server_rv += 1
            for _ in range(min(n, len(queue))):
                deliver_one()
            t.finish(w, obj(str(server_rv)))
    while queue:
        deliver_one()
    return foreign, own, delivered


ops_strategy = st.lists(st.tuples(st.sampled_from(["own", "foreign", "deliver"]), st.integers(0, 3)), max_size=30)


@given(ops_strategy)
def test_foreign_changes_are_never_swallowed(ops: list[tuple[str, int]]) -> None:
    foreign, own, delivered = _simulate(ops)
    assert foreign <= delivered
    assert delivered <= foreign | own


@given(st.lists(st.tuples(st.sampled_from(["own", "deliver"]), st.integers(0, 3)), max_size=30))
def test_only_own_writes_trigger_nothing(ops: list[tuple[str, int]]) -> None:
    _, own, delivered = _simulate(ops)
    assert delivered == set() and (own or not ops or all(op == 'deliver' for op, _ in ops))


class Caches:
    """A stand-in for the controller's sources: one cached object per key, every write observable."""

    def __init__(self) -> None:
        self.objects: dict[ObjectKey, Mapping[str, Any]] = {}

    def cached(self, key: ObjectKey) -> Mapping[str, Any] | None:
        return self.objects.get(key)

    def observable(self, key: ObjectKey, obj: Mapping[str, Any] | None) -> bool:
        return True

    def is_primary(self, cluster: str, group: str, kind: str) -> bool:
        return kind == "ConfigMap"


CONFIGMAPS = ApiResource(group="", version="v1", kind="ConfigMap", plural="configmaps", namespaced=True)


def write(verb: Any, name: str = "a", *, method: str = "PATCH", resource: ApiResource | None = CONFIGMAPS,
          dry_run: bool = False, subresource: str | None = None) -> WriteRequest:
    return WriteRequest(verb, method, "/api/v1/namespaces/ns/configmaps", resource, "ns", name, subresource, dry_run)


def ryw_with_cache(cached: Mapping[str, Any] | None = None) -> tuple[ReadYourWrites, Caches]:
    caches = Caches()
    if cached is not None:
        caches.objects[K] = cached
    return ReadYourWrites("test", caches, timeout=1.0, log=logging.getLogger("test")), caches


def test_hook_tracks_a_named_write_from_before_it_is_sent() -> None:
    ryw, _ = ryw_with_cache(obj("5"))
    got, d = deliveries()
    done = ryw.hook("default", lambda: "req")(write("patch"))
    assert done is not None and ryw.tracker.tracks(K)  # events of K are held from now on
    done(obj("7"))
    assert ryw.read(K) == obj("7") and [w.rv for w in ryw.tracker.pending("req")] == ["7"]  # cache still at 5
    ryw.tracker.on_event(K, "5", "7", d("own"))
    assert got == [] and ryw.tracker.pending("req") == []  # own event dropped; the write is seen


def test_hook_releases_held_events_when_the_write_fails() -> None:
    ryw, _ = ryw_with_cache(obj("5"))
    got, d = deliveries()
    done = ryw.hook("default", lambda: "req")(write("update", method="PUT"))
    assert done is not None
    ryw.tracker.on_event(K, "5", "6", d("other"))
    done(None)
    assert got == ["other"] and not ryw.tracker.tracks(K)


def test_hook_ignores_dry_runs_and_other_subresources() -> None:
    ryw, _ = ryw_with_cache()
    assert ryw.hook("default", lambda: "req")(write("create", dry_run=True)) is None
    assert ryw.hook("default", lambda: "req")(write("update", subresource="scale")) is None


def test_hook_records_writes_known_only_from_the_answer() -> None:
    ryw, caches = ryw_with_cache()
    hook = ryw.hook("default", lambda: "req")
    got, d = deliveries()
    done = hook(write("request", "", method="POST", resource=None))  # request_json: no key before the call
    assert done is not None
    done(obj("9"))
    ryw.tracker.on_event(K, None, "9", d("own create"))
    assert got == [] and ryw.tracker.own_events_skipped == 1
    caches.objects[K] = obj("9")
    done = hook(write("deletecollection", "", method="DELETE"))
    assert done is not None
    done({"apiVersion": "v1", "kind": "ConfigMapList", "items": [{"metadata": obj("10")["metadata"]}]})
    assert ryw.read(K) is None  # the deleted object no longer shows, though the cache still has it
