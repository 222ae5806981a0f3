"""Helpers for the examples' tests. Their fixtures (`apiserver`, `client`, `namespace`: the emulator,
or the real cluster of KUBELOOP_TEST_KUBECONFIG) come from kubeloop's pytest plugin
(`kubeloop.testing.pytest_plugin`), as they would in a user's project."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any


async def settle(check: Callable[[], Awaitable[Any]], within: float = 5.0) -> Any:
    """Retry an async check until it returns something truthy (fails after ``within`` seconds)."""
    async with asyncio.timeout(within):
        while True:
            got = await check()
            if got:
                return got
            await asyncio.sleep(0.02)
