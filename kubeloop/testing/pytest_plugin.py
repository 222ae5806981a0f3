"""pytest fixtures for kubeloop users and kubeloop's own tests (registered as a pytest11 plugin).

- `apiserver`: a fresh in-process emulator per test, as a `TestCluster`; with the environment
  variable `KUBELOOP_TEST_KUBECONFIG` set, the real cluster that kubeconfig names instead.
- `emulator`: always the in-process `APIServer` itself (skips on a real cluster), for tests that
  need fault injection or emulator settings.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from .apiserver.server import APIServer
from .cluster import TestCluster

ENV = "KUBELOOP_TEST_KUBECONFIG"


def real_cluster_kubeconfig() -> str | None:
    return os.environ.get(ENV) or None


@pytest_asyncio.fixture
async def apiserver() -> AsyncIterator[TestCluster]:
    """A cluster for this test: a fresh emulator, or the real cluster of KUBELOOP_TEST_KUBECONFIG."""
    path = real_cluster_kubeconfig()
    if path:
        yield TestCluster.from_kubeconfig(path)
        return
    async with APIServer(namespace_delete_delay=0.05, crd_cleanup_delay=0.05, future_rv_wait=0.5) as server:
        yield TestCluster.from_server(server)


@pytest_asyncio.fixture
async def emulator() -> AsyncIterator[APIServer]:
    """The in-process emulator itself (skipped on a real cluster): faults, stats, settings."""
    if real_cluster_kubeconfig():
        pytest.skip(f"needs the kubeloop emulator ({ENV} is set)")
    async with APIServer(namespace_delete_delay=0.05, crd_cleanup_delay=0.05, future_rv_wait=0.5) as server:
        yield server
