"""Watch streams: per-watcher filtering of committed changes, and the wire encoding of events.

A `WatchQueue` is registered on a storage bucket; the store hands it every `Commit`
synchronously (no gap between a watcher's starting point and the live stream, since the event loop
runs one request step at a time). Filtering follows kube-apiserver: an object that enters the
watcher's selector is ADDED, one that leaves it is DELETED carrying the *old* object with the *new*
resourceVersion. Encoded lines are cached on the change, so N watchers wanting the same rendering
cost one encoding.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

import orjson

from kubeloop.meta import ADDED, DELETED, MODIFIED

from .shapes import Obj
from .storage import Commit, Stored

#: renders a Stored object (in the watcher's version/rendering) to full JSON bytes
Render = Callable[[Stored], bytes]
Match = Callable[[Obj], bool]


class WatchQueue:
    """One open watch: a queue of encoded event lines fed by the store, drained by the HTTP handler."""

    def __init__(self, stats_key: str, namespace: str | None, match: Match | None, render: Render,
                 render_id: Any) -> None:
        self.stats_key = stats_key
        self.namespace = namespace  # None: all namespaces
        self.match = match
        self.render = render
        self.render_id = render_id
        self.lines: deque[bytes] = deque()
        self.wakeup = asyncio.Event()
        self.closed = False
        self.last_rv = 0
        #: changes at or below this RV are not sent (a watch from a future resourceVersion)
        self.min_rv = 0
        #: the objects present when the watch started, sent as ADDED before anything in `lines`
        #: (rendered a chunk at a time as the client reads them: see `start_initial`)
        self._initial: list[Stored] = []
        self._initial_pos = 0

    def close(self) -> None:
        """Ask the stream to end (fault injection, server shutdown, resource removed)."""
        self.closed = True
        self.wakeup.set()

    def push_line(self, line: bytes) -> None:
        self.lines.append(line)
        self.wakeup.set()

    def offer(self, ch: Commit) -> None:
        """Filter one committed change and queue the event it produces for this watcher, if any."""
        if self.namespace is not None and ch.key[0] != self.namespace:
            return
        if ch.rv <= self.min_rv:
            return
        self.last_rv = ch.rv
        match = self.match
        if match is None:
            self.push_line(self._line(ch.type, ch))
            return
        new_ok = match(ch.new.obj)
        if ch.type == ADDED:
            if new_ok:
                self.push_line(self._line(ADDED, ch))
            return
        old_ok = ch.old is not None and match(ch.old.obj)
        if ch.type == DELETED:
            if new_ok or old_ok:
                self.push_line(self._line(DELETED, ch))
            return
        if new_ok and old_ok:
            self.push_line(self._line(MODIFIED, ch))
        elif new_ok:
            self.push_line(self._line(ADDED, ch))
        elif old_ok and ch.old is not None:
            # leaving the selector: the old object, stamped with the new resourceVersion
            left = dict(ch.old.obj)
            left["metadata"] = dict(left["metadata"], resourceVersion=str(ch.rv))
            self.push_line(event_line(DELETED, self.render(Stored(left, ch.rv))))

    def _line(self, type_: str, ch: Commit) -> bytes:
        cache_key = (type_, self.render_id)
        line = ch.lines.get(cache_key)
        if line is None:
            line = ch.lines[cache_key] = event_line(type_, self.render(ch.new))
        return line

    def start_initial(self, objects: list[Stored]) -> None:
        """Send `objects` (the watch's namespace, as they were when it started) as synthetic ADDED
        events before anything in `lines` (the initial-events-end bookmark, live changes).

        They are filtered and rendered a chunk at a time as the client reads them
        (`next_initial`), as kube-apiserver streams them from its watch cache: the first event
        leaves at once, and the server never holds the whole list rendered.
        """
        self._initial, self._initial_pos = objects, 0

    @property
    def initial_pending(self) -> bool:
        return self._initial_pos < len(self._initial)

    def next_initial(self, max_bytes: int = 256 * 1024) -> bytes:
        """The next chunk of initial ADDED lines (empty when none are left)."""
        objects, i, n = self._initial, self._initial_pos, len(self._initial)
        match, render = self.match, self.render
        out: list[bytes] = []
        size = 0
        while i < n and size < max_bytes:
            stored = objects[i]
            i += 1
            if match is not None and not match(stored.obj):
                continue
            line = event_line(ADDED, render(stored))
            out.append(line)
            size += len(line)
        self._initial_pos = i
        if i >= n:
            self._initial = []
            self._initial_pos = 0
        return b"".join(out)


def event_line(type_: str, obj_bytes: bytes) -> bytes:
    return b'{"type":"' + type_.encode() + b'","object":' + obj_bytes + b"}\n"


def error_line(status: Obj) -> bytes:
    return b'{"type":"ERROR","object":' + orjson.dumps(status) + b"}\n"


def bookmark_line(kind: str, api_version: str, rv: int, initial_end: bool = False) -> bytes:
    meta: Obj = {"resourceVersion": str(rv), "creationTimestamp": None}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    obj = {"kind": kind, "apiVersion": api_version, "metadata": meta}
    return b'{"type":"BOOKMARK","object":' + orjson.dumps(obj) + b"}\n"
