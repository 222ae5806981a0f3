"""kubeloop.queue: the controller work queue.

:class:`WorkQueue` is what controllers use (asyncio); :class:`WorkQueueCore` is its
sans-IO state machine (time passed in), usable and testable on its own.
"""

from kubeloop.queue.core import DEFAULT_PRIORITY, DEFAULT_STARVATION_EVERY, LOW_PRIORITY, WorkQueueCore
from kubeloop.queue.errors import QueueShutDown
from kubeloop.queue.rate_limit import (
    ItemExponentialBackoff,
    MaxOf,
    RateLimiter,
    TokenBucket,
    default_rate_limiter,
)
from kubeloop.queue.workqueue import WorkQueue

__all__ = [
    "DEFAULT_PRIORITY",
    "DEFAULT_STARVATION_EVERY",
    "LOW_PRIORITY",
    "ItemExponentialBackoff",
    "MaxOf",
    "QueueShutDown",
    "RateLimiter",
    "TokenBucket",
    "WorkQueue",
    "WorkQueueCore",
    "default_rate_limiter",
]
