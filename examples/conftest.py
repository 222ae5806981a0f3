"""Fixtures for the examples' tests: a client on the `apiserver` fixture (the emulator, or the real
cluster of KUBELOOP_TEST_KUBECONFIG) and a fresh namespace."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest_asyncio

from kubeloop import Client
from kubeloop.client import ApiError, RetryPolicy
from kubeloop.config import load_kubeconfig


@pytest_asyncio.fixture
async def client(apiserver: Any) -> AsyncIterator[Client]:
    async with Client(load_kubeconfig(apiserver.kubeconfig), qps=None,
                      retry=RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)) as c:
        yield c


@pytest_asyncio.fixture
async def namespace(client: Client) -> AsyncIterator[str]:
    name = f"example-{secrets.token_hex(3)}"
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    with contextlib.suppress(ApiError):
        await client.delete("v1/Namespace", name)


async def settle(check: Callable[[], Awaitable[Any]], within: float = 5.0) -> Any:
    """Retry an async check until it returns something truthy (fails after ``within`` seconds)."""
    async with asyncio.timeout(within):
        while True:
            got = await check()
            if got:
                return got
            await asyncio.sleep(0.02)
