"""The asyncio shell: waiting, waking, timers, cancellation, shutdown and drain."""

from __future__ import annotations

import asyncio
import time

import pytest

from kubeloop.queue import LOW_PRIORITY, ItemExponentialBackoff, QueueShutDown, WorkQueue


async def settle() -> None:
    """Let every ready task run until it blocks."""
    for _ in range(5):
        await asyncio.sleep(0)


async def test_get_returns_ready_key_without_waiting() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    assert await q.get() == "a"
    assert q.is_processing("a")
    q.done("a")
    assert not q.is_processing("a")


async def test_waiting_get_is_woken_by_add() -> None:
    q: WorkQueue[str] = WorkQueue()
    task = asyncio.create_task(q.get())
    await settle()
    assert not task.done()
    q.add("a")
    assert await asyncio.wait_for(task, 1) == "a"


async def test_waiting_get_is_woken_by_the_delay_timer() -> None:
    q: WorkQueue[str] = WorkQueue()
    start = time.monotonic()
    q.add_after("a", 0.05)
    assert await asyncio.wait_for(q.get(), 2) == "a"
    assert time.monotonic() - start >= 0.049


async def test_waiting_for_a_delayed_key_does_not_burn_cpu() -> None:
    q: WorkQueue[int] = WorkQueue()
    for i in range(100):
        q.add_after(i, 0.2 + i * 1e-4)
    getters = [asyncio.create_task(q.get()) for _ in range(8)]
    cpu = time.process_time()
    await asyncio.sleep(0.15)
    assert time.process_time() - cpu < 0.05  # parked on futures and one timer, not polling
    got = await asyncio.wait_for(asyncio.gather(*getters), 2)
    assert sorted(got) == list(range(8))


async def test_an_earlier_delayed_add_rearms_the_single_timer() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add_after("late", 30)
    task = asyncio.create_task(q.get())
    await settle()
    q.add_after("soon", 0.02)
    assert await asyncio.wait_for(task, 2) == "soon"


async def test_key_added_during_processing_is_handed_out_after_done() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    assert await q.get() == "a"
    q.add("a")
    waiter = asyncio.create_task(q.get())
    await settle()
    assert not waiter.done()  # never two workers on one key
    q.done("a")
    assert await asyncio.wait_for(waiter, 1) == "a"


async def test_cancelled_woken_getter_passes_the_key_on() -> None:
    q: WorkQueue[str] = WorkQueue()
    first = asyncio.create_task(q.get())
    second = asyncio.create_task(q.get())
    await settle()
    q.add("a")  # wakes `first`
    first.cancel()  # ... which is cancelled before it runs
    assert await asyncio.wait_for(second, 1) == "a"
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_rate_limited_requeue_waits_for_backoff() -> None:
    q: WorkQueue[str] = WorkQueue(rate_limiter=ItemExponentialBackoff(0.02, 1.0))
    q.add("a")
    key = await q.get()
    start = time.monotonic()
    assert q.add_rate_limited(key) == pytest.approx(0.02)
    q.done(key)
    assert await asyncio.wait_for(q.get(), 2) == "a"
    assert time.monotonic() - start >= 0.019
    assert q.num_requeues("a") == 1
    q.forget("a")
    assert q.num_requeues("a") == 0


async def test_get_with_priority_orders_and_reports_priority() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("initial", priority=LOW_PRIORITY)
    q.add("live")
    assert await q.get_with_priority() == ("live", 0)
    assert await q.get_with_priority() == ("initial", LOW_PRIORITY)


async def test_debounced_burst_yields_one_get() -> None:
    q: WorkQueue[str] = WorkQueue(debounce=0.03)
    for _ in range(5):
        q.add("a")
        await asyncio.sleep(0.005)
    assert await asyncio.wait_for(q.get(), 2) == "a"
    q.done("a")
    assert len(q) == 0


async def test_many_waiters_each_get_a_distinct_key() -> None:
    q: WorkQueue[int] = WorkQueue()
    tasks = [asyncio.create_task(q.get()) for _ in range(8)]
    await settle()
    for i in range(8):
        q.add_after(i, 0.01)
    got = await asyncio.wait_for(asyncio.gather(*tasks), 2)
    assert sorted(got) == list(range(8))


async def test_shutdown_wakes_waiting_getters_with_queue_shut_down() -> None:
    q: WorkQueue[str] = WorkQueue()
    task = asyncio.create_task(q.get())
    await settle()
    q.shutdown()
    with pytest.raises(QueueShutDown):
        await asyncio.wait_for(task, 1)
    q.add("a")  # ignored
    with pytest.raises(QueueShutDown):
        await q.get()


async def test_shutdown_and_drain_waits_for_in_flight_work() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.add("b")
    key = await q.get()
    drain = asyncio.create_task(q.shutdown_and_drain(timeout=2))
    await settle()
    assert not drain.done()
    with pytest.raises(QueueShutDown):  # "b" is not handed out any more
        await q.get()
    q.done(key)
    assert await asyncio.wait_for(drain, 1) is True


async def test_shutdown_and_drain_times_out() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    await q.get()
    assert await q.shutdown_and_drain(timeout=0.02) is False
    assert q.is_processing("a")


async def test_shutdown_and_drain_with_nothing_in_flight_returns_at_once() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    assert await q.shutdown_and_drain(timeout=0) is True
