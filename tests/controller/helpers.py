"""Small async helpers for controller tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from kubeloop.cache import SharedCache
from kubeloop.controller import Controller

T = TypeVar("T")


async def eventually(check: Callable[[], Awaitable[T] | T], timeout: float = 5.0, interval: float = 0.02) -> T:  # noqa: ASYNC109
    """Poll ``check`` until it returns a truthy value (or stops raising AssertionError)."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            got = check()
            if asyncio.iscoroutine(got) or isinstance(got, asyncio.Future):
                got = await got
            if got:
                return got  # type: ignore[return-value]
        except AssertionError as exc:
            last = exc
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s (last: {last!r})")
        await asyncio.sleep(interval)


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
