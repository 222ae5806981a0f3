"""Event types: what a watch stream reports, and what an informer tells its subscribers.

One ``str`` enum for both, so a value read off the wire (``"ADDED"``) compares equal to the
member without conversion (the watch path never converts: it compares plain strings with
members). ``RESYNC`` is kubeloop's own and never on the wire: an informer sends it to a
subscriber whose queue overflowed (the current state follows); :data:`WATCH_EVENT_TYPES`
is the set a server may send.
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = ["ADDED", "BOOKMARK", "DELETED", "ERROR", "MODIFIED", "RESYNC", "WATCH_EVENT_TYPES", "EventType"]


class EventType(enum.StrEnum):
    """The type of a watch event or of an informer event."""

    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    BOOKMARK = "BOOKMARK"
    ERROR = "ERROR"
    RESYNC = "RESYNC"
    """Not a Kubernetes type: events were dropped for a slow subscriber, the current state follows."""


# The members as module constants (as `re` does with its flags): the same objects, bound once,
# because an attribute lookup on an enum class costs ~90 ns and the watch path compares per event.
ADDED: Final = EventType.ADDED
MODIFIED: Final = EventType.MODIFIED
DELETED: Final = EventType.DELETED
BOOKMARK: Final = EventType.BOOKMARK
ERROR: Final = EventType.ERROR
RESYNC: Final = EventType.RESYNC

WATCH_EVENT_TYPES: Final[frozenset[str]] = frozenset(
    {ADDED, MODIFIED, DELETED, BOOKMARK, ERROR}
)
"""The event types a Kubernetes watch stream may carry."""
