"""`WatchEvent`, one event of a watch stream, and `decode_event`, which makes one of a watch line
(the hot path: one `orjson.loads`, one object).

The one form a watch event has from the socket to the watcher: `kubeloop.watch` reads these (and
test doubles build them) as they are; the watcher's outputs (`kubeloop.watch.Apply`, ...) and the
cache's `kubeloop.cache.Event` follow.
"""

from __future__ import annotations

from typing import Any

import orjson

from kubeloop.client._errors import ApiError, MalformedWatchLine, error_from_status
from kubeloop.meta import ERROR, WATCH_EVENT_TYPES, resource_version_of


class WatchEvent:
    """One event of a watch stream. `object` is the decoded object (a `Status` for ERROR events);
    `raw` is the line it was decoded from."""

    __slots__ = ("object", "raw", "type")

    def __init__(self, type: str, object: dict[str, Any], raw: bytes = b"") -> None:
        self.type = type
        self.object = object
        self.raw = raw

    @property
    def resource_version(self) -> str | None:
        """`metadata.resourceVersion` of the object (bookmarks carry only this)."""
        return resource_version_of(self.object)

    def error(self) -> ApiError | None:
        """For an ERROR event, the typed `ApiError` its Status stands for (e.g. `Gone` for 410)."""
        if self.type != ERROR:
            return None
        return error_from_status(self.object, code=500)

    def __repr__(self) -> str:
        meta = (self.object.get("metadata") if isinstance(self.object, dict) else None) or {}
        return f"WatchEvent({self.type} {meta.get('namespace', '')}/{meta.get('name', '')} rv={meta.get('resourceVersion')})"


_loads = orjson.loads


def decode_event(line: bytes) -> WatchEvent:
    """Decode one watch line; raise `MalformedWatchLine` if it is not `{"type": ..., "object": {...}}`."""
    try:
        doc = _loads(line)
        etype = doc["type"]
        obj = doc["object"]
    except orjson.JSONDecodeError as exc:
        if not line.strip():
            raise MalformedWatchLine("blank watch line", line) from None
        raise MalformedWatchLine(f"invalid JSON in watch stream ({exc})", line) from None
    except (KeyError, TypeError):
        raise MalformedWatchLine("watch line is not an event with type and object", line) from None
    if type(etype) is str and etype in WATCH_EVENT_TYPES and type(obj) is dict:
        return WatchEvent(etype, obj, line)
    raise MalformedWatchLine(f"watch event has an unknown type {etype!r} or a non-object payload", line)
