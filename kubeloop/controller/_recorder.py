"""Kubernetes Events from controllers (events.k8s.io/v1), with repeats aggregated.

``ctx.event("Normal", "Created", "created ConfigMap x")`` never blocks a reconcile and never
fails on the server's account: the event is queued (bounded; overflow is counted and dropped) and posted by the
recorder's task, which the controller runs in its own TaskGroup.

Aggregation, as client-go's EventCorrelator / kube-rs' recorder with the events.k8s.io series:
the first occurrence of an event (same regarding object, type, reason, action, note and related
object) is created; a repeat within ``series_ttl`` (6 minutes) patches that Event's
``series {count, lastObservedTime}`` instead of creating a new one. A per-object token bucket
(client-go's spam filter: burst 25, one more every 5 minutes) stops a hot loop from flooding the
API server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kubeloop import metrics
from kubeloop.client import Client, KubeloopClientError, NotFound
from kubeloop.meta import TokenBucket, format_micro_time, object_reference

log = logging.getLogger("kubeloop.controller.events")

EVENTS_RESOURCE = "events.k8s.io/v1/Event"
SERIES_TTL = 360.0
SPAM_BURST = 25
SPAM_REFILL = 300.0  # seconds per token
MAX_NOTE = 1024

EventKey = tuple[Any, ...]


def micro_time(ts: float) -> str:
    """A MicroTime for a `time.time()` instant."""
    return format_micro_time(datetime.fromtimestamp(ts, tz=UTC))


@dataclass(slots=True)
class _Pending:
    cluster: str
    regarding: dict[str, Any]
    related: dict[str, Any] | None
    type: str
    reason: str
    action: str
    note: str
    at: float


@dataclass(slots=True)
class _Series:
    name: str
    namespace: str
    count: int
    last: float


class EventRecorder:
    """Posts Events for one controller (``reporting_controller``) from this process (``instance``)."""

    def __init__(
        self,
        controller: str,
        clients: Callable[[str], Client],
        *,
        instance: str | None = None,
        max_pending: int = 1000,
        series_ttl: float = SERIES_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.controller = controller
        self.instance = instance or f"{socket.gethostname()}-{os.getpid()}"
        self._clients = clients
        self._pending: deque[_Pending] = deque()
        self.max_pending = max_pending
        self.series_ttl = series_ttl
        self._clock = clock
        self._series: OrderedDict[EventKey, _Series] = OrderedDict()
        self._buckets: dict[Any, TokenBucket] = {}
        self._wake: asyncio.Event | None = None
        self._closed = False
        self.posted = 0
        self.dropped = 0
        self._dropped = {r: metrics.EVENTS_DROPPED.labels(controller, r) for r in ("full", "spam", "error")}

    # ------------------------------------------------------------------ producer side (sync)

    def record(self, cluster: str, regarding: Mapping[str, Any], *, type: str, reason: str, note: str,
               action: str, related: Mapping[str, Any] | None = None) -> None:
        """Queue one event about ``regarding`` (never blocks).

        Raises only for a mistake in the call: a type other than Normal/Warning, or an object without
        apiVersion, kind or name (`IncompleteObjectError`), which the server would reject later, unseen.
        """
        if self._closed:
            return
        if type not in ("Normal", "Warning"):
            raise ValueError(f"event type must be Normal or Warning, not {type!r}")
        ref = object_reference(regarding)
        if not self._allow(cluster, ref):
            self._drop("spam")
            return
        if len(self._pending) >= self.max_pending:
            self._drop("full")
            return
        self._pending.append(_Pending(cluster, ref, object_reference(related) if related else None, type, reason,
                                      action, note[:MAX_NOTE], time.time()))
        if self._wake is not None:
            self._wake.set()

    def _drop(self, reason: str) -> None:
        self.dropped += 1
        self._dropped[reason].inc()

    def _allow(self, cluster: str, ref: Mapping[str, Any]) -> bool:
        key = (cluster, ref.get("uid") or (ref.get("kind"), ref.get("namespace"), ref.get("name")))
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(1.0 / SPAM_REFILL, SPAM_BURST, now)
        if not bucket.try_take(now):
            return False
        if len(self._buckets) > 10_000:  # forget the fullest (idle) buckets
            for k in [k for k, b in self._buckets.items() if b.available(now) >= SPAM_BURST - 1][:5000]:
                del self._buckets[k]
        return True

    # ------------------------------------------------------------------ the posting task

    async def run(self) -> None:
        """Post queued events until ``close()``; then post what is left and return."""
        self._wake = asyncio.Event()
        try:
            while True:
                while self._pending:
                    await self._post(self._pending.popleft())
                if self._closed:
                    return
                self._wake.clear()
                await self._wake.wait()
        finally:
            self._wake = None

    def close(self) -> None:
        """Stop accepting events; ``run()`` posts the queued ones and returns."""
        self._closed = True
        if self._wake is not None:
            self._wake.set()

    async def flush(self) -> None:
        """Post every queued event now (for use without ``run()``)."""
        while self._pending:
            await self._post(self._pending.popleft())

    def _key(self, ev: _Pending) -> EventKey:
        r = ev.regarding
        rel = ev.related or {}
        return (ev.cluster, r.get("uid"), r.get("kind"), r.get("namespace"), r.get("name"), ev.type, ev.reason,
                ev.action, ev.note, rel.get("uid"), rel.get("name"))

    async def _post(self, ev: _Pending) -> None:
        client = self._clients(ev.cluster)
        key = self._key(ev)
        series = self._series.get(key)
        now = self._clock()
        try:
            if series is not None and now - series.last < self.series_ttl:
                series.count += 1
                series.last = now
                self._series.move_to_end(key)
                try:
                    await client.patch(EVENTS_RESOURCE, series.name, {
                        "series": {"count": series.count, "lastObservedTime": micro_time(ev.at)}},
                        namespace=series.namespace, type="merge")
                    self.posted += 1
                    return
                except NotFound:
                    pass  # expired server-side: create a new one
            namespace = ev.regarding.get("namespace") or "default"
            name = f"{ev.regarding.get('name')}.{time.time_ns():x}"
            body: dict[str, Any] = {
                "apiVersion": "events.k8s.io/v1", "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "eventTime": micro_time(ev.at), "reportingController": self.controller,
                "reportingInstance": self.instance, "action": ev.action, "reason": ev.reason,
                "note": ev.note, "type": ev.type, "regarding": ev.regarding,
            }
            if ev.related:
                body["related"] = ev.related
            await client.create(body, namespace=namespace)
            self.posted += 1
            self._series[key] = _Series(name, namespace, 1, now)
            self._series.move_to_end(key)
            while len(self._series) > 4096:
                self._series.popitem(last=False)
        except (TimeoutError, KubeloopClientError, OSError) as exc:
            self._drop("error")
            log.warning("could not post event %s %s about %s/%s: %s", ev.type, ev.reason,
                        ev.regarding.get("kind"), ev.regarding.get("name"), exc)
        except Exception:  # a recorder must never take the controller down
            self._drop("error")
            log.exception("could not post event %s", ev.reason)

    async def aclose(self) -> None:
        """Close and post what is queued (bounded by the caller's timeout)."""
        self.close()
        with contextlib.suppress(Exception):
            await self.flush()
