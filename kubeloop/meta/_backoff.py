"""`Backoff`: how long to wait after consecutive failures: exponential, capped, jittered.

One implementation for every retry loop: the watcher's list and watch retries (the defaults,
client-go's reflector backoff and kube-runtime's copy of it: 0.8 s doubling to 30 s, jitter 1.0,
reset after 2 minutes without a failure), the work queue's per-key delay (controller-runtime's
5 ms doubling to 1000 s, no jitter), the client's request retries and the manager's and the
controller's reconnect loops. It lives in this leaf package, beside `TokenBucket`, because those
users span every layer from the client to the manager and none of them should depend on another
for a few lines of arithmetic. Pure: time is passed in and the random source is injectable, so
tests are exact.
"""

from __future__ import annotations

import random as _random
from collections.abc import Callable

__all__ = ["Backoff"]


class Backoff:
    """Delays for consecutive failures.

    The n-th consecutive failure (n from 0) waits ``raw = min(initial * factor**n, maximum)`` plus a
    jitter of up to ``jitter * raw`` (client-go's semantics), a delay in ``[raw, raw * (1 + jitter))``.
    With the defaults: 0.8-1.6 s, 1.6-3.2 s, ..., 30-60 s. Jitter spreads the retries of many
    clients after an outage; ``jitter=0`` gives the raw delays and draws nothing.

    Two ways to use it:

    - `delay(n)`: stateless, for a caller that counts failures itself (the work queue counts per
      key, the client per request).
    - `next_delay(now)`: counts consecutive failures here. "Healthy" then means no failure for
      ``reset_after`` seconds counted from the end of the last delay: the next failure after such a
      period starts again from ``initial`` (``reset_after=None``: only `reset()` does). Success
      alone does not reset the count, so a list that succeeds followed by a watch that fails at
      once still backs off (that is what prevents a busy loop).
    """

    __slots__ = ("_attempts", "_quiet_since", "_random", "factor", "initial", "jitter", "maximum", "reset_after")

    def __init__(
        self,
        initial: float = 0.8,
        maximum: float = 30.0,
        factor: float = 2.0,
        jitter: float = 1.0,
        reset_after: float | None = 120.0,
        random: Callable[[], float] | None = None,
    ) -> None:
        if not 0 < initial <= maximum:
            raise ValueError(f"backoff needs 0 < initial <= maximum, got {initial} and {maximum}")
        if factor < 1:
            raise ValueError(f"backoff factor must be >= 1, got {factor}")
        if jitter < 0:
            raise ValueError(f"backoff jitter must be >= 0, got {jitter}")
        if reset_after is not None and reset_after <= 0:
            raise ValueError(f"backoff reset_after must be > 0 (or None), got {reset_after}")
        self.initial = initial
        self.maximum = maximum
        self.factor = factor
        self.jitter = jitter
        self.reset_after = reset_after
        self._random = random if random is not None else _random.random
        self._attempts = 0
        self._quiet_since: float | None = None  # end of the last delay

    def delay(self, attempt: int, random: Callable[[], float] | None = None) -> float:
        """The wait after the ``attempt``-th consecutive failure (from 0), jittered; counts nothing.

        ``random`` draws the jitter instead of the backoff's own source (a caller's seeded one).
        """
        try:
            raw = self.initial * self.factor ** attempt
        except OverflowError:  # far past any cap
            raw = self.maximum
        if raw > self.maximum:
            raw = self.maximum
        if not self.jitter:
            return raw
        return raw + raw * self.jitter * (random or self._random)()

    @property
    def attempts(self) -> int:
        """Consecutive failures counted by `next_delay` so far (0 after a reset)."""
        return self._attempts

    def next_delay(self, now: float) -> float:
        """Record a failure at ``now`` and return how long to wait before retrying."""
        quiet = self._quiet_since
        if quiet is not None and self.reset_after is not None and now - quiet >= self.reset_after:
            self.reset()
        delay = self.delay(self._attempts)
        self._attempts += 1
        self._quiet_since = now + delay
        return delay

    def reset(self) -> None:
        """Forget past failures: the next delay starts again from ``initial``."""
        self._attempts = 0
        self._quiet_since = None

    def __repr__(self) -> str:
        return (f"Backoff(initial={self.initial:g}, maximum={self.maximum:g}, factor={self.factor:g}, "
                f"jitter={self.jitter:g}, reset_after={self.reset_after})")
