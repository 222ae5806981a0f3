"""Client-side rate limiting: QPS and burst, as client-go's flowcontrol.

The arithmetic is `kubeloop.meta.TokenBucket` (pure, tested directly); `RequestRateLimiter.wait()` is
the thin async shell that sleeps for the reserved delay.
"""

from __future__ import annotations

import asyncio
import time

from kubeloop.meta import TokenBucket


class RequestRateLimiter:
    """Async wrapper around `TokenBucket` using the event loop's clock."""

    def __init__(self, qps: float, burst: int) -> None:
        self.bucket = TokenBucket(qps, max(1, int(burst)), time.monotonic())

    async def wait(self) -> None:
        delay = self.bucket.reserve(time.monotonic())
        if delay > 0:
            await asyncio.sleep(delay)
