"""The asyncio driver against an in-memory `WatchSource` (protocol fake, no HTTP)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

import pytest

from kubeloop.client import WatchEvent
from kubeloop.watch import (
    INIT,
    ErrorKind,
    InitDone,
    WatchConfig,
    Watcher,
    WatcherEvent,
    WatchState,
)

from .fakes import ApiFailure, FakeSource, Store, api_view, bookmark, obj, status

FAST = WatchConfig(backoff_initial=0.01, backoff_max=0.05, page_size=2)


async def until(events: AsyncGenerator[WatcherEvent, None], store: Store, pred: Callable[[], bool],
                within: float = 3.0) -> None:
    """Pull events into `store` until `pred()` holds."""
    async with asyncio.timeout(within):
        while not pred():
            store.apply(await anext(events))


async def poll(pred: Callable[[], bool], within: float = 2.0) -> None:
    """Wait for a condition on the fakes, which have no events to await."""
    async with asyncio.timeout(within):
        while not pred():  # noqa: ASYNC110
            await asyncio.sleep(0.005)


def seeded(n: int = 3) -> FakeSource:
    source = FakeSource()
    for i in range(n):
        source.api.put(f"o{i}")
    return source



class FirstWatchReplaced(FakeSource):
    """A source whose first watch is ``stream(source)`` instead of the API's history; later ones are real."""

    def __init__(self, api: Any, stream: Callable[[FakeSource], AsyncIterator[WatchEvent]]) -> None:
        super().__init__(api)
        self._first: Callable[[FakeSource], AsyncIterator[WatchEvent]] | None = stream

    def watch(self, **kw: Any) -> AsyncIterator[WatchEvent]:
        if self._first is None:
            return super().watch(**kw)
        stream, self._first = self._first, None
        self.watch_calls.append(kw)
        return stream(self)


async def test_lists_in_pages_then_follows_changes() -> None:
    source = seeded(5)
    watcher = Watcher(source, FAST)
    store = Store()
    async with contextlib.aclosing(watcher.events()) as events:
        await until(events, store, lambda: store.synced)
        assert store.view() == api_view(source.api)
        assert [c["continue_token"] is None for c in source.list_calls] == [True, False, False]
        source.api.put("o1")
        source.api.delete("o2")
        source.api.put("new")
        source.notify()
        await until(events, store, lambda: store.view() == api_view(source.api))
        assert watcher.synced and watcher.resource_version == str(source.api.rv)
    assert source.open_watches == 0
    assert watcher.state is WatchState.STOPPED


async def test_dropped_watch_resumes_from_the_last_rv_without_relisting() -> None:
    source = seeded()
    watcher = Watcher(source, FAST)
    store = Store()
    async with contextlib.aclosing(watcher.events()) as events:
        await until(events, store, lambda: store.synced)
        source.api.put("o0")
        source.notify()
        await until(events, store, lambda: store.view() == api_view(source.api))
        last = str(source.api.rv)
        source.drop()
        source.api.put("o9")
        source.notify()
        await until(events, store, lambda: store.view() == api_view(source.api))
    assert len(source.list_calls) == 2  # 3 objects, pages of 2: one list only
    assert [c["resource_version"] for c in source.watch_calls][-1] == last
    assert watcher.counters.watch_restarts == 1


async def test_410_relists_and_reports_objects_deleted_meanwhile() -> None:
    source = seeded(4)
    watcher = Watcher(source, FAST)
    store = Store()
    async with contextlib.aclosing(watcher.events()) as events:
        await until(events, store, lambda: store.synced)
        await asyncio.sleep(0.01)
        source.fail_watch.append(ApiFailure(410, "too old resource version"))
        source.api.delete("o1")
        source.api.compact()
        source.drop()  # the current watch ends; the next one gets a 410
        await until(events, store, lambda: store.deleted_by_diff == ["o1"])
        assert store.view() == api_view(source.api)
    assert watcher.counters.relists == 1
    assert watcher.last_error is not None and watcher.last_error.kind is ErrorKind.GONE


async def test_error_event_closes_the_stream_and_relists() -> None:
    source = seeded(1)
    source.scripts.append([WatchEvent("ADDED", obj("x", 100)), WatchEvent("ERROR", status(410, "Expired", "gone"))])
    watcher = Watcher(source, FAST)
    store = Store()
    seen: list[WatcherEvent] = []
    async with contextlib.aclosing(watcher.events()) as events:
        async with asyncio.timeout(3):
            while len([e for e in seen if isinstance(e, InitDone)]) < 2:
                e = await anext(events)
                seen.append(e)
                store.apply(e)
        # the stream that carried the ERROR was closed before the relist began
        assert (source.closed_watches, source.open_watches) == (1, 0)
    assert seen.count(INIT) == 2
    assert source.open_watches == 0


async def test_backoff_between_failures_then_recovery_and_state() -> None:
    source = seeded()
    message = 'configmaps is forbidden: User "bob" cannot list resource "configmaps"'
    source.fail_list += [ApiFailure(403, message), ApiFailure(403, message)]
    watcher = Watcher(source, WatchConfig(backoff_initial=0.05, backoff_max=0.1, backoff_jitter=0.0))
    store = Store()
    states: list[WatchState] = []
    started = time.monotonic()
    async with contextlib.aclosing(watcher.events()) as events:
        async def watch_state() -> None:
            while not store.synced:
                states.append(watcher.state)
                await asyncio.sleep(0.01)

        async with asyncio.TaskGroup() as tg:
            tg.create_task(watch_state())
            await until(events, store, lambda: store.synced)
    elapsed = time.monotonic() - started
    assert elapsed >= 0.05 + 0.1 - 0.01  # two backoff periods: 0.05 then 0.1
    assert WatchState.FORBIDDEN in states
    assert watcher.last_error is not None and watcher.last_error.message == message
    assert len(source.list_calls) == 3


async def test_stop_interrupts_a_backoff_sleep_promptly() -> None:
    source = seeded()
    source.fail_list.append(ApiFailure(503, "unavailable"))
    watcher = Watcher(source, WatchConfig(backoff_initial=30.0, backoff_max=30.0))
    got: list[WatcherEvent] = []

    async def consume() -> None:
        await watcher.run(got.append)

    async with asyncio.timeout(2):
        task = asyncio.create_task(consume())
        await poll(lambda: watcher.state is WatchState.BACKING_OFF)
        started = time.monotonic()
        watcher.stop()
        await task
    assert time.monotonic() - started < 0.5
    assert got == [] and watcher.state is WatchState.STOPPED


async def test_stop_interrupts_an_outstanding_list() -> None:
    source = seeded()
    source.list_delay = 30.0
    watcher = Watcher(source)
    async with asyncio.timeout(2):
        task = asyncio.create_task(watcher.run(lambda e: None))
        await poll(lambda: bool(source.list_calls))
        watcher.stop()
        await task


async def test_stop_closes_an_open_watch() -> None:
    source = seeded()
    watcher = Watcher(source, FAST)
    store = Store()

    async def on_event(e: WatcherEvent) -> None:
        store.apply(e)

    async with asyncio.timeout(2):
        task = asyncio.create_task(watcher.run(on_event))
        await poll(lambda: source.open_watches > 0)
        watcher.stop()
        await task
    assert source.open_watches == 0 and source.closed_watches == 1
    assert store.view() == api_view(source.api)


async def test_stop_from_inside_the_consumer() -> None:
    source = seeded(4)
    watcher = Watcher(source, FAST)
    got: list[WatcherEvent] = []

    def on_event(e: WatcherEvent) -> None:
        got.append(e)
        if len(got) == 2:
            watcher.stop()

    async with asyncio.timeout(2):
        await watcher.run(on_event)
    assert len(got) == 2


async def test_cancelling_the_consumer_cancels_the_watcher_and_closes_the_stream() -> None:
    source = seeded()
    watcher = Watcher(source, FAST)
    task = asyncio.create_task(watcher.run(lambda e: None))
    async with asyncio.timeout(2):
        await poll(lambda: source.open_watches > 0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert source.open_watches == 0
    assert watcher.state is WatchState.STOPPED


async def test_breaking_out_closes_the_stream() -> None:
    source = seeded()
    watcher = Watcher(source, FAST)
    store = Store()
    async with contextlib.aclosing(watcher.events()) as events:
        await until(events, store, lambda: store.synced)
        source.api.put("z")
        source.notify()
        await until(events, store, lambda: "z" in store.items)
        assert source.open_watches == 1
    assert source.open_watches == 0


async def test_a_watcher_runs_once() -> None:
    watcher = Watcher(seeded(), FAST)
    async with contextlib.aclosing(watcher.events()) as events:
        await anext(events)
    with pytest.raises(RuntimeError):
        await anext(watcher.events())


async def test_wake_retries_at_once() -> None:
    source = seeded()
    source.fail_list.append(ApiFailure(404, "the server could not find the requested resource"))
    watcher = Watcher(source, WatchConfig(backoff_initial=30.0, backoff_max=30.0))
    store = Store()
    async with contextlib.aclosing(watcher.events()) as events:
        async def wake_when_waiting() -> None:
            await poll(lambda: watcher.state is WatchState.WAITING_FOR_RESOURCE)
            await asyncio.sleep(0.02)
            watcher.wake()

        async with asyncio.TaskGroup() as tg:
            tg.create_task(wake_when_waiting())
            await until(events, store, lambda: store.synced, within=2)
    assert len(source.list_calls) == 2


async def test_idle_watch_is_abandoned_and_resumed() -> None:
    source = seeded(1)

    async def hang(src: FakeSource) -> AsyncIterator[WatchEvent]:
        src.open_watches += 1
        try:
            await asyncio.sleep(3600)
            yield WatchEvent("BOOKMARK", bookmark(1))
        finally:
            src.open_watches -= 1

    hanging = FirstWatchReplaced(source.api, hang)
    watcher = Watcher(hanging, WatchConfig(watch_timeout=(1, 1), idle_margin=0.0, backoff_initial=0.01))
    store = Store()
    async with contextlib.aclosing(watcher.events()) as events:
        await until(events, store, lambda: store.synced)
        hanging.api.put("after")
        started = time.monotonic()
        await until(events, store, lambda: "after" in store.items)
        assert time.monotonic() - started >= 0.9  # the idle deadline (1 s) passed first
    assert len(hanging.watch_calls) == 2
    assert watcher.last_error is not None and watcher.last_error.kind is ErrorKind.TIMEOUT
    assert hanging.open_watches == 0


async def test_idle_timer_does_not_fire_while_the_consumer_is_busy() -> None:
    source = seeded(1)
    watcher = Watcher(source, WatchConfig(watch_timeout=(1, 1), idle_margin=0.0))
    store = Store()
    async with contextlib.aclosing(watcher.events()) as events:
        await until(events, store, lambda: store.synced)
        source.api.put("slow")
        source.notify()
        e = await anext(events)
        store.apply(e)
        await asyncio.sleep(1.3)  # the consumer is slow, the stream is fine
        source.api.put("next")
        source.notify()
        await until(events, store, lambda: "next" in store.items)
    assert watcher.counters.errors == 0


async def test_streaming_list_through_the_driver() -> None:
    source = FakeSource()
    source.scripts.append([
        WatchEvent("ADDED", obj("a", 3)),
        WatchEvent("ADDED", obj("b", 2)),
        WatchEvent("BOOKMARK", bookmark(5, initial_end=True)),
        WatchEvent("MODIFIED", obj("a", 6)),
    ])
    watcher = Watcher(source, WatchConfig(streaming_list=True))
    store = Store()
    async with contextlib.aclosing(watcher.events()) as events:
        await until(events, store, lambda: store.synced and store.view().get("a") == 6)
    assert source.watch_calls[0]["send_initial_events"] is True
    assert source.watch_calls[0]["resource_version_match"] == "NotOlderThan"
    assert source.list_calls == []


async def test_streaming_rejected_falls_back_to_list() -> None:
    source = seeded(2)
    source.fail_watch.append(ApiFailure(422, "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch"))
    watcher = Watcher(source, WatchConfig(streaming_list=True))
    store = Store()
    async with contextlib.aclosing(watcher.events()) as events:
        await until(events, store, lambda: store.synced)
    assert store.view() == api_view(source.api)
    assert len(source.list_calls) == 1 and not watcher.machine.streaming_supported


async def test_watch_raising_synchronously_is_classified() -> None:
    source = seeded(1)

    class Broken(FakeSource):
        broken = 1

        def watch(self, **kw: Any) -> AsyncIterator[WatchEvent]:
            if self.broken:
                self.broken -= 1
                raise ConnectionRefusedError("refused")
            return super().watch(**kw)

    broken = Broken(source.api)
    watcher = Watcher(broken, FAST)
    store = Store()
    async with contextlib.aclosing(watcher.events()) as events:
        await until(events, store, lambda: store.synced)
        broken.api.put("later")
        await until(events, store, lambda: "later" in store.items)
    assert broken.broken == 0
    assert watcher.last_error is not None and watcher.last_error.kind is ErrorKind.TRANSPORT


class OpenableStream:
    """A stream with an explicit `open()`, like kubeloop.client's WatchStream."""

    def __init__(self, inner: AsyncIterator[WatchEvent], failure: BaseException | None) -> None:
        self._inner = inner
        self._failure = failure

    async def open(self) -> OpenableStream:
        await asyncio.sleep(0)
        if self._failure is not None:
            raise self._failure
        return self

    def __aiter__(self) -> OpenableStream:
        return self

    async def __anext__(self) -> WatchEvent:
        return await self._inner.__anext__()

    async def aclose(self) -> None:
        await self._inner.aclose()  # type: ignore[attr-defined]


async def test_an_accepted_watch_clears_forbidden_before_any_event() -> None:
    base = seeded(1)
    message = 'configmaps is forbidden: User "bob" cannot watch resource "configmaps"'

    class Openable(FakeSource):
        failures = [ApiFailure(403, message)]

        def watch(self, **kw: Any) -> AsyncIterator[WatchEvent]:
            failure = self.failures.pop(0) if self.failures else None
            return OpenableStream(super().watch(**kw), failure)

    source = Openable(base.api)
    watcher = Watcher(source, FAST)
    states: list[WatchState] = []

    async def record(e: WatcherEvent) -> None:
        states.append(watcher.state)

    task = asyncio.create_task(watcher.run(record))
    try:
        await poll(lambda: watcher.state is WatchState.FORBIDDEN)
        assert watcher.last_error is not None and watcher.last_error.message == message
        await poll(lambda: watcher.state is WatchState.WATCHING and source.open_watches == 1)
    finally:
        watcher.stop()
        await task
    assert len(source.watch_calls) == 2
    assert len(source.list_calls) == 1  # a 403 on the watch does not relist


def _replay_one_at_a_time(src: FakeSource) -> AsyncIterator[WatchEvent]:
    async def replay() -> AsyncIterator[WatchEvent]:
        stale = src.api.objects["o0"]
        while True:  # the same old object, over and over: never newer than the list
            yield WatchEvent("MODIFIED", stale)
            await asyncio.sleep(0.05)
    return replay()


def _replay_in_batches(src: FakeSource) -> Runs:
    class Replay(Runs):
        async def batches(self) -> list[WatchEvent]:  # a stream with batches(): read through it
            await asyncio.sleep(0.05)
            stale = src.api.objects["o0"]
            return [WatchEvent("MODIFIED", stale), WatchEvent("MODIFIED", stale)]
    return Replay([])


@pytest.mark.parametrize("stream", [_replay_one_at_a_time, _replay_in_batches], ids=["events", "batches"])
async def test_a_watch_replaying_only_stale_events_is_restarted(stream: Callable[[FakeSource], Any]) -> None:
    """Issue 11 item 10: bytes are not progress; a stream stuck on old events is a stalled watch,
    whether the watcher reads it an event or a run of events at a time."""
    source = seeded(1)
    replaying = FirstWatchReplaced(source.api, stream)
    watcher = Watcher(replaying, WatchConfig(watch_timeout=(1, 1), idle_margin=0.0, backoff_initial=0.01))
    store = Store()
    async with contextlib.aclosing(watcher.events()) as events:
        await until(events, store, lambda: store.synced)
        replaying.api.put("after")
        await until(events, store, lambda: "after" in store.items, within=4.0)
    assert len(replaying.watch_calls) == 2
    assert watcher.last_error is not None and watcher.last_error.kind is ErrorKind.TIMEOUT
    assert watcher.counters.stale_events >= 5


async def test_broken_streams_are_warnings_rate_limited(caplog: pytest.LogCaptureFixture) -> None:
    """Issue 11 item 13: a malformed line or a cut stream is a WARNING, not a DEBUG line."""

    class MalformedWatchLine(Exception):  # the client's error is a WatchStreamError: a transport error
        pass

    class WatchStreamError(MalformedWatchLine):
        pass

    source = seeded(1)
    for _ in range(3):
        source.scripts.append([WatchEvent("BOOKMARK", bookmark(source.api.rv)), WatchStreamError("malformed watch line: b'{not json'")])
    watcher = Watcher(source, FAST, name="configmaps")
    store = Store()
    with caplog.at_level("WARNING", logger="kubeloop.watch"):
        async with contextlib.aclosing(watcher.events()) as events:
            await until(events, store, lambda: store.synced)
            source.api.put("after")
            source.notify()
            await until(events, store, lambda: "after" in store.items)
    warnings = [r for r in caplog.records if r.levelname == "WARNING" and "malformed" in r.getMessage()]
    assert len(warnings) == 1, [r.getMessage() for r in caplog.records]  # rate-limited: 3 breaks, 1 line
    assert "configmaps" in warnings[0].getMessage()


async def test_a_refused_watch_request_is_not_a_broken_stream(caplog: pytest.LogCaptureFixture) -> None:
    source = seeded(1)
    source.fail_watch.append(ApiFailure(500, "etcd is sad"))
    watcher = Watcher(source, FAST)
    store = Store()
    with caplog.at_level("WARNING", logger="kubeloop.watch"):
        async with contextlib.aclosing(watcher.events()) as events:
            await until(events, store, lambda: store.synced)
            source.api.put("after")
            source.notify()
            await until(events, store, lambda: "after" in store.items)
    assert watcher.counters.errors >= 1
    assert not [r for r in caplog.records if r.levelname == "WARNING"]


class Runs:
    """A stream that hands over runs of events through `batches()` (as `kubeloop.client.WatchStream`
    does), then ends; reading it one event at a time is a test failure."""

    def __init__(self, runs: list[list[WatchEvent]]) -> None:
        self.runs = runs
        self.closed = False

    def __aiter__(self) -> Runs:
        return self

    async def __anext__(self) -> WatchEvent:
        raise AssertionError("a stream with batches() is read through it")

    async def batches(self) -> list[WatchEvent]:
        await asyncio.sleep(0)
        return self.runs.pop(0) if self.runs else []

    async def aclose(self) -> None:
        self.closed = True


async def test_a_batching_stream_stops_at_an_error_event_and_resumes() -> None:
    """Events after an ERROR in the same run came from a broken stream: none is applied, and the
    watch resumes from the last good event."""
    source = seeded(1)
    written: list[dict[str, Any]] = []

    class Changing(Runs):
        async def batches(self) -> list[WatchEvent]:
            await asyncio.sleep(0)
            if written:
                return []
            written.extend([source.api.put("a"), source.api.put("b")])  # while the watch is open
            return [WatchEvent("MODIFIED", written[0]), WatchEvent("ERROR", status(500, "InternalError", "boom")),
                    WatchEvent("MODIFIED", obj("b", 99, bogus="yes"))]

    first = Changing([])
    runs = FirstWatchReplaced(source.api, lambda _: first)
    watcher = Watcher(runs, FAST)
    store = Store()
    async with contextlib.aclosing(watcher.events()) as events:
        await until(events, store, lambda: bool(written) and store.items.get("b") == written[1])
    assert first.closed and store.view() == api_view(source.api)
    assert [c["resource_version"] for c in runs.watch_calls][-1] == written[0]["metadata"]["resourceVersion"]
    assert watcher.last_error is not None and watcher.last_error.kind is ErrorKind.SERVER


async def test_stop_from_inside_the_consumer_in_the_middle_of_a_run() -> None:
    source = seeded(1)
    first = Runs([[WatchEvent("ADDED", obj(f"n{i}", 10 + i)) for i in range(3)]])
    watcher = Watcher(FirstWatchReplaced(source.api, lambda _: first), FAST)
    got: list[WatcherEvent] = []

    def on_event(e: WatcherEvent) -> None:
        got.append(e)
        if getattr(e, "obj", None) is not None and e.obj["metadata"]["name"] == "n0":  # type: ignore[attr-defined]
            watcher.stop()

    async with asyncio.timeout(2):
        await watcher.run(on_event)
    assert got[-1].obj["metadata"]["name"] == "n0"  # type: ignore[attr-defined]
    assert first.closed


async def test_event_batches_carry_the_same_events_as_events() -> None:
    one, two = seeded(5), seeded(5)
    by_event, by_batch = Store(), Store()
    w1, w2 = Watcher(one, FAST), Watcher(two, FAST)
    async with contextlib.aclosing(w1.events()) as events:
        await until(events, by_event, lambda: by_event.synced)
    async with contextlib.aclosing(w2.event_batches()) as batches, asyncio.timeout(3):
        async for batch in batches:
            assert batch
            by_batch.feed(batch)
            if by_batch.synced:
                break
    assert by_batch.view() == by_event.view() == api_view(two.api)
