"""`SyncGate`: whether an informer's first list is in, and who waits for it.

A waiter is a future of its own rather than a shared `asyncio.Event`: `wait()` wakes in the very
loop iteration the gate opens (or closes, when the informer stops first), and a timeout that
falls in the same iteration as the opening is no timeout.
"""

from __future__ import annotations

import asyncio

__all__ = ["SyncGate"]


class SyncGate:
    """Opened once, by the first list; closed (waiters released, still not synced) by a stop."""

    __slots__ = ("_waiters", "synced_at")

    def __init__(self) -> None:
        self.synced_at: float | None = None
        """When the first list was swapped in (the store's clock); None until then."""
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
        self._release()

    async def wait(self, timeout: float | None) -> None:  # noqa: ASYNC109
        """Until opened or closed; `TimeoutError` after ``timeout`` seconds unless synced by then."""
        if self.synced:
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            async with asyncio.timeout(timeout):  # awaits `fut` itself: woken in the loop iteration it is set
                await fut
        except TimeoutError:
            if not self.synced:  # (synced in the same loop turn as the deadline: not a timeout)
                raise
        finally:
            if fut in self._waiters:
                self._waiters.remove(fut)
            if not fut.done():
                fut.cancel()

    def _release(self) -> None:
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)
