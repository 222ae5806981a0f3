"""When and how long to retry a failed request (pure functions; the client does the sleeping).

Rules (following client-go): 429 is retried for every verb (the server did not process the request),
honouring Retry-After; 5xx responses, timeouts and broken connections only for requests that are safe
to repeat (GET: get, list, discovery); a connection that could not be established at all is retried
for every verb, since nothing was sent. Delays grow exponentially up to a bound, drawn between half
the bound and the bound (`kubeloop.meta.Backoff` from half the delays, jitter 1.0).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from kubeloop.meta import Backoff

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
RETRYABLE_5XX = frozenset({500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """How many times and how long to retry. `max_attempts=1` disables retries.

    Attempt n (from 1) waits between half and all of ``min(max_delay, base_delay * 2**(n-1))``; a
    server's Retry-After is honoured up to `max_retry_after`. A zero or negative ``base_delay``, or
    a ``max_delay`` below it, is a `ValueError` here (see `kubeloop.meta.Backoff`).
    """

    max_attempts: int = 5
    base_delay: float = 0.1
    max_delay: float = 5.0
    max_retry_after: float = 30.0
    _backoff: Backoff = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # [cap/2, cap) is a backoff from half the delays with a jitter of 1.0: cap/2 * (1 + u)
        object.__setattr__(self, "_backoff", Backoff(self.base_delay / 2, self.max_delay / 2, jitter=1.0,
                                                     reset_after=None))

    def delay(self, attempt: int, retry_after: float | None = None, rnd: random.Random | None = None) -> float:
        """Seconds to wait before attempt `attempt + 1` (`attempt` counts from 1)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after)
        return self._backoff.delay(attempt - 1, rnd.random if rnd is not None else None)


def should_retry_status(method: str, code: int) -> bool:
    """Whether an HTTP error answer may be retried for this method."""
    if code == 429:
        return True
    return code in RETRYABLE_5XX and method in SAFE_METHODS


def should_retry_connection_error(method: str, *, connected: bool) -> bool:
    """Whether a transport failure may be retried: always if the connection was never made."""
    return not connected or method in SAFE_METHODS


def parse_retry_after(value: str | None) -> float | None:
    """The Retry-After header in seconds (only the delta-seconds form is used by kube-apiserver)."""
    if not value:
        return None
    try:
        return max(0.0, float(value.strip()))
    except ValueError:
        return None
