"""`SyncGate`: whether an informer's first list is in, and who waits for it.

A waiter is a future of its own rather than a shared `asyncio.Event`: `wait()` wakes in the very
loop iteration the gate opens (or closes, when the informer stops first), and a timeout that
falls in the same iteration as the opening is no timeout. `nudge()` wakes the waiters without
opening the gate, so that one that gives up on a condition (the list is refused: a 401 or 403)
learns of it when it happens rather than at its timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["SyncGate"]


class SyncGate:
    """Opened once, by the first list; closed (waiters released, still not synced) by a stop."""

    __slots__ = ("_waiters", "closed", "synced_at")

    def __init__(self) -> None:
        self.synced_at: float | None = None
        """When the first list was swapped in (the store's clock); None until then."""
        self.closed = False
        self._waiters: list[asyncio.Future[None]] = []

    @property
    def synced(self) -> bool:
        return self.synced_at is not None

    def open(self, now: float) -> None:
        """The first list is in: wake every waiter."""
        self.synced_at = now
        self._release()

    def close(self) -> None:
        """The informer stopped: wake every waiter (`synced` tells them whether it synced)."""
        self.closed = True
        self._release()

    def nudge(self) -> None:
        """Something a waiter may give up on changed (the list failed): wake them to re-check."""
        self._release()

    async def wait(self, timeout: float | None, give_up: Callable[[], bool] | None = None) -> None:  # noqa: ASYNC109
        """Until opened or closed, or, with ``give_up``, until it returns True (asked now and after
        each `nudge`); `TimeoutError` after ``timeout`` seconds unless synced by then."""
        try:
            async with asyncio.timeout(timeout):  # awaits each future itself: woken in the loop iteration it is set
                while not self.synced and not self.closed and not (give_up is not None and give_up()):
                    fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                    self._waiters.append(fut)
                    try:
                        await fut
                    finally:
                        if fut in self._waiters:
                            self._waiters.remove(fut)
                        if not fut.done():
                            fut.cancel()
        except TimeoutError:
            if not self.synced:  # (synced in the same loop turn as the deadline: not a timeout)
                raise

    def _release(self) -> None:
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)
