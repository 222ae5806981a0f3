"""The asyncio driver around `WatchMachine`: it only moves bytes and time.

`Watcher(source, config)` runs the machine's actions against a `WatchSource` and yields the
machine's output events:

    watcher = Watcher(source, WatchConfig())
    async with contextlib.aclosing(watcher.events()) as events:
        async for event in events:      # Init, InitApply, InitDone, Apply, Delete
            ...

or `await watcher.run(callback)`, or `watcher.event_batches()` for consumers that take the events
in lists (the informer: no async-generator round trip per event). Structured concurrency: the loop
runs inside the consumer's own task (an async generator), so the watcher owns no background task
and cannot leak one. `stop()` (from any task, or from the consumer itself) ends the stream cleanly:
an outstanding request or backoff sleep is interrupted, the watch stream is closed, and the
iteration finishes without an exception. Cancelling the consumer's task cancels the watcher with it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import random
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from contextlib import aclosing
from typing import Any, TypeVar

from kubeloop.watch._actions import List, Sleep, Watch
from kubeloop.watch._config import WatchConfig
from kubeloop.watch._errors import ErrorKind, WatchError, classify_exception
from kubeloop.watch._machine import WatchCounters, WatchMachine
from kubeloop.watch._outputs import WatcherEvent
from kubeloop.watch._phases import WatchState
from kubeloop.watch._source import EventLike, ListPage, WatchSource

log = logging.getLogger("kubeloop.watch")

T = TypeVar("T")

WARN_INTERVAL = 60.0
"""Seconds between two WARNING logs of broken watch streams, per watcher."""

_STOP = "stop"
_WAKE = "wake"
_IDLE = "idle"
_TIMER = "timer"


class _Interrupted(Exception):
    """An await of ours was cut short by `stop()`, `wake()` or the idle timer."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def _next_one(iterator: AsyncIterator[EventLike]) -> list[EventLike]:
    """A stream without `batches()`, read as batches of one ([] at its end)."""
    try:
        return [await anext(iterator)]
    except StopAsyncIteration:
        return []


class Watcher:
    """Runs one list+watch loop for one scope; see the module docstring."""

    def __init__(
        self,
        source: WatchSource,
        config: WatchConfig | None = None,
        *,
        name: str = "",
        rng: random.Random | None = None,
        classify: Callable[[BaseException], WatchError] = classify_exception,
        on_failure: Callable[[], None] | None = None,
    ) -> None:
        self.source = source
        self.on_failure = on_failure
        """Called after every failure the machine took in (its `state` and `last_error` are current):
        whoever waits on this watcher (an informer's first list) re-checks without a timer."""
        self.name = name or type(source).__name__
        self.machine = WatchMachine(config, rng=rng)
        self._classify = classify
        self._started = False
        self._stop_requested = False
        self._io_task: asyncio.Task[Any] | None = None
        self._interrupt: str | None = None
        self._sleeping = False
        self._reading = False
        self._read_started = 0.0
        self._idle_timeout = 0.0
        self._idle_handle: asyncio.TimerHandle | None = None
        self._timer_handle: asyncio.TimerHandle | None = None  # the machine's `timer`, while reading
        self._timer_at: float | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._reported: tuple[WatchState, WatchError | None] | None = None
        self._pending: list[WatcherEvent] = []  # the machine's answer to a failed connect
        self._warned_at: float | None = None
        self._unwarned = 0

    # ------------------------------------------------------------------ observation

    @property
    def config(self) -> WatchConfig:
        """The settings in use."""
        return self.machine.config

    @property
    def state(self) -> WatchState:
        """See `WatchMachine.state`."""
        return self.machine.state

    @property
    def last_error(self) -> WatchError | None:
        """See `WatchMachine.last_error`."""
        return self.machine.last_error

    @property
    def synced(self) -> bool:
        """True once the first list completed."""
        return self.machine.synced

    @property
    def resource_version(self) -> str | None:
        """The resourceVersion the next watch resumes from."""
        return self.machine.resource_version

    def describe(self) -> str:
        """See `WatchMachine.describe` (e.g. "Forbidden 403: pods is forbidden: ...")."""
        return self.machine.describe()

    @property
    def counters(self) -> WatchCounters:
        """Counters for metrics (live object)."""
        return self.machine.counters

    # ------------------------------------------------------------------ control

    def stop(self) -> None:
        """End the event stream cleanly (idempotent; safe from any task of the same loop)."""
        self._stop_requested = True
        self._cancel_io(_STOP)

    def wake(self) -> None:
        """Retry now instead of finishing the current backoff (e.g. a CRD just appeared)."""
        self.machine.wake()
        if self._sleeping:
            self._cancel_io(_WAKE)

    async def run(self, callback: Callable[[WatcherEvent], Awaitable[None] | None]) -> None:
        """Feed every event to `callback` (sync or async) until `stop()`."""
        async with aclosing(self.events()) as events:
            async for event in events:
                result = callback(event)
                if inspect.isawaitable(result):
                    await result

    async def events(self) -> AsyncGenerator[WatcherEvent, None]:
        """The output events, until `stop()`. A watcher runs once; iterate it from one task."""
        async with aclosing(self.event_batches()) as batches:
            async for batch in batches:
                for event in batch:
                    yield event
                    if self._stop_requested:
                        return

    async def event_batches(self) -> AsyncGenerator[list[WatcherEvent], None]:
        """The output events in non-empty lists, until `stop()`: one per list page, one per run of
        watch events the stream had already received (see `WatchSource.watch`).

        The same events in the same order as `events()`, for consumers that handle them in bulk:
        one async-generator round trip per list instead of per event. `stop()` takes effect between
        lists; a consumer that may call it while handling one checks its own flag. A watcher runs
        once; iterate it from one task.
        """
        if self._started:
            raise RuntimeError("a Watcher runs once; create a new one")
        self._started = True
        loop = self._loop = asyncio.get_running_loop()
        m = self.machine
        try:
            while not self._stop_requested:
                action = m.next_action(loop.time())
                if action is None:
                    return
                if isinstance(action, Sleep):
                    if not await self._sleep(action.seconds):
                        return
                    continue
                if isinstance(action, List):
                    streamed = getattr(self.source, "list_stream", None)
                    if streamed is None:
                        out = await self._list(action, loop)
                        if out:
                            yield out
                        continue
                    async with aclosing(self._list_streamed(streamed, action, loop)) as batches:
                        async for batch in batches:
                            yield batch
                            if self._stop_requested:
                                return
                    continue
                async with aclosing(self._watch(action, loop)) as batches:
                    async for batch in batches:
                        yield batch
                        if self._stop_requested:
                            return
        finally:
            m.stop()
            self._cancel_idle_timer()

    # ------------------------------------------------------------------ internals

    async def _sleep(self, seconds: float) -> bool:
        """Back off; False when `stop()` cut the sleep short."""
        self._sleeping = True
        try:
            await self._io(asyncio.sleep(seconds))
        except _Interrupted as exc:
            return exc.reason != _STOP
        finally:
            self._sleeping = False
        return True

    async def _list(self, action: List, loop: asyncio.AbstractEventLoop) -> list[WatcherEvent]:
        m = self.machine
        try:
            page = await self._io(self.source.list_page(
                limit=action.limit,
                continue_token=action.continue_token,
                resource_version=action.resource_version,
                resource_version_match=action.resource_version_match,
            ))
        except _Interrupted:  # stop()
            return []
        except Exception as exc:
            out = m.on_list_error(self._classify(exc), loop.time())
            self._report("list")
            return out
        return m.on_list_page(page, loop.time())

    async def _list_streamed(self, open_list: Callable[..., Any], action: List,
                             loop: asyncio.AbstractEventLoop) -> AsyncGenerator[list[WatcherEvent], None]:
        """One LIST read as it arrives (the source's `list_stream`): its items go to the machine,
        and on to the consumer, a few at a time while the rest is still on the wire."""
        m = self.machine
        stream: Any = None
        out: list[WatcherEvent] = []
        try:
            stream = open_list(limit=action.limit, continue_token=action.continue_token,
                               resource_version=action.resource_version,
                               resource_version_match=action.resource_version_match)
            await self._io(stream.open())
            while True:
                items = await self._io(stream.batches())
                if not items:
                    break
                out = m.on_list_items(items, loop.time())
                if out:
                    yield out
                    out = []
                if self._stop_requested:
                    return
            page = ListPage((), stream.resource_version, stream.continue_token)
        except _Interrupted:  # stop()
            return
        except Exception as exc:
            out = m.on_list_error(self._classify(exc), loop.time())
            self._report("list")
        else:
            out = m.on_list_page(page, loop.time())
        finally:
            if stream is not None:
                try:
                    await stream.aclose()
                except Exception as exc:  # closing a broken response may fail; nothing to do about it
                    log.debug("%s: closing the list response failed: %r", self.name, exc)
        if out:
            yield out

    async def _watch(self, action: Watch,
                     loop: asyncio.AbstractEventLoop) -> AsyncGenerator[list[WatcherEvent], None]:
        m = self.machine
        try:
            stream = self.source.watch(
                resource_version=action.resource_version,
                resource_version_match=action.resource_version_match,
                timeout_seconds=action.timeout_seconds,
                allow_bookmarks=action.allow_bookmarks,
                send_initial_events=action.send_initial_events,
            )
            iterator = stream.__aiter__()
        except Exception as exc:
            out = m.on_watch_error(self._classify(exc), loop.time())
            if out:
                yield out
            self._report("watch")
            return
        self._idle_timeout = action.idle_timeout
        self._read_started = loop.time()
        self._idle_handle = loop.call_at(self._read_started + action.idle_timeout, self._idle_check)
        try:
            opener = getattr(stream, "open", None)
            # A stream that can connect explicitly (kubeloop.client's WatchStream) tells us the
            # server accepted the watch before any event: readiness recovers at once.
            if opener is None or await self._open(opener, action, loop):
                async with aclosing(self._read(iterator, action, loop, accepted=opener is not None)) as batches:
                    async for batch in batches:
                        yield batch
            elif self._pending:
                yield self._pending
        finally:
            self._pending = []
            self._cancel_idle_timer()
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                try:
                    await aclose()
                except Exception as exc:  # closing a broken stream may fail; nothing to do about it
                    log.debug("%s: closing the watch stream failed: %r", self.name, exc)

    async def _open(self, opener: Callable[[], Awaitable[Any]], action: Watch,
                    loop: asyncio.AbstractEventLoop) -> bool:
        """Connect; False (with the machine's events in `_pending`) when that failed or was stopped."""
        m = self.machine
        self._reading = True
        try:
            await self._io(opener())
        except _Interrupted as exc:
            if exc.reason == _IDLE:
                error = WatchError(ErrorKind.TIMEOUT, f"watch not answered within {action.idle_timeout:.0f}s")
                self._pending = m.on_watch_error(error, loop.time())
                self._report("watch")
            return False
        except Exception as exc:
            self._pending = m.on_watch_error(self._classify(exc), loop.time())
            self._report("watch")
            return False
        finally:
            self._reading = False
        m.on_watch_started(loop.time())
        return True

    async def _read(self, iterator: AsyncIterator[EventLike], action: Watch, loop: asyncio.AbstractEventLoop,
                    *, accepted: bool) -> AsyncGenerator[list[WatcherEvent], None]:
        """Feed the stream's events to the machine until it ends, fails, stalls or is closed.

        A stream with `batches()` hands over every event it has already received in one call (one
        interruptible await per run of events, not per event); any other is read one event at a time.

        The idle deadline runs from the last progress (an event that moved the resourceVersion, a
        bookmark) or from when the consumer handed control back, whichever is later: a stream that
        only replays stale events is stalled as surely as a silent one, and a slow consumer is not.
        """
        m = self.machine
        batches: Callable[[], Awaitable[Sequence[EventLike]]] | None = getattr(iterator, "batches", None)
        read = batches if batches is not None else lambda: _next_one(iterator)
        # Until the server accepted the watch (explicit open, or a first event), a failure is a
        # refused request (logged as such), not a broken stream.
        while True:
            self._arm_timer(loop)
            self._reading = True
            try:
                raw = await self._io(read())
            except _Interrupted as exc:
                if exc.reason == _TIMER:  # the machine's own deadline (a streaming list's)
                    self._reading = False
                    out = m.on_timer(loop.time())
                    if out:
                        yield out
                    if not m.watch_open:
                        self._report("watch")
                        return
                    continue
                if exc.reason != _IDLE:
                    return
                error = WatchError(ErrorKind.TIMEOUT, f"watch made no progress (no event, no bookmark) "
                                   f"for {action.idle_timeout:.0f}s")
                out = m.on_watch_error(error, loop.time())
                self._report("watch", stream=True)
            except Exception as exc:
                out = m.on_watch_error(self._classify(exc), loop.time())
                self._report("watch stream" if accepted else "watch", stream=accepted)
            else:
                if raw:
                    accepted = True
                    out = m.on_watch_events(raw, loop.time())
                    if out:
                        self._reading = False
                        yield out
                        self._read_started = loop.time()  # the consumer's time does not count
                    if not m.watch_open:
                        self._report("watch")
                        return
                    continue
                out = m.on_watch_ended(loop.time())  # the stream ended
                self._report("watch ended")
            finally:
                self._reading = False
            if out:
                yield out
            return

    async def _io(self, awaitable: Awaitable[T]) -> T:
        """Await something that `stop()`, `wake()` or the idle timer may interrupt."""
        task = asyncio.current_task(self._loop)  # the loop given: no getpid() per event on Python < 3.12
        self._io_task = task
        try:
            result = await awaitable
        except BaseException:
            # Usually the CancelledError we sent; but the awaitable may have failed at the same
            # moment, in which case the interruption still wins (and our cancel is withdrawn).
            reason = self._interrupt
            if reason is not None and task is not None:
                self._interrupt = None
                if task.uncancel() == 0:
                    raise _Interrupted(reason) from None
            raise
        finally:
            self._io_task = None
        if self._interrupt is not None and task is not None:
            # The awaitable swallowed our cancellation: honour the interruption anyway.
            reason, self._interrupt = self._interrupt, None
            task.uncancel()
            raise _Interrupted(reason)
        return result

    def _cancel_io(self, reason: str) -> None:
        task = self._io_task
        if task is not None and self._interrupt is None and not task.done():
            self._interrupt = reason
            task.cancel()

    def _idle_check(self) -> None:
        self._idle_handle = None
        loop = self._loop
        if loop is None:
            return
        now = loop.time()
        progress = self.machine.last_progress
        start = self._read_started if progress is None else max(progress, self._read_started)
        deadline = start + self._idle_timeout
        if self._reading and now >= deadline:
            self._cancel_io(_IDLE)
            return
        # Not reading (the consumer is busy with an event) or progress was made: check again later.
        next_check = deadline if self._reading else now + self._idle_timeout
        self._idle_handle = loop.call_at(max(next_check, now), self._idle_check)

    def _cancel_idle_timer(self) -> None:
        if self._idle_handle is not None:
            self._idle_handle.cancel()
            self._idle_handle = None
        if self._timer_handle is not None:
            self._timer_handle.cancel()
            self._timer_handle = None
        self._timer_at = None

    def _arm_timer(self, loop: asyncio.AbstractEventLoop) -> None:
        """Interrupt the read at the machine's `timer` (the same one stays armed; a past one fires
        at once)."""
        when = self.machine.timer
        if when == self._timer_at and (when is None or self._timer_handle is not None):
            return
        if self._timer_handle is not None:
            self._timer_handle.cancel()
            self._timer_handle = None
        self._timer_at = when
        if when is not None:
            self._timer_handle = loop.call_at(when, self._timer_due)

    def _timer_due(self) -> None:
        self._timer_handle = None
        if self._reading:
            self._cancel_io(_TIMER)

    def _report(self, what: str, *, stream: bool = False) -> None:
        """Log state changes and failures: loudly for 403/404 and broken streams, else quietly.

        A malformed line or a cut stream (`stream=True`) is logged at WARNING, at most once per
        `WARN_INTERVAL` seconds per watcher (with how many were not logged): they mean a proxy or a
        server misbehaves, which a user must hear about, but a flapping link must not flood the log.
        """
        m = self.machine
        error = m.last_error
        if self.on_failure is not None:
            self.on_failure()
        if stream and error is not None:
            self._warn_stream(what, error)
        key = (m.state, error)
        if key == self._reported:
            return
        self._reported = key
        if m.state is WatchState.FORBIDDEN and error is not None:
            log.warning("%s: %s forbidden, retrying with backoff: %s", self.name, what, error.message)
        elif m.state is WatchState.WAITING_FOR_RESOURCE and error is not None:
            log.warning("%s: resource not served (CRD not installed?), waiting: %s", self.name, error.message)
        elif error is not None and not stream:
            log.debug("%s: %s: %s (state %s)", self.name, what, error, m.state.value)

    def _warn_stream(self, what: str, error: WatchError) -> None:
        now = self._loop.time() if self._loop is not None else 0.0
        if self._warned_at is not None and now - self._warned_at < WARN_INTERVAL:
            self._unwarned += 1
            return
        more = f" ({self._unwarned} more since the last warning)" if self._unwarned else ""
        log.warning("%s: %s broken, resuming: %s%s", self.name, what, error, more)
        self._warned_at = now
        self._unwarned = 0
