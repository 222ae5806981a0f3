"""Plain counters a named queue keeps for its metrics.

Integers and a bisect per observation: the queue's hot path never touches
prometheus_client; ``kubeloop.metrics`` turns these into families at scrape time.
"""

from __future__ import annotations

from bisect import bisect_left

from kubeloop.metrics import WORKQUEUE_DURATION_BUCKETS, DurationSample


class DurationHistogram:
    """Per-bucket counts (``v <= bound``, Prometheus ``le`` semantics) plus +Inf, and a sum."""

    __slots__ = ("bounds", "counts", "total")

    def __init__(self, bounds: tuple[float, ...] = WORKQUEUE_DURATION_BUCKETS) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        """Record one duration."""
        self.counts[bisect_left(self.bounds, seconds)] += 1
        self.total += seconds

    @property
    def count(self) -> int:
        """How many durations were recorded."""
        return sum(self.counts)

    def sample(self) -> DurationSample:
        """An immutable copy for a scrape."""
        return DurationSample(tuple(self.counts), self.total)


class QueueStats:
    """Monotonic counters of one queue: accepted adds, retries and two duration histograms."""

    __slots__ = ("adds", "queue_duration", "retries", "work_duration")

    def __init__(self) -> None:
        self.adds = 0
        self.retries = 0
        self.queue_duration = DurationHistogram()
        self.work_duration = DurationHistogram()
