"""The clock a controller and a cache schedule by: `Clock`, and the real one, `REAL_CLOCK`.

Why an injected clock instead of warping the asyncio loop's time: a controller's I/O (HTTP to the
API server, watches, leases) must keep running in real time, while its *own* scheduling (delayed
requeues, ``Result(requeue_after=...)``, debounce, error backoff) and what a reconcile believes the
time is (``ctx.now()``) may follow another clock. `kubeloop.testing.VirtualClock` is that other
clock: a test of a schedule-driven controller moves it forward instead of sleeping. Lease renewal,
HTTP timeouts and watch backoff deliberately stay on real time.

It lives in this leaf package because two layers take it: the work queue (`kubeloop.queue`
re-exports it for the controllers and the Manager) and the cache, whose deferred compaction it
times (`kubeloop.cache.Store`, `kubeloop.cache.Informer`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from kubeloop.meta._time import now as wall_now

__all__ = ["REAL_CLOCK", "Clock", "RealClock", "Timer", "check_clock"]


class Timer(Protocol):
    """A scheduled callback that can be called off (`asyncio.TimerHandle` is one)."""

    def cancel(self) -> None:
        """Do not run the callback (no-op once it ran)."""
        ...


class Clock(Protocol):
    """What the work queue and a reconcile ask about time.

    ``monotonic()`` orders delays (seconds, never goes back); ``wall()`` is the calendar time, an aware
    UTC datetime, that moves with it; ``call_at(when, callback)`` runs ``callback`` on the event loop
    once ``monotonic()`` has reached ``when``.
    """

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (only differences mean something)."""
        ...

    def wall(self) -> datetime:
        """The calendar time now, timezone-aware in UTC."""
        ...

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        """Run ``callback`` (on the running event loop) once ``monotonic()`` reaches ``when``."""
        ...


class RealClock:
    """The default: `time.monotonic`, `datetime.now(UTC)` and the running loop's timers."""

    __slots__ = ()

    # the C functions themselves: the queue reads the clock several times per item, and a Python
    # method around them measured ~0.3 µs a call
    monotonic = staticmethod(time.monotonic)
    wall = staticmethod(wall_now)

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        # a delay, not loop.call_at: the loop's own clock need not be time.monotonic (uvloop)
        return asyncio.get_running_loop().call_later(max(0.0, when - time.monotonic()), callback)

    def __repr__(self) -> str:
        return "RealClock()"


REAL_CLOCK = RealClock()
"""The real clock (one instance; the default everywhere a `Clock` is taken)."""


def check_clock(clock: object) -> Clock:
    """``clock`` if it is a `Clock`; a `TypeError` saying what is expected otherwise (e.g. for the
    plain ``time.monotonic`` function the work queue took before it took a clock)."""
    if not all(callable(getattr(clock, m, None)) for m in ("monotonic", "wall", "call_at")):
        raise TypeError(f"expected a kubeloop.queue.Clock (monotonic(), wall(), call_at()), such as "
                        f"kubeloop.queue.REAL_CLOCK or kubeloop.testing.VirtualClock(), not {clock!r}")
    return clock  # type: ignore[return-value]
