"""What the watch state machine asks its driver to do: list a page, open a watch, or sleep."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class List:
    """Fetch one LIST page; answer with `on_list_page` or `on_list_error`.

    `resource_version` and `resource_version_match` are None for a quorum read and for every
    continuation page (the API forbids them together with `continue`).
    """

    limit: int | None
    continue_token: str | None
    resource_version: str | None
    resource_version_match: str | None


@dataclass(frozen=True, slots=True)
class Watch:
    """Open a WATCH; feed its events to `on_watch_event`, then `on_watch_ended` / `on_watch_error`.

    `idle_timeout` is the driver's deadline: when no event (bookmarks included) arrives for that
    long, the connection is presumed dead and the driver reports an error of kind TIMEOUT.
    """

    resource_version: str | None
    resource_version_match: str | None
    timeout_seconds: int
    allow_bookmarks: bool
    send_initial_events: bool
    idle_timeout: float


@dataclass(frozen=True, slots=True)
class Sleep:
    """Back off for `seconds`, then ask for the next action again (with the new time)."""

    seconds: float


Action = List | Watch | Sleep
"""Any action the machine can ask for."""
