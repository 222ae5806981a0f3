"""Fixtures for manager tests: the plugin's `client` and `namespace` (as `ns`), and `make_client`
for tests that need clients of their own (two managers, a process of its own)."""

from __future__ import annotations

from typing import Any

import pytest_asyncio

from kubeloop.client import Client
from kubeloop.config import load_kubeconfig
from kubeloop.testing.pytest_plugin import TEST_RETRY


def make_client(apiserver: Any) -> Client:
    return Client(load_kubeconfig(apiserver.kubeconfig), qps=None, retry=TEST_RETRY, timeout=10)


@pytest_asyncio.fixture
async def ns(namespace: str) -> str:
    return namespace
