"""The token bucket: ``qps`` tokens per second, at most ``burst`` saved up (client-go flowcontrol).

One implementation for its three users: the client's request rate limit, the work queue's
overall retry bucket (client-go's ``BucketRateLimiter``) and the controller's per-object event
spam filter. It lives in this leaf package because the client is the highest layer that uses
it and the queue and controller must not depend on the HTTP client for a few lines of
arithmetic; like everything here it is pure (time is passed in), so tests use plain numbers.
"""

from __future__ import annotations

__all__ = ["TokenBucket"]


class TokenBucket:
    """``qps`` refill, ``burst`` capacity, full at the start.

    :meth:`reserve` is Go's ``rate.Limiter.Reserve``: it always takes a token, possibly going
    into debt, and says how long to wait for it, so concurrent callers queue up FIFO instead
    of racing for the same token. :meth:`try_take` takes a token only if one is there.
    Time never runs backwards for a bucket: an earlier ``now`` than the last one refills nothing.
    """

    __slots__ = ("_last", "_tokens", "burst", "qps")

    def __init__(self, qps: float, burst: int, now: float | None = None) -> None:
        if not qps > 0 or burst < 1:
            raise ValueError(f"a token bucket needs qps > 0 and burst >= 1, not qps={qps!r}, burst={burst!r}")
        self.qps = float(qps)
        self.burst = int(burst)
        self._tokens = float(self.burst)
        self._last = now

    def _refill(self, now: float) -> None:
        last = self._last
        if last is None or now > last:
            if last is not None:
                self._tokens = min(float(self.burst), self._tokens + (now - last) * self.qps)
            self._last = now

    def available(self, now: float) -> float:
        """The tokens saved up at ``now`` (negative while reservations are in debt)."""
        self._refill(now)
        return self._tokens

    def reserve(self, now: float) -> float:
        """Take one token; return how many seconds the caller must wait before using it."""
        self._refill(now)
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def try_take(self, now: float) -> bool:
        """Take one token if one is available at ``now``; False (nothing taken) otherwise."""
        self._refill(now)
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True
