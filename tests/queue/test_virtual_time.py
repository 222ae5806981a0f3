"""The work queue under a `VirtualClock`: delays, backoff and debounce follow virtual time, not real time."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

import pytest

from kubeloop.queue import REAL_CLOCK, ItemExponentialBackoff, WorkQueue
from kubeloop.testing import VirtualClock

START = datetime(2026, 1, 1, tzinfo=UTC)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


# ---------------------------------------------------------------------- the clock alone

def test_a_virtual_clock_starts_where_it_is_told_and_stands_still() -> None:
    clock = VirtualClock(START)
    assert clock.monotonic() == 0.0
    assert clock.wall() == START
    assert VirtualClock("2026-01-01T00:00:00Z").wall() == START
    assert VirtualClock().wall().tzinfo is not None  # default: now, aware


@pytest.mark.parametrize("bad", [datetime(2026, 1, 1), 1700000000, "yesterday"])
def test_a_virtual_clock_refuses_a_start_that_is_not_an_instant(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        VirtualClock(bad)  # type: ignore[arg-type]


async def test_advance_fires_due_timers_in_order_each_at_its_own_time() -> None:
    clock = VirtualClock(START)
    seen: list[tuple[str, float]] = []
    clock.call_at(2.0, lambda: seen.append(("b", clock.monotonic())))
    clock.call_at(1.0, lambda: seen.append(("a", clock.monotonic())))
    late = clock.call_at(10.0, lambda: seen.append(("late", clock.monotonic())))
    cancelled = clock.call_at(1.5, lambda: seen.append(("cancelled", clock.monotonic())))
    cancelled.cancel()
    assert clock.next_deadline() == 1.0
    assert await clock.advance(5) == 2
    assert seen == [("a", 1.0), ("b", 2.0)]
    assert clock.monotonic() == 5.0
    assert clock.wall() == START + timedelta(seconds=5)
    assert clock.pending == 1
    late.cancel()
    assert clock.next_deadline() is None


async def test_a_clock_does_not_go_back() -> None:
    clock = VirtualClock(START)
    with pytest.raises(ValueError, match="does not go back"):
        await clock.advance(-1)
    with pytest.raises(ValueError, match="does not go back"):
        await clock.run_until(START - timedelta(seconds=1))
    with pytest.raises(TypeError, match="aware datetime"):
        await clock.run_until(datetime(2026, 1, 2))


async def test_run_until_lets_a_timer_set_by_a_timer_fire_in_the_same_run() -> None:
    clock = VirtualClock(START)
    fired: list[float] = []

    def tick() -> None:  # a periodic job: every hour, schedules the next
        fired.append(clock.monotonic())
        clock.call_at(clock.monotonic() + 3600, tick)

    clock.call_at(3600, tick)
    assert await clock.run_until(START + timedelta(days=1)) == 24
    assert fired == [3600.0 * i for i in range(1, 25)]
    assert clock.wall() == START + timedelta(days=1)
    assert await clock.run_until(clock.wall()) == 0  # "now" is not the past, whatever the rounding


def test_a_queue_refuses_what_is_not_a_clock() -> None:
    with pytest.raises(TypeError, match=r"expected a kubeloop\.queue\.Clock"):
        WorkQueue(clock=time.monotonic)  # type: ignore[arg-type]


def test_the_real_clock_is_monotonic_and_aware() -> None:
    a = REAL_CLOCK.monotonic()
    assert REAL_CLOCK.monotonic() >= a
    assert abs(REAL_CLOCK.wall() - datetime.now(UTC)) < timedelta(seconds=5)


# ---------------------------------------------------------------------- the queue on it

async def test_a_delayed_key_waits_for_virtual_time_not_real_time() -> None:
    clock = VirtualClock(START)
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add_after("a", 3600)
    getter = asyncio.create_task(q.get())
    await asyncio.sleep(0.05)  # real time passes: nothing happens
    assert not getter.done()
    await clock.advance(3599)
    await settle()
    assert not getter.done()
    await clock.advance(1)
    assert await asyncio.wait_for(getter, 1) == "a"


async def test_an_hour_long_delay_takes_no_real_time() -> None:
    clock = VirtualClock(START)
    q: WorkQueue[str] = WorkQueue(clock=clock)
    started = time.monotonic()
    for hour in range(1, 169):  # a week, one key an hour
        q.add_after(f"k{hour}", 3600 * hour)
    got = []
    for _ in range(168):
        getter = asyncio.create_task(q.get())
        await settle()
        await clock.advance(3600)
        key = await asyncio.wait_for(getter, 1)
        q.done(key)
        got.append(key)
    assert got == [f"k{h}" for h in range(1, 169)]
    assert time.monotonic() - started < 2.0


async def test_backoff_is_measured_on_the_queue_clock() -> None:
    clock = VirtualClock(START)
    q: WorkQueue[str] = WorkQueue(clock=clock, rate_limiter=ItemExponentialBackoff(base=10, cap=1000))
    assert q.add_rate_limited("a") == 10
    getter = asyncio.create_task(q.get())
    await clock.advance(9.9)
    await settle()
    assert not getter.done()
    await clock.advance(0.1)
    assert await asyncio.wait_for(getter, 1) == "a"


async def test_debounce_is_measured_on_the_queue_clock() -> None:
    clock = VirtualClock(START)
    q: WorkQueue[str] = WorkQueue(clock=clock, debounce=60, debounce_max_wait=600)
    getter = asyncio.create_task(q.get())
    q.add("a")
    await clock.advance(50)
    q.add("a")  # still changing: pushed to 50 + 60
    await clock.advance(50)
    await settle()
    assert not getter.done()
    await clock.advance(10)
    assert await asyncio.wait_for(getter, 1) == "a"
