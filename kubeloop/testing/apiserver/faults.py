"""Fault injection and request statistics, for tests that check how clients cope and what they send.

The same `Faults` object is driven from Python (`APIServer.faults`) and from the admin endpoints
under `/_kubeloop/` (see `app.py`). Resources are named by their stats key
(`<group>/<version>/<resource>`, core group as `core`) or by their plural alone (`configmaps`).

Admin endpoints (no authentication, POST unless noted; `resource` is optional everywhere):

    GET  /_kubeloop/stats                                   {"open_watches": {...}, "requests": {...}}
    POST /_kubeloop/close-watches?resource=configmaps       end open watches
    POST /_kubeloop/expire-next-watch?resource=R&count=1    next watch(es) get a 410 Expired ERROR event
    POST /_kubeloop/compact                                 drop history: older RVs get 410
    POST /_kubeloop/delay?seconds=0.5&resource=R            delay API responses (0 turns it off)
    POST /_kubeloop/fail?count=3&code=429&retryAfter=2&resource=R&verbs=list,watch
    POST /_kubeloop/reset                                   turn every fault off
    POST /_kubeloop/bulk-create?resource=R&namespace=NS     create the JSON objects of the body, one a line
                                                            (the create path without a request each; R required)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .storage import VersionedStore


@dataclass
class _Failure:
    remaining: int
    code: int
    resource: str | None
    retry_after: int
    verbs: frozenset[str] | None


def resource_matches(wanted: str | None, stats_key: str) -> bool:
    if not wanted:
        return True
    return stats_key == wanted or stats_key.rsplit("/", 1)[-1] == wanted


class Faults:
    """Switches a test flips to make the server misbehave, and the counters it reads back."""

    def __init__(self, store: VersionedStore, close_watches: Callable[[str | None], int]) -> None:
        self._store = store
        self._close_watches = close_watches
        self._failures: list[_Failure] = []
        self._expire_next: Counter[str] = Counter()
        self.delay_seconds = 0.0
        self.delay_resource: str | None = None
        self.requests: Counter[str] = Counter()
        self.open_watches: Counter[str] = Counter()

    # ---- actions ---------------------------------------------------------------------------
    def close_watches(self, resource: str | None = None) -> int:
        """End every open watch (of `resource`, or all); returns how many were closed."""
        return self._close_watches(resource)

    def expire_next_watch(self, resource: str, count: int = 1) -> None:
        """The next `count` watches of `resource` get an ERROR event with a 410 Expired Status."""
        self._expire_next[resource] += count

    def compact(self) -> None:
        """Drop all watch/list history: any older resourceVersion now gets 410 Expired."""
        self._store.compact()

    def delay(self, seconds: float, resource: str | None = None) -> None:
        """Delay every (matching) API response by `seconds`; 0 turns it off."""
        self.delay_seconds = max(0.0, float(seconds))
        self.delay_resource = resource or None

    def fail_next(self, count: int, code: int = 500, *, resource: str | None = None, retry_after: int = 1,
                  verbs: tuple[str, ...] | None = None) -> None:
        """Answer the next `count` (matching) API requests with `code` (429 carries Retry-After)."""
        self._failures.append(_Failure(int(count), int(code), resource or None, int(retry_after),
                                       frozenset(verbs) if verbs else None))

    def reset(self) -> None:
        """Turn every fault off (counters are kept)."""
        self._failures.clear()
        self._expire_next.clear()
        self.delay_seconds = 0.0
        self.delay_resource = None

    # ---- used by the HTTP layer ------------------------------------------------------------
    def take_failure(self, verb: str, stats_key: str) -> tuple[int, int] | None:
        """(code, retry_after) when this request must fail."""
        for f in self._failures:
            if f.remaining > 0 and resource_matches(f.resource, stats_key) and (f.verbs is None or verb in f.verbs):
                f.remaining -= 1
                if f.remaining == 0:
                    self._failures.remove(f)
                return f.code, f.retry_after
        return None

    def take_expire(self, stats_key: str) -> bool:
        for key in (stats_key, stats_key.rsplit("/", 1)[-1], "*"):
            if self._expire_next.get(key, 0) > 0:
                self._expire_next[key] -= 1
                return True
        return False

    def delay_for(self, stats_key: str) -> float:
        if self.delay_seconds and resource_matches(self.delay_resource, stats_key):
            return self.delay_seconds
        return 0.0

    def stats(self) -> dict[str, Any]:
        return {"open_watches": {k: v for k, v in sorted(self.open_watches.items()) if v},
                "requests": dict(sorted(self.requests.items()))}
