"""`ClientSource`: a `WatchSource` over `kubeloop.client.Client` for one scope.

Kept out of `kubeloop.watch.__init__` so the state machine and driver import without the client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from kubeloop.client import Client, Page
from kubeloop.client.client import ALL_NAMESPACES
from kubeloop.client.resources import ResourceLike
from kubeloop.watch.source import EventLike, ListPage


class ContinueTokenLost(Exception):
    """The paginated LIST this continue token belongs to is gone from this source (its page failed).

    Carries code 410 so the watcher restarts the list from scratch, as for an expired token.
    """

    code = 410
    reason = "Expired"

    def __init__(self) -> None:
        super().__init__("the paginated list to continue was interrupted; restarting it")
        self.message = str(self)


class ClientSource:
    """List and watch one resource in one scope through a `Client`.

    `namespace=None` is the client's default namespace; `ALL_NAMESPACES` (`""`) watches every
    namespace. `Client.list_pages` follows continue tokens itself, so this source keeps the running
    page iterator between `list_page` calls; if a page fails, the list restarts from scratch.
    """

    def __init__(
        self,
        client: Client,
        resource: ResourceLike,
        *,
        namespace: str | None = ALL_NAMESPACES,
        label_selector: Any = None,
        field_selector: Any = None,
        metadata_only: bool = False,
    ) -> None:
        self.client = client
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.metadata_only = metadata_only
        self._pages: AsyncIterator[Page] | None = None
        self._next_token: str | None = None

    async def list_page(
        self,
        *,
        limit: int | None,
        continue_token: str | None,
        resource_version: str | None,
        resource_version_match: str | None,
    ) -> ListPage:
        """One LIST page; the first page when `continue_token` is None."""
        if continue_token is None:
            await self.aclose()
            self._pages = self.client.list_pages(
                self.resource,
                namespace=self.namespace,
                label_selector=self.label_selector,
                field_selector=self.field_selector,
                limit=limit,
                resource_version=resource_version,
                resource_version_match=resource_version_match,
                metadata_only=self.metadata_only,
            )
        elif self._pages is None or continue_token != self._next_token:
            raise ContinueTokenLost()
        pages = self._pages
        assert pages is not None
        try:
            page = await anext(pages)
        except BaseException:
            await self.aclose()
            raise
        self._next_token = page.continue_token
        if not page.continue_token:
            await self.aclose()
        return ListPage(page.items, page.resource_version, page.continue_token)

    def watch(
        self,
        *,
        resource_version: str | None,
        resource_version_match: str | None,
        timeout_seconds: int,
        allow_bookmarks: bool,
        send_initial_events: bool,
    ) -> AsyncIterator[EventLike]:
        """A WATCH stream (the client sets resourceVersionMatch=NotOlderThan for streaming lists)."""
        return self.client.watch(
            self.resource,
            namespace=self.namespace,
            resource_version=resource_version,
            allow_bookmarks=allow_bookmarks,
            timeout_seconds=timeout_seconds,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            send_initial_events=send_initial_events,
            metadata_only=self.metadata_only,
        )

    async def aclose(self) -> None:
        """Drop a half-read paginated list (closes its iterator)."""
        pages, self._pages = self._pages, None
        self._next_token = None
        aclose = getattr(pages, "aclose", None)
        if aclose is not None:
            await aclose()
