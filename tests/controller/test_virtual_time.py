"""A Manager on a `VirtualClock`: ``requeue_after``, debounce and ``ctx.now()`` follow virtual time,
while the controller's I/O with the API server stays real."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta

from kubeloop import Client, Context, Controller, Manager, Request, Result
from kubeloop.queue import ItemExponentialBackoff
from kubeloop.testing import VirtualClock, eventually

START = datetime(2026, 1, 1, tzinfo=UTC)


def widget(group: str, ns: str, name: str, **spec: object) -> dict[str, object]:
    return {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": name, "namespace": ns}, "spec": spec}


async def test_requeue_after_runs_each_reconcile_at_its_virtual_time(client: Client, ns: str,
                                                                     widget_group: str) -> None:
    clock = VirtualClock(START)
    seen: dict[str, list[datetime]] = defaultdict(list)

    async def reconcile(req: Request, ctx: Context) -> Result:
        seen[req.name].append(ctx.now())
        return Result(requeue_after=3600)

    manager = Manager(client, clock=clock)
    manager.add(Controller("hourly", for_=f"{widget_group}/v1/Widget", namespace=ns, reconcile=reconcile))
    async with manager:
        await client.create(widget(widget_group, ns, "w"))
        await eventually(lambda: seen["w"], what="the first reconcile")
        first = seen["w"][0]
        assert first == START  # the clock stood still meanwhile
        started = time.monotonic()
        await clock.run_for(timedelta(hours=24), manager)
        took = time.monotonic() - started
    hours = {(t - first) / timedelta(hours=1) for t in seen["w"]}
    assert {float(h) for h in range(25)} <= hours  # one run per hour at least, each on the hour
    assert max(hours) <= 24
    assert clock.wall() == START + timedelta(hours=24)
    assert took < 10  # a day of schedule in (much) less real time


async def test_debounce_waits_in_virtual_time(client: Client, ns: str, widget_group: str) -> None:
    clock = VirtualClock(START)
    seen: list[datetime] = []

    async def reconcile(req: Request, ctx: Context) -> None:
        seen.append(ctx.now())

    manager = Manager(client, clock=clock)
    manager.add(Controller("debounced", for_=f"{widget_group}/v1/Widget", namespace=ns, reconcile=reconcile,
                           debounce=30, debounce_max_wait=300))
    async with manager:
        await manager.wait_ready(10)
        await client.create(widget(widget_group, ns, "w", size=1))
        await client.patch(f"{widget_group}/v1/Widget", "w", {"spec": {"size": 2}}, namespace=ns, type="merge")
        await manager.idle()
        await asyncio.sleep(0.1)  # real time passes; the debounce is virtual
        assert seen == []
        await clock.run_for(29, manager)
        assert seen == []
        await clock.run_for(1, manager)
        await eventually(lambda: seen, what="the debounced reconcile")
    assert seen[0] == START + timedelta(seconds=30)


async def test_a_failing_reconcile_backs_off_in_virtual_time(client: Client, ns: str, widget_group: str) -> None:
    clock = VirtualClock(START)
    seen: list[datetime] = []

    async def reconcile(req: Request, ctx: Context) -> None:
        seen.append(ctx.now())
        raise RuntimeError("not yet")

    manager = Manager(client, clock=clock)
    manager.add(Controller("failing", for_=f"{widget_group}/v1/Widget", namespace=ns, reconcile=reconcile,
                           rate_limiter=ItemExponentialBackoff(base=60, cap=3600)))
    async with manager:
        await client.create(widget(widget_group, ns, "w"))
        await eventually(lambda: seen, what="the first reconcile")
        await asyncio.sleep(0.1)
        assert len(seen) == 1  # the retry waits a virtual minute
        await clock.run_for(timedelta(minutes=7), manager)
    offsets = [(t - START).total_seconds() for t in seen]
    assert offsets[:4] == [0, 60, 180, 420]  # 60 s, doubling
