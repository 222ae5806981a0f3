"""Fixtures for client integration tests: a `Client` on the `apiserver` fixture (emulator, or the real
cluster of KUBELOOP_TEST_KUBECONFIG) and a fresh namespace per test."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from kubeloop.client import ApiError, Client, RetryPolicy
from kubeloop.config import load_kubeconfig

FAST_RETRY = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)


@pytest_asyncio.fixture
async def client(apiserver: Any) -> AsyncIterator[Client]:
    async with Client(load_kubeconfig(apiserver.kubeconfig), qps=None, retry=FAST_RETRY, timeout=10) as c:
        yield c


@pytest_asyncio.fixture
async def ns(client: Client) -> AsyncIterator[str]:
    """A namespace of its own, deleted afterwards (so tests also run on a shared real cluster)."""
    name = f"kl-client-{secrets.token_hex(4)}"
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    with contextlib.suppress(ApiError):
        await client.delete("v1/Namespace", name)

