"""Test doubles for the watcher: an in-memory API (one resource), a reference consumer store, and
an async `WatchSource` over the in-memory API. Protocol fakes, not HTTP: the driver and machine are
tested against the documented source contract; HTTP integration is tested against the emulator."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from kubeloop.client import WatchEvent
from kubeloop.watch import Apply, Delete, Init, InitApply, InitDone, ListPage, WatcherEvent


class ApiFailure(Exception):
    """What a fake source raises: duck-typed like the client's ApiError (`.code`, `.retry_after`)."""

    def __init__(self, code: int, message: str = "", retry_after: float | None = None) -> None:
        super().__init__(message or f"HTTP {code}")
        self.code = code
        self.message = message or f"HTTP {code}"
        self.retry_after = retry_after


def obj(name: str, rv: int | str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": str(rv), "labels": labels}}


def status(code: int, reason: str = "", message: str = "") -> dict[str, Any]:
    return {"kind": "Status", "status": "Failure", "code": code, "reason": reason, "message": message}


def bookmark(rv: int | str, initial_end: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    return {"kind": "Pod", "metadata": meta}


def name_of(o: Any) -> str:
    return str(o["metadata"]["name"])


def rv_of(o: Any) -> int:
    return int(o["metadata"]["resourceVersion"])


class FakeApi:
    """One resource type with history, pagination snapshots and compaction (for 410s)."""

    def __init__(self) -> None:
        self.rv = 1
        self.objects: dict[str, dict[str, Any]] = {}
        self.history: list[tuple[int, str, dict[str, Any]]] = []
        self.compacted = 0  # events with rv <= compacted are gone; watching from below -> 410
        self._snapshots: dict[int, list[dict[str, Any]]] = {}

    def put(self, name: str) -> dict[str, Any]:
        self.rv += 1
        kind = "MODIFIED" if name in self.objects else "ADDED"
        o = obj(name, self.rv)
        self.objects[name] = o
        self.history.append((self.rv, kind, o))
        return o

    def delete(self, name: str) -> dict[str, Any]:
        self.rv += 1
        o = copy.deepcopy(self.objects.pop(name))
        o["metadata"]["resourceVersion"] = str(self.rv)
        self.history.append((self.rv, "DELETED", o))
        return o

    def compact(self) -> None:
        self.compacted = self.rv
        self._snapshots.clear()

    def list_page(self, limit: int | None, continue_token: str | None) -> ListPage:
        if continue_token:
            snap_rv, offset = (int(x) for x in continue_token.split(":"))
            if snap_rv not in self._snapshots:
                raise ApiFailure(410, "continue token expired")
        else:
            snap_rv, offset = self.rv, 0
            self._snapshots[snap_rv] = [self.objects[k] for k in sorted(self.objects)]
        items = self._snapshots[snap_rv]
        end = len(items) if limit is None else offset + limit
        cont = f"{snap_rv}:{end}" if end < len(items) else None
        return ListPage(items[offset:end], str(snap_rv), cont)

    def events_after(self, rv: int) -> list[tuple[int, str, dict[str, Any]]]:
        if rv < self.compacted:
            raise ApiFailure(410, f"too old resource version: {rv} ({self.compacted})")
        return [e for e in self.history if e[0] > rv]


@dataclass
class Store:
    """A consumer following the documented contract; it checks the event stream's invariants."""

    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    buffer: dict[str, dict[str, Any]] | None = None
    synced: bool = False
    deleted_by_diff: list[str] = field(default_factory=list)
    applies: int = 0

    def feed(self, events: list[WatcherEvent]) -> None:
        for e in events:
            self.apply(e)

    def apply(self, e: WatcherEvent) -> None:
        if isinstance(e, Init):
            self.buffer = {}
        elif isinstance(e, InitApply):
            assert self.buffer is not None, "InitApply outside Init..InitDone"
            self.buffer[name_of(e.obj)] = e.obj
        elif isinstance(e, InitDone):
            assert self.buffer is not None, "InitDone without Init"
            self.deleted_by_diff.extend(sorted(set(self.items) - set(self.buffer)))
            self.items, self.buffer, self.synced = self.buffer, None, True
        elif isinstance(e, Apply):
            assert self.buffer is None and self.synced, "Apply during a list"
            name = name_of(e.obj)
            old = self.items.get(name)
            assert old is None or rv_of(e.obj) > rv_of(old), "Apply went backwards or duplicated"
            self.items[name] = e.obj
            self.applies += 1
        elif isinstance(e, Delete):
            assert self.buffer is None and self.synced, "Delete during a list"
            name = name_of(e.obj)
            assert name in self.items, f"Delete of unknown {name}"
            del self.items[name]

    def view(self) -> dict[str, int]:
        return {k: rv_of(v) for k, v in self.items.items()}


def api_view(api: FakeApi) -> dict[str, int]:
    return {k: rv_of(v) for k, v in api.objects.items()}


class FakeSource:
    """An async `WatchSource` over a `FakeApi`, with fault injection.

    `fail_list` / `fail_watch`: exceptions raised by the next calls. `script`: when set, the next
    watch yields these WatchEvents (then ends) instead of the API's history. Watches follow the API
    live: `notify()` after a mutation; `drop()` ends open watches (clean close).
    """

    def __init__(self, api: FakeApi | None = None) -> None:
        self.api = api or FakeApi()
        self.fail_list: list[BaseException] = []
        self.fail_watch: list[BaseException] = []
        self.scripts: list[list[WatchEvent | BaseException]] = []
        self.list_calls: list[dict[str, Any]] = []
        self.watch_calls: list[dict[str, Any]] = []
        self.open_watches = 0
        self.closed_watches = 0
        self.list_delay = 0.0
        self._changed = asyncio.Event()
        self._drop = 0

    def notify(self) -> None:
        self._changed.set()

    def drop(self) -> None:
        self._drop += 1
        self._changed.set()

    async def list_page(self, *, limit: int | None, continue_token: str | None, resource_version: str | None,
                        resource_version_match: str | None) -> ListPage:
        self.list_calls.append(dict(limit=limit, continue_token=continue_token, resource_version=resource_version,
                                    resource_version_match=resource_version_match))
        if self.list_delay:
            await asyncio.sleep(self.list_delay)
        if self.fail_list:
            raise self.fail_list.pop(0)
        return self.api.list_page(limit, continue_token)

    def watch(self, *, resource_version: str | None, resource_version_match: str | None, timeout_seconds: int,
              allow_bookmarks: bool, send_initial_events: bool) -> AsyncIterator[WatchEvent]:
        self.watch_calls.append(dict(resource_version=resource_version, resource_version_match=resource_version_match,
                                     timeout_seconds=timeout_seconds, allow_bookmarks=allow_bookmarks,
                                     send_initial_events=send_initial_events))
        return self._watch(resource_version)

    async def _watch(self, resource_version: str | None) -> AsyncIterator[WatchEvent]:
        self.open_watches += 1
        try:
            await asyncio.sleep(0)
            if self.fail_watch:
                raise self.fail_watch.pop(0)
            if self.scripts:
                for item in self.scripts.pop(0):
                    if isinstance(item, BaseException):
                        raise item
                    yield item
                    await asyncio.sleep(0)
                return
            rv = int(resource_version or self.api.rv)
            drops = self._drop
            while True:
                if self._drop != drops:
                    return
                events = self.api.events_after(rv)
                for ev_rv, kind, o in events:
                    rv = ev_rv
                    yield WatchEvent(kind, o)
                    if self._drop != drops:
                        return
                if events:
                    continue
                self._changed.clear()
                if not self.api.events_after(rv) and self._drop == drops:
                    await self._changed.wait()
        finally:
            self.open_watches -= 1
            self.closed_watches += 1
