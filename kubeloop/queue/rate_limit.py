"""Rate limiters that decide how long a failed key waits before it is retried.

Semantics follow client-go's ``workqueue`` rate limiters; time is passed in
(``now``, seconds) so they are plain synchronous code and testable with a fake
clock.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol


class RateLimiter(Protocol):
    """Decides the retry delay of a key; ``forget`` resets it after a success."""

    def when(self, key: Hashable, now: float) -> float:
        """Record one more failure of ``key`` and return how long it must wait (seconds)."""
        ...

    def forget(self, key: Hashable) -> None:
        """Stop tracking ``key`` (its next failure starts from the base delay)."""
        ...

    def num_requeues(self, key: Hashable) -> int:
        """How many failures of ``key`` are being tracked."""
        ...


class ItemExponentialBackoff:
    """Per-key ``base * 2**failures``, capped at ``cap`` (default 5 ms .. 1000 s, as controller-runtime)."""

    __slots__ = ("_failures", "base", "cap")

    def __init__(self, base: float = 0.005, cap: float = 1000.0) -> None:
        if base < 0 or cap < 0:
            raise ValueError("backoff base and cap must be >= 0")
        self.base = base
        self.cap = cap
        self._failures: dict[Hashable, int] = {}

    def when(self, key: Hashable, now: float) -> float:
        n = self._failures.get(key, 0)
        self._failures[key] = n + 1
        if n >= 64:  # 2**64 * anything positive is past any sane cap; avoids float overflow
            return self.cap
        return min(self.base * (2.0**n), self.cap)

    def forget(self, key: Hashable) -> None:
        self._failures.pop(key, None)

    def num_requeues(self, key: Hashable) -> int:
        return self._failures.get(key, 0)


class TokenBucket:
    """One bucket shared by all keys: ``qps`` refill, ``burst`` capacity (client-go: 10 qps, 100 burst).

    Like Go's ``rate.Limiter.Reserve``, every call takes a token, possibly
    going into debt; the returned delay is when that token will exist.
    """

    __slots__ = ("_last", "_tokens", "burst", "qps")

    def __init__(self, qps: float = 10.0, burst: int = 100) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError("token bucket needs qps > 0 and burst >= 1")
        self.qps = qps
        self.burst = burst
        self._tokens = float(burst)
        self._last: float | None = None

    def when(self, key: Hashable, now: float) -> float:
        if self._last is not None and now > self._last:
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        if self._last is None or now > self._last:
            self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def forget(self, key: Hashable) -> None:
        """The bucket is not per key: nothing to forget."""

    def num_requeues(self, key: Hashable) -> int:
        return 0


class MaxOf:
    """The longest delay of several limiters (every limiter is consulted on each failure)."""

    __slots__ = ("limiters",)

    def __init__(self, *limiters: RateLimiter) -> None:
        if not limiters:
            raise ValueError("MaxOf needs at least one limiter")
        self.limiters = limiters

    def when(self, key: Hashable, now: float) -> float:
        return max([limiter.when(key, now) for limiter in self.limiters])

    def forget(self, key: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(key)

    def num_requeues(self, key: Hashable) -> int:
        return max(limiter.num_requeues(key) for limiter in self.limiters)


def default_rate_limiter(
    *,
    base: float = 0.005,
    cap: float = 1000.0,
    bucket_qps: float | None = 10.0,
    bucket_burst: int = 100,
) -> RateLimiter:
    """controller-runtime's default: the longer of a per-key 5 ms..1000 s backoff and an overall
    token bucket (10 qps, burst 100) shared by every key, so a storm of failures (an API outage
    failing every key at once) retries at most 10 keys a second after the first 100.

    ``bucket_qps=None``: the per-key backoff alone.
    """
    per_key = ItemExponentialBackoff(base, cap)
    if bucket_qps is None:
        return per_key
    return MaxOf(per_key, TokenBucket(bucket_qps, bucket_burst))
