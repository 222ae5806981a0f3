"""kubeloop.queue: the controller work queue.

:class:`WorkQueue` is what controllers use (asyncio); :class:`WorkQueueCore` is its
sans-IO state machine (time passed in), usable and testable on its own. :class:`Clock` is the
time a queue schedules by (`REAL_CLOCK` by default; `kubeloop.testing.VirtualClock` in tests).

A worker loop::

    queue: WorkQueue[Request] = WorkQueue("my-controller")   # name => workqueue_* metrics
    queue.add(request)                                       # from informer callbacks (sync)
    queue.add(request, priority=LOW_PRIORITY)                # seen in an initial list

    while True:
        try:
            request, priority = await queue.get_with_priority()
        except QueueShutDown:
            return
        try:
            result = await reconcile(request)
        except Exception:
            queue.add_rate_limited(request, priority)        # backoff 5 ms doubling to 1000 s
        else:
            queue.forget(request)                            # reset the backoff
            if result.requeue_after:
                queue.add_after(request, result.requeue_after, priority)
        finally:
            queue.done(request)                              # re-runs once if added meanwhile

    await queue.shutdown_and_drain(timeout=30)               # orderly stop
"""

from kubeloop.meta import REAL_CLOCK, Clock, RealClock, Timer, check_clock
from kubeloop.queue._core import DEFAULT_PRIORITY, DEFAULT_STARVATION_EVERY, LOW_PRIORITY, WorkQueueCore
from kubeloop.queue._errors import QueueShutDown
from kubeloop.queue._rate_limit import (
    BucketRateLimiter,
    ItemExponentialBackoff,
    MaxOf,
    RateLimiter,
    default_rate_limiter,
)
from kubeloop.queue._workqueue import WorkQueue

__all__ = [
    "DEFAULT_PRIORITY",
    "DEFAULT_STARVATION_EVERY",
    "LOW_PRIORITY",
    "REAL_CLOCK",
    "BucketRateLimiter",
    "Clock",
    "ItemExponentialBackoff",
    "MaxOf",
    "QueueShutDown",
    "RateLimiter",
    "RealClock",
    "Timer",
    "WorkQueue",
    "WorkQueueCore",
    "check_clock",
    "default_rate_limiter",
]
