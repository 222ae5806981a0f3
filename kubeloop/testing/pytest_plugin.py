"""pytest fixtures for kubeloop users and kubeloop's own tests (registered as a pytest11 plugin).

- `apiserver`: a fresh in-process emulator per test, as a `TestCluster`; with the environment
  variable `KUBELOOP_TEST_KUBECONFIG` set, the real cluster that kubeconfig names instead. The
  emulator runs in cluster mode (kube-controller-manager's controllers too, as a real cluster);
  `KUBELOOP_TEST_EMULATOR=bare` serves the API server alone instead (as envtest). The emulator is
  Kubernetes 1.24; `KUBELOOP_TEST_FEATURE_GATES=WatchList=true` switches on features of later
  versions for the whole run (`emulator_feature_gates()` gives them to a test's own servers).
- `client`: a `kubeloop.Client` connected to the `apiserver` fixture's cluster, closed after the
  test; tuned for tests: no client-side rate limit, quick retries (`TEST_RETRY`), 10 s timeout.
  For other settings, override it with `async with apiserver.client(**options) as c: yield c`.
- `namespace`: the name of a fresh namespace created through `client` and deleted after the test,
  so that tests also run side by side on a shared real cluster.
- `emulator`: the `APIServer` behind the `apiserver` fixture (skips on a real cluster), for tests that
  need fault injection or emulator settings on the very server their client talks to.

On a real cluster, the CustomResourceDefinitions that `install_crd` created during the run are
deleted when it ends (after every pytest-xdist worker is done: tests installing the same
definition share it), so the run leaves no CRD behind; other cluster-scoped objects are each
test's own to delete.

pytest loads this plugin whenever kubeloop is installed, so it must never break an unrelated run:
it imports nothing optional at load time. Without pytest-asyncio (`pip install 'kubeloop[testing]'`)
the fixtures exist but fail with a message saying what to install.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import tempfile
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from kubeloop.client import ApiError, Client, RetryPolicy

from . import INSTALL_HINT, missing_dependencies
from ._cluster import TestCluster
from ._kit import CRD_LEDGER_ENV, delete_crd

if TYPE_CHECKING:
    from .apiserver.server import APIServer

ENV = "KUBELOOP_TEST_KUBECONFIG"
#: the `client` fixture's retries: a few quick ones, so an injected failure does not slow a test down
TEST_RETRY = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)
#: `bare` runs the fixtures' emulator without kube-controller-manager's controllers; `cluster` (default) with
MODE_ENV = "KUBELOOP_TEST_EMULATOR"
#: feature gates of later Kubernetes versions for the fixtures' emulator (`WatchList=true`); none by default
GATES_ENV = "KUBELOOP_TEST_FEATURE_GATES"
MODES = ("cluster", "bare")
MISSING = f"kubeloop's pytest fixtures need pytest-asyncio and the emulator's dependencies: {INSTALL_HINT}"

F = TypeVar("F", bound=Callable[..., Any])

try:
    import pytest_asyncio
except ImportError:  # the fixtures stay defined, and say what to install when a test uses them
    pytest_asyncio = None  # type: ignore[assignment]


def _async_fixture(fn: F) -> F:
    if pytest_asyncio is not None:
        return pytest_asyncio.fixture(fn)  # type: ignore[return-value]

    def missing(*args: Any, **kwargs: Any) -> None:
        pytest.fail(MISSING, pytrace=False)
    missing.__name__ = fn.__name__
    missing.__doc__ = fn.__doc__
    return pytest.fixture(name=fn.__name__)(missing)


def real_cluster_kubeconfig() -> str | None:
    return os.environ.get(ENV) or None


def emulator_bare() -> bool:
    """Whether `KUBELOOP_TEST_EMULATOR` asks for the API server alone (`bare`) instead of a cluster."""
    mode = (os.environ.get(MODE_ENV) or "cluster").strip().lower()
    if mode not in MODES:
        raise pytest.UsageError(f"{MODE_ENV}={mode!r}: expected one of {', '.join(MODES)}")
    return mode == "bare"


def emulator_feature_gates() -> str:
    """The feature gates `KUBELOOP_TEST_FEATURE_GATES` asks for (kube's `NAME=true,...` syntax; "" for none)."""
    text = os.environ.get(GATES_ENV, "")
    if text:
        from .apiserver.features import FeatureGateError, FeatureGates

        try:
            FeatureGates.of(text)
        except FeatureGateError as e:
            raise pytest.UsageError(f"{GATES_ENV}={text!r}: {e}") from None
    return text


#: the emulator settings the fixtures use: short delays, so controllers react within a test's patience
FIXTURE_SETTINGS: dict[str, Any] = {"namespace_delete_delay": 0.05, "crd_cleanup_delay": 0.05,
                                    "future_rv_wait": 0.5}


_LEDGER = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """On a real cluster, name the file `install_crd` records created CRDs in (once per run: xdist
    workers, and pytest runs started by tests, inherit it)."""
    if real_cluster_kubeconfig() and CRD_LEDGER_ENV not in os.environ and not hasattr(config, "workerinput"):
        fd, path = tempfile.mkstemp(prefix="kubeloop-crds-", suffix=".jsonl")
        os.close(fd)
        os.environ[CRD_LEDGER_ENV] = path
        config.stash[_LEDGER] = path


def pytest_unconfigure(config: pytest.Config) -> None:
    """Delete the CRDs `install_crd` created on the real cluster during the run, and wait until they are gone."""
    path = config.stash.get(_LEDGER, None)
    if path is None:
        return
    os.environ.pop(CRD_LEDGER_ENV, None)
    try:
        with open(path, encoding="utf-8") as f:
            entries = [json.loads(line) for line in f if line.strip()]
    finally:
        os.unlink(path)
    kubeconfig = real_cluster_kubeconfig()
    if entries and kubeconfig:
        asyncio.run(_delete_crds(kubeconfig, entries))


async def _delete_crds(kubeconfig: str, entries: list[dict[str, str]]) -> None:
    async with await Client.from_kubeconfig(kubeconfig) as client:
        names = sorted({e["name"] for e in entries if e.get("server") == client.config.server})
        for name in names:  # and wait until each is gone: the next run may install them again
            with contextlib.suppress(TimeoutError):
                await delete_crd(client, name)


@_async_fixture
async def apiserver() -> AsyncIterator[TestCluster]:
    """A cluster for this test: a fresh emulator, or the real cluster of KUBELOOP_TEST_KUBECONFIG."""
    path = real_cluster_kubeconfig()
    if path:
        yield TestCluster.from_kubeconfig(path)
        return
    if missing_dependencies():
        pytest.fail(MISSING, pytrace=False)
    from .apiserver.server import APIServer  # the emulator is imported only when a test uses it

    async with APIServer(bare=emulator_bare(), feature_gates=emulator_feature_gates(), **FIXTURE_SETTINGS) as server:
        yield TestCluster.from_server(server)


@_async_fixture
async def client(apiserver: TestCluster) -> AsyncIterator[Client]:
    """A `kubeloop.Client` on the `apiserver` fixture's cluster (emulator or real), closed afterwards."""
    async with apiserver.client(qps=None, retry=TEST_RETRY, timeout=10) as c:
        yield c


@_async_fixture
async def namespace(client: Client) -> AsyncIterator[str]:
    """A namespace of this test's own (`kl-test-<random>`), deleted afterwards."""
    name = f"kl-test-{secrets.token_hex(4)}"
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    with contextlib.suppress(ApiError):
        await client.delete("v1/Namespace", name)


@_async_fixture
async def emulator(apiserver: TestCluster) -> AsyncIterator[APIServer]:
    """The emulator behind `apiserver`/`client`/`namespace` (skipped on a real cluster): faults, stats, settings."""
    if apiserver.server is None:
        pytest.skip(f"needs the kubeloop emulator ({ENV} is set)")
    yield apiserver.server
