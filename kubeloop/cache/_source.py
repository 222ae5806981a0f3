"""`ClientSource`: the `WatchSource` an informer uses, backed by `kubeloop.client.Client`.

One source is bound to one scope: a resource and the `ListOptions` selecting in it (namespace,
selectors, metadata-only; the watcher supplies page size and resourceVersion per request). It resolves the
resource through discovery on every call (cached by the client's RESTMapper, refreshed on a miss),
so a kind whose CRD is not installed yet fails with `UnknownResource` (the watcher waits and polls
with backoff) and starts working as soon as discovery serves it.

Failures are reported to an optional `on_error(verb, exc)` hook before being re-raised, and
successes to `on_success()`, so the informer can log a 403 loudly with the server's message (which
names the missing permission) and track readiness.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, Unpack

from kubeloop.client import (
    ALL_NAMESPACES,
    ApiResource,
    Client,
    ListKeywords,
    ListOptions,
    ListStream,
    ResourceLike,
    WatchEvent,
    WatchStream,
)
from kubeloop.watch import ListPage

__all__ = ["ClientList", "ClientSource", "ClientWatch"]

T = TypeVar("T")


class ClientSource:
    """List pages and watch streams of one scope through a `Client` (see the module docstring)."""

    def __init__(
        self,
        client: Client,
        resource: ResourceLike,
        options: ListOptions | None = None,
        *,
        on_error: Callable[[str, BaseException], None] | None = None,
        on_success: Callable[[], None] | None = None,
        **keywords: Unpack[ListKeywords],
    ) -> None:
        opts = ListOptions.merged(options, keywords)
        self.client = client
        self.resource = resource
        # namespace None or "" here means every namespace (not the client's default one)
        self.options = dataclasses.replace(opts, namespace=opts.namespace or ALL_NAMESPACES,
                                           label_selector=opts.label_selector or None,
                                           field_selector=opts.field_selector or None)
        self.on_error = on_error
        self.on_success = on_success
        self.api_resource: ApiResource | None = resource if isinstance(resource, ApiResource) else None

    async def _resolve(self) -> ApiResource:
        res = await self.client.resolve(self.resource)
        self.api_resource = res
        return res

    async def _call(self, verb: str, request: Callable[[ApiResource], Awaitable[T]]) -> T:
        """``request`` on the resolved resource, through the error and success hooks."""
        try:
            result = await request(await self._resolve())
        except Exception as exc:
            self._failed(verb, exc)
            raise
        if self.on_success is not None:
            self.on_success()
        return result

    def _failed(self, verb: str, exc: BaseException) -> None:
        if self.on_error is not None:
            self.on_error(verb, exc)

    async def list_page(self, *, limit: int | None, continue_token: str | None, resource_version: str | None,
                        resource_version_match: str | None) -> ListPage:
        """One LIST page (items get `kind`/`apiVersion`, as watch events carry them)."""
        page = await self._call("list", lambda res: self.client.list_page(
            res, self.options, continue_token=continue_token, limit=limit, resource_version=resource_version,
            resource_version_match=resource_version_match))
        return ListPage(page.items, page.resource_version, page.continue_token)

    def list_stream(self, *, limit: int | None, continue_token: str | None, resource_version: str | None,
                    resource_version_match: str | None) -> ClientList:
        """One LIST read item by item as it arrives (see `ClientList`); what the watcher uses."""
        options = dataclasses.replace(self.options, limit=limit, resource_version=resource_version,
                                      resource_version_match=resource_version_match)
        return ClientList(self, options, continue_token)

    def watch(self, *, resource_version: str | None, resource_version_match: str | None,
              timeout_seconds: int, allow_bookmarks: bool, send_initial_events: bool) -> ClientWatch:
        """One WATCH, connected on `open()` or first use (see `ClientWatch`)."""
        return ClientWatch(lambda: self._connect(
            resource_version=resource_version, timeout_seconds=timeout_seconds,
            allow_bookmarks=allow_bookmarks, send_initial_events=send_initial_events))

    async def _connect(self, *, resource_version: str | None, timeout_seconds: int, allow_bookmarks: bool,
                       send_initial_events: bool) -> WatchStream:
        return await self._call("watch", lambda res: self.client.watch(
            res, self.options, allow_bookmarks=allow_bookmarks, timeout_seconds=timeout_seconds,
            send_initial_events=send_initial_events, resource_version=resource_version).open())


class ClientList:
    """One LIST of a `ClientSource` read as it arrives: the client's `ListStream` behind the
    source's discovery and error hooks (items get `kind`/`apiVersion`, as `list_page` gives them)."""

    def __init__(self, source: ClientSource, options: ListOptions, continue_token: str | None) -> None:
        self._source = source
        self._options = options
        self._continue = continue_token
        self._stream: ListStream | None = None
        self.resource_version = ""
        self.continue_token: str | None = None

    async def open(self) -> ClientList:
        """Resolve the resource and send the request (raises what the client raises)."""
        if self._stream is not None:
            return self
        source = self._source
        self._stream = await source._call("list", lambda res: source.client.list_stream(
            res, self._options, continue_token=self._continue).open())
        return self

    async def batches(self) -> list[dict[str, Any]]:
        """See `ListStream.batches`; at the end, `resource_version` and `continue_token` are set."""
        stream = self._stream
        if stream is None:
            await self.open()
            stream = self._stream
            assert stream is not None
        try:
            items = await stream.batches()
        except Exception as exc:
            self._source._failed("list", exc)
            raise
        if not items:
            self.resource_version, self.continue_token = stream.resource_version, stream.continue_token
        return items

    async def aclose(self) -> None:
        """Close the connection."""
        stream, self._stream = self._stream, None
        if stream is not None:
            await stream.aclose()


class ClientWatch:
    """One watch of a `ClientSource`: the client's `WatchStream` behind the source's discovery and
    error hooks.

    It offers `open()` (the watcher learns the server accepted the watch before any event) and
    `batches()` (the watcher takes every event already received in one call), and is an async
    iterator of events for any other reader.
    """

    def __init__(self, connect: Callable[[], Awaitable[WatchStream]]) -> None:
        self._connect: Callable[[], Awaitable[WatchStream]] | None = connect
        self._stream: WatchStream | None = None

    async def open(self) -> WatchStream:
        """Resolve the resource and send the request (raises what the client raises)."""
        if self._stream is None:
            connect, self._connect = self._connect, None
            if connect is None:
                raise RuntimeError("this watch was closed or failed to open; start a new one")
            self._stream = await connect()
        return self._stream

    async def batches(self) -> list[WatchEvent]:
        """See `WatchStream.batches`."""
        stream = self._stream if self._stream is not None else await self.open()
        return await stream.batches()

    def __aiter__(self) -> ClientWatch:
        return self

    async def __anext__(self) -> WatchEvent:
        stream = self._stream if self._stream is not None else await self.open()
        return await stream.__anext__()

    async def aclose(self) -> None:
        """Close the connection (a watch closed before it opened never connects)."""
        self._connect = None
        stream, self._stream = self._stream, None
        if stream is not None:
            await stream.aclose()
