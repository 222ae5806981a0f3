"""The asyncio shell around :class:`~kubeloop.queue._core.WorkQueueCore`.

Adds are synchronous (callable from informer callbacks on the event loop
thread); ``await get()`` returns at once when a key is ready and otherwise
parks on a future that is woken by an add, a ``done`` or the single timer armed
for the earliest delayed key. No polling, no busy waiting. Time (ready times, backoff, debounce, the
timer) comes from the queue's `~kubeloop.queue.Clock`: real by default, virtual in tests.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from kubeloop.meta import REAL_CLOCK, Clock, Timer, check_clock
from kubeloop.metrics import WORKQUEUE_COLLECTOR, WorkQueueSnapshot
from kubeloop.queue._core import DEFAULT_PRIORITY, DEFAULT_STARVATION_EVERY, WorkQueueCore
from kubeloop.queue._errors import QueueShutDown
from kubeloop.queue._rate_limit import RateLimiter
from kubeloop.queue._stats import QueueStats

K = TypeVar("K", bound=Hashable)


class WorkQueue(Generic[K]):
    """A controller work queue: dedup, one worker per key, delays, backoff, priorities, debounce.

    ``name`` turns on the ``workqueue_*`` metrics (labels ``name`` and
    ``controller``) in :data:`kubeloop.metrics.REGISTRY`; ``name=None`` costs nothing.
    ``clock``: where delays are measured and timers armed (default: real time).
    Not thread-safe: use it from its event loop's thread only.
    """

    def __init__(
        self,
        name: str | None = None,
        *,
        rate_limiter: RateLimiter | None = None,
        debounce: float = 0.0,
        debounce_max_wait: float | None = None,
        starvation_every: int = DEFAULT_STARVATION_EVERY,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self.name = name
        self.clock = check_clock(clock)
        self._clock = clock.monotonic
        self._stats = QueueStats() if name is not None else None
        self._core: WorkQueueCore[K] = WorkQueueCore(
            rate_limiter=rate_limiter,
            debounce=debounce,
            debounce_max_wait=debounce_max_wait,
            starvation_every=starvation_every,
            stats=self._stats,
        )
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._drain_waiters: list[asyncio.Future[None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: Timer | None = None
        self._timer_at = float("inf")
        if name is not None:
            WORKQUEUE_COLLECTOR.register(self)

    @property
    def core(self) -> WorkQueueCore[K]:
        """The underlying state machine (for introspection)."""
        return self._core

    # ------------------------------------------------------------------ adds (sync)

    def add(self, key: K, priority: int = DEFAULT_PRIORITY) -> None:
        """Queue ``key``; a key already queued keeps one slot (highest priority, earliest time)."""
        self._core.add(key, now=self._clock(), priority=priority)
        if self._waiters:
            self._on_change()

    def add_after(self, key: K, delay: float, priority: int = DEFAULT_PRIORITY) -> None:
        """Queue ``key`` to become ready in ``delay`` seconds (an earlier request wins)."""
        self._core.add_after(key, delay, now=self._clock(), priority=priority)
        if self._waiters:
            self._on_change()

    def add_rate_limited(self, key: K, priority: int = DEFAULT_PRIORITY) -> float:
        """Queue ``key`` after its backoff delay (a retry after a failure); returns the delay."""
        delay = self._core.add_rate_limited(key, now=self._clock(), priority=priority)
        if self._waiters:
            self._on_change()
        return delay

    def forget(self, key: K) -> None:
        """Reset ``key``'s backoff (after a successful reconcile)."""
        self._core.forget(key)

    def num_requeues(self, key: K) -> int:
        """Rate-limited requeues of ``key`` since it was last forgotten."""
        return self._core.num_requeues(key)

    def discard_if(self, pred: Callable[[K], bool]) -> int:
        """Drop every queued key ``pred`` accepts (e.g. the requests of a removed cluster); returns how many."""
        core = self._core
        return sum(core.discard(key) for key in core.queued_keys() if pred(key))

    # ------------------------------------------------------------------ get / done

    async def get(self) -> K:
        """Wait for the next ready key; the caller must call :meth:`done` with it.

        Raises :class:`QueueShutDown` once :meth:`shutdown` was called.
        """
        while (key := self._core.pop(self._clock())) is None:
            await self._wait()
        return key

    async def get_with_priority(self) -> tuple[K, int]:
        """Like :meth:`get`, also returning the priority the key was queued with (to requeue it
        at that priority)."""
        while (item := self._core.pop_with_priority(self._clock())) is None:
            await self._wait()
        return item

    def done(self, key: K) -> None:
        """Finish processing ``key``; if it was added meanwhile it is queued once more."""
        core = self._core
        core.done(key, now=self._clock())
        if self._waiters:
            self._on_change()
        if self._drain_waiters and not core.processing_count:
            self._release_drain_waiters()

    async def _wait(self) -> None:
        """Park until a key may be ready, or raise `QueueShutDown` once shut down (the core hands
        out nothing then): the one place ``get`` and ``get_with_priority`` learn of a shutdown."""
        if self._core.shutting_down:
            raise QueueShutDown("work queue is shut down")
        loop = asyncio.get_running_loop()
        self._loop = loop
        fut: asyncio.Future[None] = loop.create_future()
        self._waiters.append(fut)
        self._arm_timer()
        try:
            await fut
        except BaseException:
            fut.cancel()
            try:
                self._waiters.remove(fut)
            except ValueError:
                pass
            if fut.done() and not fut.cancelled():
                # We were woken for a key but will not take it: pass the wake-up on.
                self._on_change()
            raise

    def _on_change(self) -> None:
        if self._core.ready_count:
            self._wake_one()
        if self._waiters:
            self._arm_timer()

    def _wake_one(self) -> None:
        waiters = self._waiters
        while waiters:
            fut = waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                return

    def _arm_timer(self) -> None:
        deadline = self._core.next_deadline()
        if deadline is None or self._loop is None:
            return
        if self._timer is not None:
            if self._timer_at <= deadline:
                return
            self._timer.cancel()
        self._timer_at = deadline
        self._timer = self.clock.call_at(deadline, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._timer_at = float("inf")
        if self._core.shutting_down or not self._waiters:
            return
        self._core.promote_due(self._clock())
        for _ in range(min(self._core.ready_count, len(self._waiters))):
            self._wake_one()
        if self._waiters:
            self._arm_timer()

    # ------------------------------------------------------------------ shutdown

    def shutdown(self) -> None:
        """Stop handing out keys: waiting and future ``get()`` calls raise :class:`QueueShutDown`."""
        self._core.shutdown()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            self._timer_at = float("inf")
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)
        if not self._core.processing_count:
            self._release_drain_waiters()

    async def shutdown_and_drain(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Shut down, then wait until every in-flight key is ``done``; False if ``timeout`` expired first."""
        self.shutdown()
        if not self._core.processing_count:
            return True
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._drain_waiters.append(fut)
        try:
            async with asyncio.timeout(timeout):
                await fut
        except TimeoutError:
            return False
        finally:
            if fut in self._drain_waiters:
                self._drain_waiters.remove(fut)
        return True

    def _release_drain_waiters(self) -> None:
        waiters, self._drain_waiters = self._drain_waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    @property
    def shutting_down(self) -> bool:
        """True once :meth:`shutdown` was called."""
        return self._core.shutting_down

    # ------------------------------------------------------------------ introspection

    def __len__(self) -> int:
        """Keys queued (ready, delayed, or queued again behind their own run)."""
        return len(self._core)

    def __contains__(self, key: object) -> bool:
        """True if ``key`` is queued."""
        return key in self._core

    def is_processing(self, key: K) -> bool:
        """True while ``key`` is handed out and not yet done."""
        return self._core.is_processing(key)

    @property
    def processing_count(self) -> int:
        """Keys handed out and not yet done."""
        return self._core.processing_count

    def metrics_snapshot(self) -> WorkQueueSnapshot:
        """The queue's ``workqueue_*`` values now (read by :data:`kubeloop.metrics.WORKQUEUE_COLLECTOR`)."""
        stats = self._stats if self._stats is not None else QueueStats()
        now = self._clock()
        # tuple() copies in one C call (atomic under the GIL): a scrape from another thread is safe.
        starts = tuple(self._core.processing_started())
        running = [now - started for started in starts]
        return WorkQueueSnapshot(
            name=self.name or "",
            depth=self._core.depth,
            adds=stats.adds,
            retries=stats.retries,
            queue_duration=stats.queue_duration.sample(),
            work_duration=stats.work_duration.sample(),
            unfinished_work_seconds=sum(running),
            longest_running_processor_seconds=max(running, default=0.0),
        )
