"""Subscription semantics without I/O: order, bounded queues, resync, narrowing, laziness."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubeloop.cache import Event, Store, Subscription, SubscriptionClosed
from kubeloop.cache._subscription import YIELD_EVERY
from kubeloop.meta import ADDED, DELETED, MODIFIED, RESYNC


def obj(name: str, rv: int, **labels: str) -> dict[str, Any]:
    return {"metadata": {"namespace": "ns", "name": name, "resourceVersion": str(rv), "labels": labels}}


class Feed:
    """Writes to a store and offers the resulting events, as the informer does."""

    def __init__(self) -> None:
        self.store = Store(codec="json")
        self.subs: list[Subscription] = []

    def sub(self, **kwargs: Any) -> Subscription:
        s = Subscription(self.store, "c1", "core/v1/configmaps", **kwargs)
        self.subs.append(s)
        return s

    def put(self, name: str, rv: int, **labels: str) -> None:
        ch = self.store.apply(obj(name, rv, **labels))
        t = ch.kind
        ev = Event(t, "c1", "core/v1/configmaps", "ns", name, ch.new, old=ch.old if t == MODIFIED else None)
        for s in self.subs:
            s._offer(ev)

    def delete(self, name: str) -> None:
        old = self.store.delete("ns", name)
        ev = Event(DELETED, "c1", "core/v1/configmaps", "ns", name, None, old=old)
        for s in self.subs:
            s._offer(ev)


def kinds(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.type, e.name) for e in events]


def test_events_arrive_in_order_with_old_and_new() -> None:
    f = Feed()
    s = f.sub()
    f.put("a", 1, x="1")
    f.put("a", 2, x="2")
    f.delete("a")
    got = s.drain()
    assert kinds(got) == [(ADDED, "a"), (MODIFIED, "a"), (DELETED, "a")]
    assert got[1].old["metadata"]["labels"] == {"x": "1"} and got[1].new["metadata"]["labels"] == {"x": "2"}
    assert got[2].new is None and got[2].obj["metadata"]["resourceVersion"] == "2"
    assert got[0].key == ("c1", "ns", "a") and got[0].resource == "core/v1/configmaps"


def test_overflow_gives_one_resync_then_current_state_and_remembered_deletes() -> None:
    f = Feed()
    for i in range(3):
        f.put(f"o{i}", i + 1)
    slow = f.sub(maxsize=2)
    fast = f.sub(maxsize=100)
    f.put("n1", 10)
    f.delete("o0")
    f.put("n2", 11)  # third event: overflow
    f.put("n3", 12)
    f.delete("n3")  # added and deleted while behind
    f.put("o1", 13)
    assert slow.overflows == 1 and len(fast.drain()) == 6
    first = slow.get_nowait()
    assert first is not None and first.type == RESYNC
    f.delete("o2")  # after the resync signal was read: a normal event, queued behind the snapshot
    rest = slow.drain()
    assert sorted(e.name for e in rest if e.type == DELETED) == ["n3", "o0", "o2"]
    assert sorted(e.name for e in rest if e.type == ADDED) == ["n1", "n2", "o1"]
    assert all(e.initial for e in rest if e.type == ADDED)
    assert rest[-1].type == DELETED and rest[-1].name == "o2"


def test_batches_are_lazy_and_skip_objects_deleted_since() -> None:
    f = Feed()
    for i in range(5):
        f.put(f"b{i}", i + 1)
    s = f.sub(maxsize=1)
    s._offer_batch(f.store.keys(), initial=True)  # one slot, whatever the size
    f.put("b0", 20)
    assert s.pending() == 6 and s.overflows == 0
    f.store.delete("ns", "b1")  # gone before it was read (its delete event would follow)
    got = s.drain()
    assert kinds(got) == [(ADDED, "b0"), (ADDED, "b2"), (ADDED, "b3"), (ADDED, "b4"), (MODIFIED, "b0")]
    assert got[0].new["metadata"]["resourceVersion"] == "20"  # read when delivered


def test_narrowed_subscription_translates_enter_and_leave() -> None:
    f = Feed()
    s = f.sub(predicate=lambda o: o["metadata"]["labels"].get("tier") == "web")
    f.put("x", 1, tier="db")  # outside
    f.put("x", 2, tier="web")  # enters
    f.put("x", 3, tier="web", v="2")  # inside
    f.put("x", 4, tier="db")  # leaves
    f.put("x", 5, tier="db", v="3")  # outside
    f.delete("x")  # outside
    got = s.drain()
    assert kinds(got) == [(ADDED, "x"), (MODIFIED, "x"), (DELETED, "x")]
    assert got[0].old is None and got[2].old["metadata"]["labels"]["tier"] == "web"


async def test_a_long_replay_hands_the_loop_over_and_a_cancelled_reader_loses_nothing() -> None:
    f = Feed()
    n = 5 * YIELD_EVERY + 3
    for i in range(n):
        f.put(f"o{i:04d}", i + 1)
    s = f.sub()
    s._offer_batch(f.store.keys(), initial=True)
    ticks = 0
    most_between = 0  # events the reader got between two turns of the other task

    async def other() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    got: list[str] = []
    ticker = asyncio.create_task(other())
    await asyncio.sleep(0)
    seen_at = ticks
    run = 0
    while len(got) < 2 * YIELD_EVERY:
        got.append((await s.get()).name)
        run = run + 1 if ticks == seen_at else 1
        seen_at = ticks
        most_between = max(most_between, run)
    assert ticks > 1 and most_between <= YIELD_EVERY  # the other task ran while the replay went on

    reader = asyncio.create_task(s.get())  # due to yield first: cancelled there, it took nothing
    for _ in range(YIELD_EVERY + 2):
        if s._unyielded == 0 and not reader.done():
            break
        await asyncio.sleep(0)
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader
    got += [e.name for e in s.drain()]
    ticker.cancel()
    assert got == [f"o{i:04d}" for i in range(n)]  # every object once, in order


async def test_close_and_end() -> None:
    f = Feed()
    s = f.sub()
    f.put("a", 1)
    s._end()
    assert (await s.get()).name == "a"
    with pytest.raises(SubscriptionClosed):
        await s.get()
    t = f.sub()
    f.put("b", 2)
    t.close()
    assert t.closed and t.get_nowait() is None
    assert [e async for e in t] == []


def test_a_sink_takes_live_events_at_once_and_queued_ones_keep_their_order(caplog: pytest.LogCaptureFixture) -> None:
    f = Feed()
    f.put("a", 1)
    sunk: list[tuple[str, str]] = []
    s = f.sub(sink=lambda ev: sunk.append((ev.type, ev.name)))
    s._offer_batch(f.store.keys(), initial=True)  # a replay, as `Informer.subscribe` queues it
    f.put("b", 2)  # behind the replay: queued, not sunk
    assert sunk == [] and kinds(s.drain()) == [(ADDED, "a"), (ADDED, "b")]
    f.put("b", 3)
    f.delete("a")
    assert sunk == [(MODIFIED, "b"), (DELETED, "a")] and s.get_nowait() is None
    assert s.delivered == 4

    def broken(ev: Event) -> None:
        raise RuntimeError("sink bug")

    t = f.sub(sink=broken)
    f.put("c", 4)  # logged; the informer side goes on
    assert "sink bug" in caplog.text and t.get_nowait() is None
    t.close()
    f.put("c", 5)
    assert sunk[-1] == (MODIFIED, "c")


def test_narrowed_subscriber_behind_is_told_about_objects_that_left_its_scope() -> None:
    """Issue 11 item 8: an object that left a narrowed scope while the subscriber was behind reads as
    deleted after the resync (it is still in the broad store), and nothing of it lingers afterwards."""
    f = Feed()
    web = lambda o: o["metadata"]["labels"].get("tier") == "web"  # noqa: E731
    s = f.sub(maxsize=3, predicate=web)
    for name in ("a", "b", "c"):
        f.put(name, 1, tier="web")
    known = {e.name for e in s.drain() if e.type == ADDED}
    assert known == {"a", "b", "c"}
    f.put("x", 2, tier="web")
    f.put("y", 2, tier="web")
    f.put("z", 2, tier="web")
    f.put("w", 2, tier="web")  # overflow: the subscriber is behind from here
    f.put("a", 3, tier="db")  # leaves the scope while behind, stays in the store
    f.put("b", 3, tier="db")
    f.put("b", 4, tier="db", v="2")
    assert s.overflows == 1
    for ev in s.drain():
        if ev.type == DELETED:
            known.discard(ev.name)
        elif ev.type in (ADDED, MODIFIED):
            known.add(ev.name)
    assert known == {"c", "w", "x", "y", "z"}
    f.delete("a")  # later deletes of what left: nothing stale to tell any more
    f.put("c", 5, tier="db")
    assert kinds(s.drain()) == [(DELETED, "c")]
