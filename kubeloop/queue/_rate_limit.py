"""Rate limiters that decide how long a failed key waits before it is retried.

Semantics follow client-go's ``workqueue`` rate limiters; time is passed in
(``now``, seconds) so they are plain synchronous code and testable with a fake
clock.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol

from kubeloop.meta import Backoff, TokenBucket


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
    """Per-key ``base * 2**failures``, capped at ``cap`` (default 5 ms .. 1000 s, as controller-runtime):
    `kubeloop.meta.Backoff` without jitter, its failures counted per key."""

    __slots__ = ("_failures", "backoff")

    def __init__(self, base: float = 0.005, cap: float = 1000.0) -> None:
        self.backoff = Backoff(base, cap, jitter=0.0, reset_after=None)
        self._failures: dict[Hashable, int] = {}

    @property
    def base(self) -> float:
        return self.backoff.initial

    @property
    def cap(self) -> float:
        return self.backoff.maximum

    def when(self, key: Hashable, now: float) -> float:
        n = self._failures.get(key, 0)
        self._failures[key] = n + 1
        return self.backoff.delay(n)

    def forget(self, key: Hashable) -> None:
        self._failures.pop(key, None)

    def num_requeues(self, key: Hashable) -> int:
        return self._failures.get(key, 0)


class BucketRateLimiter:
    """One :class:`~kubeloop.meta.TokenBucket` shared by all keys (client-go: 10 qps, 100 burst).

    Every failure takes a token, possibly going into debt; the delay is when that token will exist.
    """

    __slots__ = ("bucket",)

    def __init__(self, qps: float = 10.0, burst: int = 100) -> None:
        self.bucket = TokenBucket(qps, burst)

    def when(self, key: Hashable, now: float) -> float:
        return self.bucket.reserve(now)

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
    return MaxOf(per_key, BucketRateLimiter(bucket_qps, bucket_burst))
