"""The small interface a watcher needs from the API: list one page, open one watch.

A source is bound to one scope (cluster, resource, namespace, selectors); the watcher only decides
*how* to list and watch. The real client is connected by an adapter; tests use in-memory fakes.
Sources raise exceptions on failure; `kubeloop.watch._errors.classify_exception` maps them by duck
typing (`.code`, `.retry_after`), so any client works.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

CONNECTED = "CONNECTED"
"""Optional, not a Kubernetes event type (those are `kubeloop.meta.EventType`): a source may yield an
event of this type (object None) once the server has answered 200 to the watch, so the watcher
leaves an error state (e.g. FORBIDDEN) at once instead of at the first real event."""

INITIAL_EVENTS_END = "k8s.io/initial-events-end"
"""Annotation on the BOOKMARK that ends the initial events of a streaming list."""


@dataclass(frozen=True, slots=True)
class ListPage:
    """One LIST response: its items, the list's resourceVersion and the continue token (or None)."""

    items: Sequence[Any]
    resource_version: str
    continue_token: str | None = None


class EventLike(Protocol):
    """What a watch stream yields: `kubeloop.client.WatchEvent` (one decoded watch line), or any
    object with these attributes. `resource_version` may be None (the machine then reads
    ``object["metadata"]["resourceVersion"]``)."""

    @property
    def type(self) -> str: ...

    @property
    def object(self) -> Any: ...

    @property
    def resource_version(self) -> str | None: ...


class WatchSource(Protocol):
    """What the watcher calls; all arguments are keyword-only and map 1:1 to query parameters."""

    async def list_page(
        self,
        *,
        limit: int | None,
        continue_token: str | None,
        resource_version: str | None,
        resource_version_match: str | None,
    ) -> ListPage:
        """LIST one page (`limit`, `continue`, `resourceVersion`, `resourceVersionMatch`).

        A source may also offer ``list_stream(**the same keywords)`` (like
        `kubeloop.cache.ClientSource`): an object with ``async open()`` (send the request),
        ``async batches()`` (the next items of the response, at least one; [] at its end) and
        ``aclose()``, and, once the items ended, ``resource_version`` and ``continue_token``. The
        watcher then reads the page through it: its items reach the consumer while the rest is on
        the wire (a list served whole from the watch cache is one response whatever its size).
        """
        ...

    def watch(
        self,
        *,
        resource_version: str | None,
        resource_version_match: str | None,
        timeout_seconds: int,
        allow_bookmarks: bool,
        send_initial_events: bool,
    ) -> AsyncIterator[EventLike]:
        """WATCH (`watch=1`, `timeoutSeconds`, `allowWatchBookmarks`, `sendInitialEvents`).

        Returns an async iterator (typically an async generator) that connects on first use,
        raises on an HTTP error, yields events, and ends when the server closes the stream. The
        watcher closes it (`aclose()`, when present) as soon as it no longer needs it. If it has an
        `async open()` method (like `kubeloop.client.WatchStream`), the watcher awaits it first, so
        an accepted watch clears FORBIDDEN / WAITING_FOR_RESOURCE before any event arrives. If it
        has an `async batches()` method (like `WatchStream.batches`: the events already received,
        at least one, in order; [] at the end; a bad event raises only after those before it were
        returned), the watcher reads through it instead of `__anext__`: one await per run of
        events instead of one per event.
        """
        ...
