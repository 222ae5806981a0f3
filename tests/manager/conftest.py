"""Fixtures for manager tests: a fast client on the `apiserver` fixture and a fresh namespace."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from kubeloop.client import ApiError, Client, RetryPolicy
from kubeloop.config import load_kubeconfig

FAST_RETRY = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)


def make_client(apiserver: Any) -> Client:
    return Client(load_kubeconfig(apiserver.kubeconfig), qps=None, retry=FAST_RETRY, timeout=10)


@pytest_asyncio.fixture
async def client(apiserver: Any) -> AsyncIterator[Client]:
    async with make_client(apiserver) as c:
        yield c


@pytest_asyncio.fixture
async def ns(client: Client) -> AsyncIterator[str]:
    name = f"kl-mgr-{secrets.token_hex(4)}"
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    with contextlib.suppress(ApiError):
        await client.delete("v1/Namespace", name)
