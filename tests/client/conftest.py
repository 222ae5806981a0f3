"""Fixtures for client integration tests: a fresh namespace per test, through the plugin's `client`
fixture (a `Client` on the `apiserver` fixture: the emulator, or the real cluster of
KUBELOOP_TEST_KUBECONFIG)."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator

import pytest_asyncio

from kubeloop.client import ApiError, Client


@pytest_asyncio.fixture
async def ns(client: Client) -> AsyncIterator[str]:
    """A namespace of its own, deleted afterwards (so tests also run on a shared real cluster)."""
    name = f"kl-client-{secrets.token_hex(4)}"
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    with contextlib.suppress(ApiError):
        await client.delete("v1/Namespace", name)

