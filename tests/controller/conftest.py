"""Fixtures for controller integration tests: a shared cache, a namespace and a Widget CRD, through
the plugin's `client` fixture (a `Client` on the `apiserver` fixture: the emulator, or the real
cluster of KUBELOOP_TEST_KUBECONFIG)."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from kubeloop.cache import SharedCache
from kubeloop.client import ApiError, Client
from kubeloop.testing import delete_crd, install_crd
from tests.client.crds import widget_crd


@pytest_asyncio.fixture
async def cache(client: Client) -> AsyncIterator[SharedCache]:
    async with SharedCache(client, grace_period=0.1) as c:
        yield c


@pytest.fixture
def ns(namespace: str) -> str:
    """The plugin's `namespace` fixture under the short name these tests use."""
    return namespace


@pytest_asyncio.fixture
async def widget_group(client: Client) -> AsyncIterator[str]:
    """A fresh Widget CRD group (served, with a status subresource), deleted afterwards with the
    widgets the test's controllers left their finalizers on."""
    group = f"kl{secrets.token_hex(3)}.example.com"
    await install_crd(client, widget_crd(group))
    yield group
    with contextlib.suppress(ApiError):
        await delete_crd(client, f"widgets.{group}")
