"""`Compactor`: when an informer's store compresses what it holds in the cheap form.

A store holds listed objects and watched writes as exact-size JSON first and queues them for
`Store.compact` (see `kubeloop.cache._store`). The compactor decides when: a list swapped in is
compacted at once, in small batches that yield to the event loop, and freed heap is then handed
back to the OS (glibc `malloc_trim`); a watched write once it has stayed unchanged for `delay`
seconds, or up to a quarter more (writes falling due are taken in batches, so a busy informer
wakes a few times a second, not once per write). Time comes from the store's clock
(`kubeloop.meta.Clock`), so a test can move it. A codec fault never stops the watch: the store
drops its queue and objects stay readable in the form they have.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

from kubeloop.cache._store import Store
from kubeloop.meta import Timer

__all__ = ["Compactor"]

log = logging.getLogger("kubeloop.cache")


class Compactor:
    """Compacts one store in the background; `run()` is its task (a child of the informer's)."""

    __slots__ = ("_done", "_swaps", "_timer", "_wanted", "batch", "compacted_at", "delay", "name", "store")

    def __init__(self, store: Store, name: str) -> None:
        self.store = store
        self.name = name
        self.batch = 64
        """Objects compacted between two yields to the event loop (~1 ms of work for Pods)."""
        self.delay = 2.0
        """Seconds an object changed by a watch event stays in the cheap form before it is compressed
        (up to a quarter more: the compactor takes the writes that fall due in batches)."""
        self.compacted_at: float | None = None
        """When a list was last compacted whole (the store's clock)."""
        self._wanted = asyncio.Event()  # the store holds objects `compact` should shrink
        self._done = asyncio.Event()  # ... and it has none left (or the compactor stopped)
        self._timer: Timer | None = None
        self._swaps = 0  # lists swapped in so far: one swapped in mid-batch restarts the pass

    async def run(self) -> None:
        """Compact what is due (listed objects at once, watched writes once `delay` old), a batch at a
        time, yielding between batches; then sleep until the next is due or a list wants it."""
        store = self.store
        clock = store.clock
        while True:
            await self._wanted.wait()
            self._wanted.clear()
            swaps = self._swaps
            while True:
                try:
                    oldest = store.compact(clock.monotonic() - self.delay, self.batch)
                except Exception:
                    log.exception("%s: compaction failed; objects stay uncompacted", self.name)
                    oldest = None
                if oldest is None or oldest + self.delay > clock.monotonic():
                    break
                await asyncio.sleep(0)
                if self._swaps != swaps:  # a relist swapped new contents in: it set _wanted
                    break
            if self._swaps != swaps:
                continue
            if not self._done.is_set():
                self.compacted_at = clock.monotonic()
                _release_freed_memory()
                self._done.set()
            if oldest is not None and self._timer is None:
                # writes arriving at a steady rate would each be due a moment after the last: wait
                # for a quarter of the delay's worth of them, so busy informers wake a few times a
                # second to compact, not once per event (an object waits at most 1.25x the delay)
                self._schedule(max(oldest + self.delay - clock.monotonic(), self.delay / 4))

    def swapped(self) -> None:
        """A (re)list's contents were swapped into the store: compact them now."""
        self._swaps += 1
        self._cancel_timer()
        if self.store.pending_compaction:
            self._done.clear()
            self._wanted.set()
        elif not self._wanted.is_set():
            self._done.set()

    def written(self) -> None:
        """A watch event was written: make sure its compaction is scheduled."""
        if self._timer is None and self.store.pending_compaction:
            self._schedule(self.delay)

    def stop(self) -> None:
        """No more compaction (the informer stopped): cancel the timer, release `wait()`ers."""
        self._cancel_timer()
        self._done.set()

    async def wait(self) -> None:
        """Until every listed object is compact (or the compactor stopped)."""
        await self._done.wait()

    def _schedule(self, delay: float) -> None:
        clock = self.store.clock
        self._timer = clock.call_at(clock.monotonic() + delay, self._due)

    def _due(self) -> None:
        self._timer = None
        self._wanted.set()

    def _cancel_timer(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()


_malloc_trim: Any = None


def _release_freed_memory() -> None:
    """Hand the heap freed by a list (decoded pages, cheap forms) back to the OS (glibc only).

    glibc keeps freed memory mapped; after a bulk decode that is tens of MiB of RSS nobody uses.
    `malloc_trim(0)` returns free pages, even inside the heap. Elsewhere this does nothing.
    """
    global _malloc_trim
    if _malloc_trim is None:
        _malloc_trim = False
        if sys.platform.startswith("linux"):
            import ctypes  # on first use, as the rest of this set-up: no cost for a program that lists nothing

            try:
                _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
                _malloc_trim.argtypes = [ctypes.c_size_t]
                _malloc_trim.restype = ctypes.c_int
            except (OSError, AttributeError):
                _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)
