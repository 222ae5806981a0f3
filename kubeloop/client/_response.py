"""`ResponseStream`: an HTTP response the client reads as it arrives (a watch, a LIST), sent on
`open()`, closed on `aclose()` or at the end of ``async with``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Self

import aiohttp


class ResponseStream:
    """What `WatchStream` and `ListStream` share: the request is sent on `open()` (or the first
    read), which raises the typed `ApiError` if the server refuses it; `aclose()` closes the
    connection (one closed before the end of its body cannot be reused)."""

    def __init__(self, opener: Callable[[], Awaitable[aiohttp.ClientResponse]]) -> None:
        self._opener = opener
        self._resp: aiohttp.ClientResponse | None = None
        self._done = False

    def _opened(self, resp: aiohttp.ClientResponse) -> None:
        """A subclass's look at the response once the server accepted the request."""

    async def open(self) -> Self:
        """Send the request now (raises the typed `ApiError` if the server refuses it)."""
        if self._resp is None and not self._done:
            self._resp = await self._opener()
            self._opened(self._resp)
        return self

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection."""
        self._close()

    def _close(self) -> None:
        self._done = True
        resp, self._resp = self._resp, None
        if resp is not None:
            resp.close()
