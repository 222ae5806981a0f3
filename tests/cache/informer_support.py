"""Shared helpers for the informer / shared-cache integration tests (emulator or real cluster)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from kubeloop.cache import Event, Subscription
from kubeloop.client import Client, RetryPolicy
from kubeloop.config import load_kubeconfig
from kubeloop.testing import eventually
from kubeloop.watch import WatchConfig

__all__ = ["CM", "FAST", "MINE", "client", "cm", "collect", "eventually", "names", "ns", "open_watches"]

CM = "v1/ConfigMap"
FAST = WatchConfig(backoff_initial=0.02, backoff_max=0.2, backoff_reset_after=5.0, min_watch_duration=0.0)
"""Quick retries so fault tests finish in well under a second."""


@pytest_asyncio.fixture
async def client(apiserver: Any) -> AsyncIterator[Client]:
    retry = RetryPolicy(max_attempts=1, base_delay=0.01, max_delay=0.05)  # the informer does the retrying
    async with Client(load_kubeconfig(apiserver.kubeconfig), qps=None, retry=retry, timeout=10) as c:
        yield c


@pytest_asyncio.fixture
async def ns(namespace: str) -> str:
    """The plugin's namespace of this test's own (so the tests also run on a shared real cluster)."""
    return namespace


MINE = "kubeloop-test"
"""A label every ConfigMap of these tests carries, and the selector that picks them out: a real
cluster puts its own ConfigMaps (kube-root-ca.crt) in every namespace."""


def cm(name: str, labels: dict[str, str] | None = None, data: dict[str, str] | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "labels": {MINE: "1", **(labels or {})}}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data or {"k": "v"}}


async def collect(sub: Subscription, count: int, wait: float = 5.0) -> list[Event]:
    """The next `count` events of a subscription."""
    out: list[Event] = []
    async with asyncio.timeout(wait):
        while len(out) < count:
            out.append(await sub.get())
    return out


def names(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.type, e.name) for e in events]


def open_watches(apiserver: Any, key: str = "core/v1/configmaps") -> int:
    return int(apiserver.stats()["open_watches"].get(key, 0))
