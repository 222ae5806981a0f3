"""`ListStream`: one LIST response read item by item as it arrives (`Client.list_stream`).

A LIST served from the API server's watch cache (``resourceVersion=0``) comes in one response
whatever its size; a reader that waits for its last byte and decodes it whole holds all of it
twice (bytes and objects) and starts work only when the server is done. A `ListStream` hands out
the items the bytes received so far complete (`kubeloop.client._list_items.ListItemSplitter`), a
few at a time, so the caller stores each while the rest is still on the wire and never holds more
than a few decoded objects and one unfinished item's bytes. Once the items end, the list's
`resource_version` and `continue_token` are known.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from kubeloop.client._errors import ClientConnectionError, MalformedListResponse
from kubeloop.client._list_items import ListItemSplitter
from kubeloop.client._response import ResponseStream

FEED_SIZE = 16 * 1024
"""Bytes given to the splitter at a time (a socket read may bring 256 KiB); each slice's items are
handed out before the next slice is decoded, so they are stored and dropped while few objects are
alive: measured on 10,000 Pods of 7.9 KiB, decoding 64 KiB at a
time cost about twice the CPU per item of 4-16 KiB (the decoded objects of a larger batch no
longer fit the CPU's cache together), while ConfigMaps of 1.4 KiB decoded alike at 4-64 KiB."""


class ListConnectionLost(ClientConnectionError):
    """The connection broke (or went silent) before the list response ended."""


class ListStream(ResponseStream):
    """An open LIST response: ``await open()``, then ``await batches()`` until it returns [];
    then `resource_version`, `continue_token`, `remaining_item_count` and `kind` are set.

    With `set_kind` (`Client.list_stream` calls it unless ``fill_kind=False``), items lacking
    ``kind``/``apiVersion`` (a built-in list's items) get the list's, as `Client.list_page` gives
    them. ``async with`` (or `aclose()`) closes the connection.
    """

    def __init__(self, opener: Callable[[], Awaitable[aiohttp.ClientResponse]]) -> None:
        super().__init__(opener)
        self._splitter = ListItemSplitter()
        self._fill: tuple[str, str] | None = None
        self._error: MalformedListResponse | None = None
        self._chunk = b""  # the socket's last read, fed to the splitter a slice at a time
        self._at = 0
        self.resource_version = ""
        self.continue_token: str | None = None
        self.remaining_item_count: int | None = None
        self.kind = ""
        self.api_version = ""

    def set_kind(self, kind: str, api_version: str) -> None:
        """Give items lacking ``kind``/``apiVersion`` these (unless the list names its own kind)."""
        self._fill = (kind, api_version)

    @property
    def items_seen(self) -> int:
        """Items handed out so far."""
        return self._splitter.items_seen

    async def batches(self) -> list[dict[str, Any]]:
        """The next items (at least one), [] once the list ended. Raises `MalformedListResponse`
        (after the items before the fault were handed out) or `ListConnectionLost`."""
        if self._error is not None:
            raise self._error
        splitter = self._splitter
        if self._resp is None:
            if self._done:
                return []
            await self.open()
        while True:
            chunk, at = self._chunk, self._at
            if at >= len(chunk):
                resp = self._resp
                if resp is None:
                    return []
                try:
                    chunk = await resp.content.readany()
                except (aiohttp.ClientError, TimeoutError) as exc:
                    await self.aclose()
                    why = "no data within the timeout" if isinstance(exc, TimeoutError) else str(exc) or type(exc).__name__
                    raise ListConnectionLost(f"list connection lost after {splitter.items_seen} items: {why}") from exc
                at = 0
                if not chunk:
                    self._chunk, self._at = b"", 0
                    items = self._split(splitter.close, None)
                    self._finish()
                    self._resp = None
                    self._done = True
                    resp.release()
                    return self._filled(items)
            # one slice at a time: its items go to the caller before the next slice is decoded
            self._chunk, self._at = chunk, at + FEED_SIZE
            items = self._split(splitter.feed, chunk[at:at + FEED_SIZE])
            if items:
                return self._filled(items)

    def _split(self, step: Callable[..., list[Any]], data: bytes | None) -> list[Any]:
        """``step(data)`` (or ``step()``), a splitter's; on a malformed item keep the fault for the
        next call if items came before it (they are returned first)."""
        try:
            return step() if data is None else step(data)
        except MalformedListResponse as exc:
            self._chunk, self._at = b"", 0
            self._close()
            items, self._splitter.pending = self._splitter.pending, []
            if not items:
                raise
            self._error = exc
            return items

    def _filled(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        fill = self._fill
        if fill is not None:
            head = self._splitter.head
            kind, api_version = fill
            head_kind = head.get("kind")
            if isinstance(head_kind, str) and head_kind.endswith("List"):
                kind, api_version = head_kind[:-4], head.get("apiVersion") or api_version
            for item in items:
                if "kind" not in item:
                    item["kind"] = kind
                    item["apiVersion"] = api_version
        return items

    def _finish(self) -> None:
        head = self._splitter.head
        meta = head.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        self.resource_version = str(meta.get("resourceVersion") or "")
        self.continue_token = meta.get("continue") or None
        remaining = meta.get("remainingItemCount")
        self.remaining_item_count = remaining if isinstance(remaining, int) else None
        self.kind = str(head.get("kind") or "")
        self.api_version = str(head.get("apiVersion") or "")
