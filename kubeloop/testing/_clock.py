"""`VirtualClock`: time that moves only when a test says so, for testing schedule-driven controllers.

    clock = VirtualClock(start=datetime(2026, 1, 1, tzinfo=UTC))
    manager = Manager(client, clock=clock)               # queues, requeue_after, debounce, ctx.now()
    async with manager:
        await clock.run_for(timedelta(days=7), manager)  # a week of schedule, no sleeping

Why a clock object and not a warped event loop: the controller talks real HTTP to a real (emulated
or not) API server, whose timeouts, watches and leases must keep real time; only the controller's
own scheduling follows this clock (the work queue's delays, ``Result(requeue_after=...)``, debounce,
error backoff, the queue's timing metrics) and what a reconcile reads from ``ctx.now()``.
Lease renewal, HTTP timeouts, watch backoff and read-your-writes' waits stay on real time.

`run_until` steps from timer to timer: it moves the clock to the next deadline, fires the timers
due then, and waits (real time) for the manager to go idle before the next step, so every
reconcile runs at the virtual time it was scheduled for, however far the target is. A wall time
is a `datetime` (microsecond resolution), so timers due within a microsecond of a target fire
with it.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Callable
from datetime import datetime, timedelta
from itertools import count
from typing import TYPE_CHECKING

from kubeloop.meta import now, parse_time

if TYPE_CHECKING:
    from kubeloop.manager import Manager

__all__ = ["VirtualClock"]

_RESOLUTION = 1e-6  # seconds: a datetime's


class _VirtualTimer:
    __slots__ = ("callback", "cancelled", "when")

    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when = when
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class VirtualClock:
    """A `kubeloop.queue.Clock` whose time only moves on `advance`, `run_until` or `run_for`.

    ``start``: its wall time at first (an aware datetime or an RFC 3339 string; default: now).
    ``monotonic()`` starts at 0 and counts the seconds moved since. Use it from one event loop.
    """

    def __init__(self, start: datetime | str | None = None) -> None:
        if start is None:
            start = now()
        elif isinstance(start, str):
            start = parse_time(start)
        elif not isinstance(start, datetime) or start.tzinfo is None or start.utcoffset() is None:
            raise TypeError(f"VirtualClock(start=...) takes an aware datetime or an RFC 3339 string, not {start!r}")
        self._start = start
        self._now = 0.0
        self._timers: list[tuple[float, int, _VirtualTimer]] = []
        self._seq = count()

    # ------------------------------------------------------------------ the Clock protocol

    def monotonic(self) -> float:
        """Seconds moved since the clock was made."""
        return self._now

    def wall(self) -> datetime:
        """The virtual calendar time: ``start`` plus the seconds moved."""
        return self._start + timedelta(seconds=self._now)

    def call_at(self, when: float, callback: Callable[[], None]) -> _VirtualTimer:
        """Run ``callback`` once the clock reaches ``when`` (a `monotonic` reading)."""
        timer = _VirtualTimer(when, callback)
        heapq.heappush(self._timers, (when, next(self._seq), timer))
        return timer

    # ------------------------------------------------------------------ moving time

    def next_deadline(self) -> float | None:
        """When the earliest pending timer is due (a `monotonic` reading), or None."""
        timers = self._timers
        while timers and timers[0][2].cancelled:
            heapq.heappop(timers)
        return timers[0][0] if timers else None

    @property
    def pending(self) -> int:
        """Timers scheduled and not yet fired or cancelled."""
        return sum(1 for _, _, t in self._timers if not t.cancelled)

    def _fire_until(self, target: float) -> int:
        """Move to ``target`` firing every timer due by then, each at its own deadline, in order.

        "By then" includes timers a microsecond late: wall times are datetimes, whose resolution is a
        microsecond, so a delay computed from them (``next_run - ctx.now()``) may land that far
        past a target computed from datetimes too.
        """
        fired = 0
        timers = self._timers
        while timers and timers[0][0] <= target + _RESOLUTION:
            when, _, timer = heapq.heappop(timers)
            if timer.cancelled:
                continue
            self._now = max(self._now, when)
            timer.cancelled = True
            timer.callback()
            fired += 1
        self._now = max(self._now, target)
        return fired

    def _target(self, seconds: float | timedelta) -> float:
        delta = seconds.total_seconds() if isinstance(seconds, timedelta) else float(seconds)
        if delta < 0:
            raise ValueError(f"a clock does not go back (asked to move {delta}s)")
        return self._now + delta

    async def advance(self, seconds: float | timedelta) -> int:
        """Move forward by ``seconds`` at once, firing the timers due on the way; returns how many fired.

        The tasks they wake run after the move, at the new time: to let each reconcile run at its
        own scheduled time (a requeue every hour over a day), use `run_for` / `run_until`.
        """
        fired = self._fire_until(self._target(seconds))
        await asyncio.sleep(0)
        return fired

    async def run_until(self, when: datetime, manager: Manager | None = None, *, idle_timeout: float = 30.0,
                        settle: float = 0.0) -> int:
        """Step from timer to timer up to the wall time ``when``; returns how many timers fired.

        Before each step it waits (real time, at most ``idle_timeout`` seconds) until ``manager`` is
        idle (`Manager.idle`: no key ready, no reconcile running, for ``settle`` seconds), so the
        work a timer started runs at that timer's time. The controller's own writes need no
        settling (read your writes shows them to its next reconcile); a change made by the test or
        another writer reaches the controller by a watch event, in real time: wait until the
        controller has seen it (``eventually`` on its cache or on the status it writes) before
        moving time, or give ``settle``. Without a manager it only lets woken tasks run.
        """
        if not isinstance(when, datetime) or when.tzinfo is None:
            raise TypeError(f"run_until takes an aware datetime (e.g. clock.wall() + timedelta(hours=1)), not {when!r}")
        target = (when - self._start).total_seconds()
        if target < self._now - _RESOLUTION:
            raise ValueError(f"a clock does not go back: {when.isoformat()} is before {self.wall().isoformat()}")
        fired = 0
        while True:
            await self._quiet(manager, idle_timeout, settle)
            deadline = self.next_deadline()
            if deadline is None or deadline > target + _RESOLUTION:
                break
            fired += self._fire_until(deadline)
        self._now = max(self._now, target)
        return fired

    async def run_for(self, seconds: float | timedelta, manager: Manager | None = None, *,
                      idle_timeout: float = 30.0, settle: float = 0.0) -> int:
        """`run_until` ``seconds`` from now."""
        target = self._target(seconds)
        return await self.run_until(self._start + timedelta(seconds=target), manager, idle_timeout=idle_timeout,
                                    settle=settle)

    @staticmethod
    async def _quiet(manager: Manager | None, timeout: float, settle: float) -> None:  # noqa: ASYNC109
        if manager is None:
            for _ in range(3):
                await asyncio.sleep(0)
        else:
            await manager.idle(timeout, settle=settle)

    def __repr__(self) -> str:
        return f"VirtualClock({self.wall().isoformat()}, {self.pending} timers)"
