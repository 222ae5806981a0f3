"""One module-level `Controller`, run in two event loops one after the other (issue 29 item 1).

The docs recommend defining a controller at module level; pytest-asyncio gives each test its own
event loop. A controller is a specification: each run builds its queue, workers and events afresh in
the running loop, so the second test reconciles as the first did (before, an `asyncio.Event` the
controller held was bound to the first loop and the second run failed with an ExceptionGroup).
"""

from __future__ import annotations

import asyncio

from kubeloop import Context, Controller, Manager, Request, Result
from kubeloop.client import Client
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
