"""Jittered exponential backoff that forgets past failures after a healthy period.

Pure: time is passed in and the random source is injectable, so tests are exact. The defaults are
client-go's reflector backoff (and kube-runtime's copy of it): 0.8 s doubling to 30 s, jitter
1.0, reset after 2 minutes without a failure.
"""

from __future__ import annotations

import random as _random
from collections.abc import Callable


class Backoff:
    """Delays for consecutive failures.

    The n-th consecutive failure (n from 0) gets `raw = min(initial * factor**n, maximum)` plus a
    jitter of up to `jitter * raw` (client-go semantics), i.e. a delay in `[raw, raw*(1+jitter))`.
    With the defaults: 0.8-1.6 s, 1.6-3.2 s, ..., 30-60 s. Jitter spreads the retries of many
    clients after an API server outage.

    "Healthy" means no failure for `reset_after` seconds counted from the end of the last delay:
    the next failure after such a period starts again from `initial`. Success alone does not reset
    the count, so a list that succeeds followed by a watch that fails at once still backs off
    (that is what prevents a busy loop).
    """

    def __init__(
        self,
        initial: float = 0.8,
        maximum: float = 30.0,
        factor: float = 2.0,
        jitter: float = 1.0,
        reset_after: float = 120.0,
        random: Callable[[], float] | None = None,
    ) -> None:
        if initial <= 0 or maximum < initial:
            raise ValueError(f"backoff needs 0 < initial <= maximum, got {initial} and {maximum}")
        if factor < 1:
            raise ValueError(f"backoff factor must be >= 1, got {factor}")
        if jitter < 0:
            raise ValueError(f"backoff jitter must be >= 0, got {jitter}")
        if reset_after <= 0:
            raise ValueError(f"backoff reset_after must be > 0, got {reset_after}")
        self.initial = initial
        self.maximum = maximum
        self.factor = factor
        self.jitter = jitter
        self.reset_after = reset_after
        self._random = random if random is not None else _random.random
        self._raw = 0.0  # 0 means "no failure in the current run"
        self._attempts = 0
        self._quiet_since: float | None = None  # end of the last delay

    @property
    def attempts(self) -> int:
        """Consecutive failures counted so far (0 after a reset)."""
        return self._attempts

    def next_delay(self, now: float) -> float:
        """Record a failure at `now` and return how long to wait before retrying."""
        if self._quiet_since is not None and now - self._quiet_since >= self.reset_after:
            self.reset()
        raw = self.initial if self._raw == 0.0 else min(self._raw * self.factor, self.maximum)
        self._raw = raw
        self._attempts += 1
        delay = raw + raw * self.jitter * self._random()
        self._quiet_since = now + delay
        return delay

    def reset(self) -> None:
        """Forget past failures: the next delay starts again from `initial`."""
        self._raw = 0.0
        self._attempts = 0
        self._quiet_since = None
