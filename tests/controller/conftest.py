"""Fixtures for controller integration tests: a client, a shared cache, a namespace and a Widget CRD
on the `apiserver` fixture (the emulator, or the real cluster of KUBELOOP_TEST_KUBECONFIG)."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from kubeloop.cache.shared import SharedCache
from kubeloop.client import ApiError, Client, RetryPolicy, UnknownResource
from kubeloop.config import load_kubeconfig

FAST_RETRY = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)


@pytest_asyncio.fixture
async def client(apiserver: Any) -> AsyncIterator[Client]:
    async with Client(load_kubeconfig(apiserver.kubeconfig), qps=None, retry=FAST_RETRY, timeout=10) as c:
        yield c


@pytest_asyncio.fixture
async def cache(client: Client) -> AsyncIterator[SharedCache]:
    async with SharedCache(client, grace_period=0.1) as c:
        yield c


@pytest_asyncio.fixture
async def ns(client: Client) -> AsyncIterator[str]:
    name = f"kl-ctl-{secrets.token_hex(4)}"
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    with contextlib.suppress(ApiError):
        await client.delete("v1/Namespace", name)


def widget_crd(group: str) -> dict[str, Any]:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": schema}}]},
    }


@pytest_asyncio.fixture
async def widget_group(client: Client) -> AsyncIterator[str]:
    """A fresh Widget CRD group (served, with a status subresource)."""
    group = f"kl{secrets.token_hex(3)}.example.com"
    await client.create(widget_crd(group))
    for _ in range(200):
        try:
            await client.resolve(f"{group}/v1/Widget")
            break
        except UnknownResource:
            await asyncio.sleep(0.02)
    yield group
    with contextlib.suppress(ApiError):
        await client.delete("apiextensions.k8s.io/v1/CustomResourceDefinition", f"widgets.{group}")
