"""One module-level `Controller`, run in two event loops one after the other (issue 29 item 1).

The docs recommend defining a controller at module level; pytest-asyncio gives each test its own
event loop. A controller is a specification: each run builds its queue, workers and events afresh in
the running loop, so the second test reconciles as the first did (before, an `asyncio.Event` the
controller held was bound to the first loop and the second run failed with an ExceptionGroup).
"""

from __future__ import annotations

import asyncio
import gc

from kubeloop import Context, Controller, Manager, Request, Result
from kubeloop.client import Client
from kubeloop.metrics import REGISTRY
from kubeloop.testing import eventually

from ..builders import MINE, cm, label

SEEN: list[Request] = []


async def _reconcile(req: Request, ctx: Context) -> Result | None:
    SEEN.append(req)
    return None


TWICE = Controller("two-loops", for_="v1/ConfigMap", label_selector=MINE, reconcile=_reconcile)
"""Defined once, at import: both tests below run this very object."""


async def _runs_and_reconciles(client: Client, ns: str, name: str) -> None:
    manager = Manager(client)
    manager.add(TWICE)
    async with manager:
        assert await manager.wait_ready(10), manager.readiness()
        await client.create(label(cm(name, namespace=ns)))
        await eventually(lambda: Request("default", ns, name) in SEEN, what=f"{name} reconciled")
    assert manager.failure is None and not TWICE.ready


async def test_a_module_level_controller_reconciles_in_a_first_event_loop(client: Client, namespace: str) -> None:
    await _runs_and_reconciles(client, namespace, "first-loop")


async def test_the_same_controller_reconciles_again_in_a_second_event_loop(client: Client, namespace: str) -> None:
    await _runs_and_reconciles(client, namespace, "second-loop")


def test_the_same_controller_runs_under_two_asyncio_run_calls() -> None:
    """The same, without pytest's loops: two `asyncio.run` calls, each with its own emulator."""
    from kubeloop.config import load_kubeconfig
    from kubeloop.testing import APIServer

    async def once(name: str) -> None:
        async with APIServer() as server, Client(load_kubeconfig(server.kubeconfig), qps=None) as client:
            await _runs_and_reconciles(client, "default", name)

    asyncio.run(once("run-one"))
    asyncio.run(once("run-two"))


async def test_each_run_is_fresh_and_a_request_enqueued_between_runs_waits_for_the_next(
        client: Client, namespace: str) -> None:
    """Nothing of a run outlives it (its queue is its own), and a request enqueued by hand while the
    controller does not run is kept, once, for the next run."""
    from kubeloop.cache import SharedCache

    seen: list[Request] = []

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        seen.append(req)
        return None

    ctl = Controller("between-runs", for_="v1/ConfigMap", namespace=namespace, label_selector=MINE,
                     reconcile=reconcile)
    early = Request("default", namespace, "no-such-object")
    ctl.enqueue(early)
    ctl.enqueue(early)
    async with SharedCache(client, grace_period=0.1) as cache:
        queues = []
        for _ in range(2):
            async with asyncio.TaskGroup() as tg:
                assert await ctl.start(tg, cache, timeout=10)
                queues.append(ctl.queue)
                await eventually(lambda: early in seen, what="the request enqueued before the run")
                await ctl.stop(drain_timeout=5)
            assert not ctl.running and not ctl.ready
            ctl.enqueue(early)
    assert queues[0] is not queues[1]
    assert seen.count(early) == 2  # once per run: kept once however often it was enqueued
    del queues
    gc.collect()  # the runs are gone; the latest one's queue counters stay on /metrics
    adds = REGISTRY.get_sample_value("workqueue_adds_total", {"name": "between-runs", "controller": "between-runs"})
    assert adds is not None and adds >= 1
