"""Small async helpers for controller tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from kubeloop.cache import SharedCache
from kubeloop.controller import Controller
from kubeloop.testing import eventually

__all__ = ["eventually", "quiet", "running", "writes"]

T = TypeVar("T")


@asynccontextmanager
async def running(controller: Controller, cache: SharedCache) -> AsyncIterator[Controller]:
    """Run ``controller`` for the duration of the block (started, ready, then stopped and drained)."""
    async with asyncio.TaskGroup() as tg:
        await controller.start(tg, cache, timeout=10)
        assert controller.ready
        try:
            yield controller
        finally:
            await controller.stop(drain_timeout=5)


async def quiet(seconds: float = 0.3) -> None:
    """Let in-flight events and reconciles settle."""
    await asyncio.sleep(seconds)


def writes(stats: dict[str, Any], resources: tuple[str, ...] = ()) -> int:
    """Write requests counted by the emulator (optionally only for these group/version/resource keys)."""
    total = 0
    for key, n in stats.get("requests", {}).items():
        verb, _, res = key.partition(" ")
        if verb in ("create", "update", "patch", "delete", "deletecollection") and (
                not resources or res in resources):
            total += n
    return total
