"""A controller for a misspelt custom kind fails at once, naming the served kind it is a typo of,
instead of waiting for its cache to sync (cache_sync_timeout, 120 s) as for a CRD not installed."""

from __future__ import annotations

import asyncio

import pytest

from kubeloop import Controller, Manager
from kubeloop.client import Client
from kubeloop.controller import Context, Request, Result
from kubeloop.manager import ManagerError


async def reconcile(req: Request, ctx: Context) -> Result | None:
    return None


async def test_a_misspelt_custom_kind_fails_at_start_with_the_served_one(client: Client, widget_group: str) -> None:
    manager = Manager(client)
    manager.add(Controller("typo", for_=f"{widget_group}/v1/Widgt", reconcile=reconcile))
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(ManagerError, match=rf"serves 'Widget' \(did you mean '{widget_group}/v1/Widget'\?\)"):
        async with asyncio.timeout(15):
            async with manager:
                await manager.wait_ready(12)
    assert loop.time() - started < 10
