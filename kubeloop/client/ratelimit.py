"""Client-side rate limiting: a token bucket (QPS and burst, as client-go's flowcontrol).

`TokenBucket.reserve()` is pure (time is passed in) so it is tested directly; `RateLimiter.wait()`
is the thin async shell that sleeps for the reserved delay.
"""

from __future__ import annotations

import asyncio
import time


class TokenBucket:
    """`qps` tokens per second, at most `burst` saved up. Reservations are FIFO: each caller is told
    how long to wait for its token, so callers never race for the same token."""

    __slots__ = ("_tokens", "_updated", "burst", "qps")

    def __init__(self, qps: float, burst: int, now: float = 0.0) -> None:
        if qps <= 0:
            raise ValueError("qps must be > 0 (use None to disable rate limiting)")
        self.qps = float(qps)
        self.burst = max(1, int(burst))
        self._tokens = float(self.burst)
        self._updated = now

    def reserve(self, now: float) -> float:
        """Take one token; return how many seconds the caller must wait before using it."""
        self._tokens = min(float(self.burst), self._tokens + (now - self._updated) * self.qps)
        self._updated = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps


class RateLimiter:
    """Async wrapper around `TokenBucket` using the event loop's clock."""

    def __init__(self, qps: float, burst: int) -> None:
        self.bucket = TokenBucket(qps, burst, time.monotonic())

    async def wait(self) -> None:
        delay = self.bucket.reserve(time.monotonic())
        if delay > 0:
            await asyncio.sleep(delay)
