"""`WatchStream`: an open watch as an async iterator of `WatchEvent`s.

Reads raw chunks (`readany`), splits lines itself (no line-length cap; only one unfinished line is
buffered), and decodes each line with one `orjson.loads` when the consumer asks for it. A malformed
line raises `MalformedWatchLine` only after every earlier event was delivered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import aiohttp

from kubeloop.client._errors import ClientConnectionError, WatchStreamError
from kubeloop.client._jsonlines import LineSplitter
from kubeloop.client._response import ResponseStream
from kubeloop.client._watch_event import WatchEvent, decode_event

WATCH_READ_SIZE = 64 * 1024
"""Bytes a plain-HTTP watch socket reads at once. asyncio's TCP transport reads with
``recv(256 KiB)``; on glibc a buffer that size is above malloc's mmap threshold until the process
happens to free a larger block, and then every small watch read costs mmap + mremap + munmap
(CPython gh-85451; measured here: three syscalls per event). 64 KiB buffers come from the heap. TLS
transports read into a buffer they keep, so this only changes plain HTTP (the emulator, a proxy)."""


def _read_small(resp: aiohttp.ClientResponse) -> None:
    conn = resp.connection
    transport = conn.transport if conn is not None else None
    if transport is not None and getattr(transport, "max_size", 0) > WATCH_READ_SIZE:
        transport.max_size = WATCH_READ_SIZE  # type: ignore[attr-defined]


class WatchConnectionLost(WatchStreamError, ClientConnectionError):
    """The watch connection broke (reset, truncated chunked body, or inactivity timeout)."""


class WatchStream(ResponseStream):
    """Async iterator (and async context manager) over the events of one watch request.

    The HTTP request is sent on `__aenter__` or the first `__anext__`. The stream ends
    (`StopAsyncIteration`) when the server closes it normally (e.g. `timeoutSeconds` elapsed); leaving
    the `async with` block or calling `aclose()` closes the connection.
    """

    def __init__(self, opener: Callable[[], Awaitable[aiohttp.ClientResponse]]) -> None:
        super().__init__(opener)
        self._splitter = LineSplitter()
        self._lines: list[bytes] = []
        self._pos = 0

    def _opened(self, resp: aiohttp.ClientResponse) -> None:
        _read_small(resp)

    async def aclose(self) -> None:
        """Close the connection (an unfinished watch connection cannot be reused)."""
        self._lines = []
        await super().aclose()

    def __aiter__(self) -> WatchStream:
        return self

    async def _fill(self) -> bool:
        """Read until at least one complete line is available; False at end of stream."""
        if self._resp is None:
            if self._done:
                return False
            await self.open()
        resp = self._resp
        assert resp is not None
        content = resp.content
        while True:
            try:
                chunk = await content.readany()
            except (aiohttp.ClientError, TimeoutError) as exc:
                await self.aclose()
                kind = "no data within the inactivity timeout" if isinstance(exc, TimeoutError) else str(exc) or type(exc).__name__
                raise WatchConnectionLost(f"watch connection lost: {kind}") from exc
            if not chunk:
                tail = self._splitter.flush()
                self._done = True
                self._resp = None
                resp.release()
                if tail is not None:
                    self._lines, self._pos = [tail], 0
                    return True
                return False
            lines = self._splitter.feed(chunk)
            if lines:
                self._lines, self._pos = lines, 0
                return True

    async def __anext__(self) -> WatchEvent:
        pos = self._pos
        if pos >= len(self._lines) and not await self._fill():
            raise StopAsyncIteration
        pos = self._pos
        self._pos = pos + 1
        return decode_event(self._lines[pos])

    async def batches(self, max_events: int = 16) -> list[WatchEvent]:
        """Up to `max_events` of the events already received (at least one); [] at end of stream.

        For consumers that handle events in bulk (the informer). Batches are kept small: many freshly
        decoded objects alive at once make the cyclic garbage collector rescan them (measured: 64-event
        batches cost 2x the CPU of 16-event ones in benchmarks/client_bench.py). A malformed line
        still raises only after the events before it were returned (by this call).
        """
        if self._pos >= len(self._lines) and not await self._fill():
            return []
        out: list[WatchEvent] = []
        lines, start = self._lines, self._pos
        for i in range(start, min(len(lines), start + max_events)):
            try:
                out.append(decode_event(lines[i]))
            except WatchStreamError:
                self._pos = i if out else i + 1  # raise on the next call if events come first
                if out:
                    return out
                raise
        self._pos = start + len(out)
        return out
