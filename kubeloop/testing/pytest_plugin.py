"""pytest fixtures for kubeloop users and kubeloop's own tests (registered as a pytest11 plugin).

- `apiserver`: a fresh in-process emulator per test, as a `TestCluster`; with the environment
  variable `KUBELOOP_TEST_KUBECONFIG` set, the real cluster that kubeconfig names instead.
- `client`: a `kubeloop.Client` connected to the `apiserver` fixture's cluster, closed after the
  test; tuned for tests: no client-side rate limit, quick retries (`TEST_RETRY`), 10 s timeout.
  For other settings, override it with `async with apiserver.client(**options) as c: yield c`.
- `namespace`: the name of a fresh namespace created through `client` and deleted after the test,
  so that tests also run side by side on a shared real cluster.
- `emulator`: always the in-process `APIServer` itself (skips on a real cluster), for tests that
  need fault injection or emulator settings.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from kubeloop.client import ApiError, Client, RetryPolicy

from .apiserver.server import APIServer
from .cluster import TestCluster

ENV = "KUBELOOP_TEST_KUBECONFIG"
#: the `client` fixture's retries: a few quick ones, so an injected failure does not slow a test down
TEST_RETRY = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)


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
async def client(apiserver: TestCluster) -> AsyncIterator[Client]:
    """A `kubeloop.Client` on the `apiserver` fixture's cluster (emulator or real), closed afterwards."""
    async with apiserver.client(qps=None, retry=TEST_RETRY, timeout=10) as c:
        yield c


@pytest_asyncio.fixture
async def namespace(client: Client) -> AsyncIterator[str]:
    """A namespace of this test's own (`kl-test-<random>`), deleted afterwards."""
    name = f"kl-test-{secrets.token_hex(4)}"
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    with contextlib.suppress(ApiError):
        await client.delete("v1/Namespace", name)


@pytest_asyncio.fixture
async def emulator() -> AsyncIterator[APIServer]:
    """The in-process emulator itself (skipped on a real cluster): faults, stats, settings."""
    if real_cluster_kubeconfig():
        pytest.skip(f"needs the kubeloop emulator ({ENV} is set)")
    async with APIServer(namespace_delete_delay=0.05, crd_cleanup_delay=0.05, future_rv_wait=0.5) as server:
        yield server
