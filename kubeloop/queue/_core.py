"""The work queue's state machine: plain synchronous code, time passed in.

Why a separate core: every guarantee of the queue (dedup, one worker per key,
re-run after ``done``, delays, backoff, priorities, starvation guard, debounce)
lives here and is tested with a fake clock; the asyncio shell
(:mod:`kubeloop.queue._workqueue`) only turns "nothing ready" into waiting.

State of a key:

* absent: not queued and not being processed;
* *waiting*: queued with a ready time in the future (``add_after``, backoff, debounce);
* *ready*: queued and can be handed out now;
* *processing*: handed out by ``pop`` and not yet ``done``;
* *blocked*: being processed **and** queued again meanwhile; it is placed
  (ready or waiting) when ``done`` is called, so it runs exactly once more.

Ordering: higher priority first, FIFO within a priority (by the time the key
became ready). Re-adding a queued key keeps the highest priority and the
earliest ready time (controller-runtime's priority queue).

Starvation guard (controller-runtime issue #3496): when keys of more than one
priority are ready, every ``starvation_every``-th hand-out takes the key that
has been ready longest instead of the highest-priority one. Low-priority keys
(e.g. ``LOW_PRIORITY`` adds from an informer's initial list) therefore get at
least 1/N of the throughput under a steady stream of priority-0 adds, while
priority still orders everything else. A count, not an age, so the guarantee
holds whatever the processing speed.

Debounce (kube-rs): with ``debounce=d`` a plain ``add`` makes the key ready
only after it has been quiet for ``d`` seconds (each add pushes it to
``now + d``), but never later than ``debounce_max_wait`` after the first add of
the burst, so a constantly changing key still runs. A key that is already
ready is left alone (it is about to run and will read the latest state).
``add_after`` and rate-limited adds are not debounced: they keep their delay.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Hashable, Iterable
from itertools import count
from typing import Generic, TypeVar

from kubeloop.queue._rate_limit import RateLimiter, default_rate_limiter
from kubeloop.queue._stats import QueueStats

K = TypeVar("K", bound=Hashable)

DEFAULT_PRIORITY = 0
LOW_PRIORITY = -100
"""controller-runtime's priority for adds caused by an informer's initial list (and resyncs)."""

DEFAULT_STARVATION_EVERY = 8

_WAITING = 0
_READY = 1
_BLOCKED = 2
_GONE = 3


class _Entry(Generic[K]):
    """A queued key. ``seq`` is its position token in a priority band (stale tokens are skipped)."""

    __slots__ = ("deadline", "key", "priority", "ready_at", "seq", "since", "state")

    def __init__(self, key: K, priority: int, ready_at: float, since: float) -> None:
        self.key = key
        self.priority = priority
        self.ready_at = ready_at
        self.since = since  # when it became eligible: the start of its queue duration
        self.deadline: float | None = None  # debounce: latest allowed ready time of this burst
        self.state = _GONE
        self.seq = -1


class WorkQueueCore(Generic[K]):
    """Deduplicating, prioritised, delaying work queue state; every method takes ``now`` (seconds).

    Not thread-safe: call it from one thread (the event loop's).
    Keys must be hashable and not ``None``.
    """

    def __init__(
        self,
        *,
        rate_limiter: RateLimiter | None = None,
        debounce: float = 0.0,
        debounce_max_wait: float | None = None,
        starvation_every: int = DEFAULT_STARVATION_EVERY,
        stats: QueueStats | None = None,
    ) -> None:
        if debounce < 0:
            raise ValueError("debounce must be >= 0")
        if starvation_every < 0:
            raise ValueError("starvation_every must be >= 0 (0 disables the guard)")
        self._limiter: RateLimiter = rate_limiter if rate_limiter is not None else default_rate_limiter()
        self._debounce = float(debounce)
        if debounce_max_wait is None:
            debounce_max_wait = 10.0 * self._debounce
        if debounce_max_wait < self._debounce:
            raise ValueError("debounce_max_wait must be >= debounce")
        self._max_wait = float(debounce_max_wait)
        self._starvation_every = starvation_every
        self._stats = stats

        self._entries: dict[K, _Entry[K]] = {}
        self._processing: dict[K, float] = {}  # key -> when it was handed out
        self._bands: dict[int, deque[tuple[int, _Entry[K]]]] = {}
        self._prios: list[int] = []  # priorities that have a band, highest first
        self._waiting: list[tuple[float, int, _Entry[K]]] = []  # heap by ready time
        self._ready_count = 0
        self._waiting_count = 0
        self._contended_pops = 0
        self._counter = count()
        self._shutting_down = False

    # ------------------------------------------------------------------ adds

    def add(self, key: K, *, now: float, priority: int = DEFAULT_PRIORITY) -> None:
        """Queue ``key`` now (or after the debounce period); no-op if already queued, except priority."""
        if self._debounce:
            self._add_debounced(key, now, priority)
        else:
            self._add(key, now, priority, now)

    def add_after(self, key: K, delay: float, *, now: float, priority: int = DEFAULT_PRIORITY) -> None:
        """Queue ``key`` to become ready ``delay`` seconds from ``now`` (earliest request wins)."""
        self._add(key, now, priority, now + delay if delay > 0 else now)

    def add_rate_limited(self, key: K, *, now: float, priority: int = DEFAULT_PRIORITY) -> float:
        """Queue ``key`` after its rate limiter's delay (a retry); returns that delay."""
        if self._shutting_down:
            return 0.0
        delay = self._limiter.when(key, now)
        if self._stats is not None:
            self._stats.retries += 1
        self._add(key, now, priority, now + delay if delay > 0 else now)
        return delay

    def forget(self, key: K) -> None:
        """Reset ``key``'s backoff (call after a successful run)."""
        self._limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        """How many rate-limited requeues of ``key`` since it was last forgotten."""
        return self._limiter.num_requeues(key)

    def discard(self, key: K) -> bool:
        """Drop ``key`` if it is queued (ready, waiting, or due after its run) and forget its backoff;
        a run in progress is not affected. True if it was queued."""
        self._limiter.forget(key)
        e = self._entries.pop(key, None)
        if e is None:
            return False
        if e.state == _READY:
            self._ready_count -= 1
        elif e.state == _WAITING:
            self._waiting_count -= 1
        e.state = _GONE  # its tokens in the bands and the heap go stale
        return True

    def _new_entry(self, key: K, now: float, priority: int, ready_at: float) -> _Entry[K]:
        e = _Entry(key, priority, ready_at, now)
        self._entries[key] = e
        if self._stats is not None:
            self._stats.adds += 1
        return e

    def _place_new(self, key: K, e: _Entry[K], now: float) -> None:
        if key in self._processing:
            e.state = _BLOCKED
        elif e.ready_at <= now:
            self._make_ready(e)
        else:
            self._make_waiting(e)

    def _add(self, key: K, now: float, priority: int, ready_at: float) -> None:
        if self._shutting_down:
            return
        e = self._entries.get(key)
        if e is None:
            self._place_new(key, self._new_entry(key, now, priority, ready_at), now)
            return
        if priority > e.priority:
            self._raise_priority(e, priority)
        if ready_at < e.ready_at:
            self._move_ready_time(e, ready_at, now)

    def _add_debounced(self, key: K, now: float, priority: int) -> None:
        if self._shutting_down:
            return
        e = self._entries.get(key)
        if e is None:
            e = self._new_entry(key, now, priority, now + self._debounce)
            e.deadline = now + self._max_wait
            self._place_new(key, e, now)
            return
        if priority > e.priority:
            self._raise_priority(e, priority)
        if e.state == _READY:
            return
        if e.deadline is None:
            e.deadline = now + self._max_wait
        target = min(now + self._debounce, e.deadline)
        if target != e.ready_at:
            self._move_ready_time(e, target, now)

    def _raise_priority(self, e: _Entry[K], priority: int) -> None:
        e.priority = priority
        if e.state == _READY:
            self._push_ready(e)  # to the end of its new band; the old token goes stale

    def _move_ready_time(self, e: _Entry[K], ready_at: float, now: float) -> None:
        e.ready_at = ready_at
        if e.state == _WAITING:
            if ready_at <= now:
                self._waiting_count -= 1
                e.since = now
                self._make_ready(e)
            else:
                heapq.heappush(self._waiting, (ready_at, next(self._counter), e))

    def _make_ready(self, e: _Entry[K]) -> None:
        e.state = _READY
        self._ready_count += 1
        self._push_ready(e)

    def _push_ready(self, e: _Entry[K]) -> None:
        seq = next(self._counter)
        e.seq = seq
        band = self._bands.get(e.priority)
        if band is None:
            band = self._bands[e.priority] = deque()
            self._prios.append(e.priority)
            self._prios.sort(reverse=True)
        band.append((seq, e))

    def _make_waiting(self, e: _Entry[K]) -> None:
        e.state = _WAITING
        self._waiting_count += 1
        heapq.heappush(self._waiting, (e.ready_at, next(self._counter), e))

    # ------------------------------------------------------------------ time

    def promote_due(self, now: float) -> int:
        """Move waiting keys whose ready time has come to the ready bands; returns how many."""
        h = self._waiting
        moved = 0
        while h and h[0][0] <= now:
            ready_at, _, e = heapq.heappop(h)
            if e.state == _WAITING and e.ready_at == ready_at:
                self._waiting_count -= 1
                e.since = ready_at
                self._make_ready(e)
                moved += 1
        return moved

    def next_deadline(self) -> float | None:
        """The earliest ready time of a waiting key (when a timer should fire), or None."""
        h = self._waiting
        while h:
            ready_at, _, e = h[0]
            if e.state == _WAITING and e.ready_at == ready_at:
                return ready_at
            heapq.heappop(h)
        return None

    # ------------------------------------------------------------------ hand-out

    def pop(self, now: float) -> K | None:
        """Hand out the next ready key (it becomes *processing*), or None if none is ready."""
        e = self._take(now)
        return None if e is None else e.key

    def pop_with_priority(self, now: float) -> tuple[K, int] | None:
        """Like :meth:`pop`, also returning the key's priority (to reuse it on requeue)."""
        e = self._take(now)
        return None if e is None else (e.key, e.priority)

    def _take(self, now: float) -> _Entry[K] | None:
        if self._shutting_down:
            return None
        if self._waiting and self._waiting[0][0] <= now:
            self.promote_due(now)
        if not self._ready_count:
            return None
        if len(self._prios) > 1 and self._starvation_every:
            self._contended_pops += 1
            if self._contended_pops >= self._starvation_every:
                self._contended_pops = 0
                e = self._pop_oldest()
            else:
                e = self._pop_top()
        else:
            e = self._pop_top()
        e.state = _GONE
        key = e.key
        del self._entries[key]
        self._ready_count -= 1
        self._processing[key] = now
        if self._stats is not None:
            self._stats.queue_duration.observe(now - e.since)
        return e

    def _drop_band(self, priority: int) -> None:
        del self._bands[priority]
        self._prios.remove(priority)

    def _pop_top(self) -> _Entry[K]:
        while True:
            priority = self._prios[0]
            band = self._bands[priority]
            while band:
                seq, e = band.popleft()
                if e.seq == seq and e.state == _READY:
                    if not band:
                        self._drop_band(priority)
                    return e
            self._drop_band(priority)

    def _pop_oldest(self) -> _Entry[K]:
        best: deque[tuple[int, _Entry[K]]] | None = None
        best_priority = 0
        for priority in list(self._prios):
            band = self._bands[priority]
            while band and not (band[0][1].seq == band[0][0] and band[0][1].state == _READY):
                band.popleft()
            if not band:
                self._drop_band(priority)
            elif best is None or band[0][0] < best[0][0]:
                best, best_priority = band, priority
        assert best is not None, "ready_count > 0 but no ready entry"
        _, e = best.popleft()
        if not best:
            self._drop_band(best_priority)
        return e

    def done(self, key: K, *, now: float) -> None:
        """Mark ``key`` finished; if it was added meanwhile it is queued again now (or at its ready time).

        Calling it for a key that is not processing does nothing (as client-go).
        """
        started = self._processing.pop(key, None)
        if started is None:
            return
        if self._stats is not None:
            self._stats.work_duration.observe(now - started)
        e = self._entries.get(key)
        if e is not None:  # blocked: it was added while processing
            if e.ready_at <= now:
                self._make_ready(e)
            else:
                self._make_waiting(e)

    # ------------------------------------------------------------------ shutdown

    def shutdown(self) -> None:
        """Stop handing out keys and ignore further adds; in-flight keys may still be ``done``."""
        self._shutting_down = True

    @property
    def shutting_down(self) -> bool:
        """True once :meth:`shutdown` was called."""
        return self._shutting_down

    # ------------------------------------------------------------------ introspection

    def __len__(self) -> int:
        """Keys queued (ready, waiting or blocked behind their own processing)."""
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        """True if ``key`` is queued (not counting a run in progress)."""
        return key in self._entries

    def is_processing(self, key: K) -> bool:
        """True between ``pop`` handing out ``key`` and its ``done``."""
        return key in self._processing

    @property
    def ready_count(self) -> int:
        """Keys that can be handed out now (not counting waiting keys already due)."""
        return self._ready_count

    @property
    def waiting_count(self) -> int:
        """Keys queued with a future ready time."""
        return self._waiting_count

    @property
    def processing_count(self) -> int:
        """Keys handed out and not yet done."""
        return len(self._processing)

    @property
    def depth(self) -> int:
        """``workqueue_depth``: queued keys that are not delayed (ready, or blocked behind their run)."""
        return len(self._entries) - self._waiting_count

    def processing_started(self) -> Iterable[float]:
        """When each in-flight key was handed out (for the unfinished-work metrics)."""
        return self._processing.values()

    def queued_keys(self) -> list[K]:
        """The queued keys (ready, waiting or blocked), in no particular order."""
        return list(self._entries)

    def priority_of(self, key: K) -> int | None:
        """The priority of a queued key, or None if it is not queued."""
        e = self._entries.get(key)
        return None if e is None else e.priority
