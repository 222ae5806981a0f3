"""The Prometheus metrics kubeloop exposes, all in one dedicated registry.

kubeloop keeps its own ``REGISTRY`` (not prometheus_client's global one) so that
embedding kubeloop never collides with an application's metrics, and so the
manager's ``/metrics`` endpoint serves exactly what kubeloop defines.

Metric names and labels follow controller-runtime so existing dashboards work.

The work-queue families are produced by a collector that reads each live queue's
plain counters at scrape time: the queue's hot path only bumps integers and
never touches prometheus_client's locks. Queues register themselves with
``WORKQUEUE_COLLECTOR``; a queue without a name is never registered and pays
nothing.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.utils import floatToGoString

REGISTRY = CollectorRegistry(auto_describe=True)
"""The registry kubeloop's ``/metrics`` endpoint serves."""

# controller-runtime: prometheus.ExponentialBuckets(10e-9, 10, 12), i.e. 1e-8 s .. 1e3 s.
WORKQUEUE_DURATION_BUCKETS: tuple[float, ...] = tuple(float(f"1e{exp}") for exp in range(-8, 4))

WORKQUEUE_LABELS = ("name", "controller")


@dataclass(frozen=True, slots=True)
class DurationSample:
    """One histogram's state: per-bucket (not cumulative) counts, the last being +Inf."""

    counts: tuple[int, ...]
    total: float


@dataclass(frozen=True, slots=True)
class WorkQueueSnapshot:
    """What one queue reports at scrape time."""

    name: str
    depth: int
    adds: int
    retries: int
    queue_duration: DurationSample
    work_duration: DurationSample
    unfinished_work_seconds: float
    longest_running_processor_seconds: float


class WorkQueueSource(Protocol):
    """Anything that can report a :class:`WorkQueueSnapshot` (a named work queue)."""

    def metrics_snapshot(self) -> WorkQueueSnapshot: ...


def _merge(a: DurationSample, b: DurationSample) -> DurationSample:
    return DurationSample(tuple(x + y for x, y in zip(a.counts, b.counts, strict=True)), a.total + b.total)


class WorkQueueCollector:
    """Collects the ``workqueue_*`` families from every live registered queue.

    Queues are held weakly so a dropped queue disappears from the output. Queues
    sharing a name are summed (longest-running takes the max), so counters stay
    monotonic while they live.
    """

    def __init__(self, buckets: tuple[float, ...] = WORKQUEUE_DURATION_BUCKETS) -> None:
        self._buckets = buckets
        self._sources: weakref.WeakSet[WorkQueueSource] = weakref.WeakSet()
        self._lock = threading.Lock()  # scrapes may come from an exporter thread

    def register(self, source: WorkQueueSource) -> None:
        """Start reporting ``source``'s metrics (until it is garbage collected)."""
        with self._lock:
            self._sources.add(source)

    def unregister(self, source: WorkQueueSource) -> None:
        """Stop reporting ``source``'s metrics."""
        with self._lock:
            self._sources.discard(source)

    def __contains__(self, source: object) -> bool:
        """True if ``source`` is being reported."""
        with self._lock:
            return source in self._sources

    def snapshots(self) -> dict[str, WorkQueueSnapshot]:
        """One merged snapshot per queue name."""
        merged: dict[str, WorkQueueSnapshot] = {}
        with self._lock:
            sources = list(self._sources)
        for source in sources:
            snap = source.metrics_snapshot()
            prev = merged.get(snap.name)
            if prev is not None:
                snap = WorkQueueSnapshot(
                    name=snap.name,
                    depth=prev.depth + snap.depth,
                    adds=prev.adds + snap.adds,
                    retries=prev.retries + snap.retries,
                    queue_duration=_merge(prev.queue_duration, snap.queue_duration),
                    work_duration=_merge(prev.work_duration, snap.work_duration),
                    unfinished_work_seconds=prev.unfinished_work_seconds + snap.unfinished_work_seconds,
                    longest_running_processor_seconds=max(
                        prev.longest_running_processor_seconds, snap.longest_running_processor_seconds
                    ),
                )
            merged[snap.name] = snap
        return merged

    def _families(self) -> tuple[Metric, ...]:
        labels = list(WORKQUEUE_LABELS)
        return (
            GaugeMetricFamily("workqueue_depth", "Current depth of workqueue", labels=labels),
            CounterMetricFamily("workqueue_adds", "Total number of adds handled by workqueue", labels=labels),
            CounterMetricFamily(
                "workqueue_retries", "Total number of retries handled by workqueue", labels=labels
            ),
            HistogramMetricFamily(
                "workqueue_queue_duration_seconds",
                "How long in seconds an item stays in workqueue before being requested",
                labels=labels,
            ),
            HistogramMetricFamily(
                "workqueue_work_duration_seconds",
                "How long in seconds processing an item from workqueue takes.",
                labels=labels,
            ),
            GaugeMetricFamily(
                "workqueue_unfinished_work_seconds",
                "How many seconds of work has been done that is in progress and hasn't been observed by "
                "work_duration. Large values indicate stuck threads. One can deduce the number of stuck "
                "threads by observing the rate at which this increases.",
                labels=labels,
            ),
            GaugeMetricFamily(
                "workqueue_longest_running_processor_seconds",
                "How many seconds has the longest running processor for workqueue been running.",
                labels=labels,
            ),
        )

    def _histogram(self, sample: DurationSample) -> list[tuple[str, float]]:
        out: list[tuple[str, float]] = []
        running = 0
        for bound, count in zip(self._buckets, sample.counts, strict=False):
            running += count
            out.append((floatToGoString(bound), running))
        out.append(("+Inf", running + sample.counts[-1]))
        return out

    def describe(self) -> Iterator[Metric]:
        """The families without samples (lets the registry check names without a scrape)."""
        yield from self._families()

    def collect(self) -> Iterator[Metric]:
        """The families with one sample set per queue name."""
        depth, adds, retries, qdur, wdur, unfinished, longest = self._families()
        for name, snap in sorted(self.snapshots().items()):
            values = [name, name]
            depth.add_metric(values, snap.depth)  # type: ignore[attr-defined]
            adds.add_metric(values, snap.adds)  # type: ignore[attr-defined]
            retries.add_metric(values, snap.retries)  # type: ignore[attr-defined]
            qdur.add_metric(  # type: ignore[attr-defined]
                values, self._histogram(snap.queue_duration), snap.queue_duration.total
            )
            wdur.add_metric(  # type: ignore[attr-defined]
                values, self._histogram(snap.work_duration), snap.work_duration.total
            )
            unfinished.add_metric(values, snap.unfinished_work_seconds)  # type: ignore[attr-defined]
            longest.add_metric(values, snap.longest_running_processor_seconds)  # type: ignore[attr-defined]
        yield from (depth, adds, retries, qdur, wdur, unfinished, longest)


WORKQUEUE_COLLECTOR = WorkQueueCollector()
"""Every named work queue registers here; it is registered in ``REGISTRY``."""
REGISTRY.register(WORKQUEUE_COLLECTOR)


# --------------------------------------------------------------------------- controller families
#
# Names, labels and buckets follow controller-runtime (pkg/internal/controller/metrics) so that
# existing dashboards and alerts work unchanged. prometheus_client's own objects are fine here:
# they are touched once per reconcile, not once per event.

# controller-runtime's reconcile_time_seconds buckets.
RECONCILE_TIME_BUCKETS: tuple[float, ...] = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
)

RECONCILE_TOTAL = Counter(
    "controller_runtime_reconcile",
    "Total number of reconciliations per controller",
    ["controller", "result"],
    registry=REGISTRY,
)
"""``controller_runtime_reconcile_total{controller,result}``; result: success, error, requeue, requeue_after."""

RECONCILE_ERRORS = Counter(
    "controller_runtime_reconcile_errors",
    "Total number of reconciliation errors per controller",
    ["controller"],
    registry=REGISTRY,
)
TERMINAL_RECONCILE_ERRORS = Counter(
    "controller_runtime_terminal_reconcile_errors",
    "Total number of terminal reconciliation errors per controller",
    ["controller"],
    registry=REGISTRY,
)
RECONCILE_PANICS = Counter(
    "controller_runtime_reconcile_panics",
    "Total number of reconciliation panics per controller",
    ["controller"],
    registry=REGISTRY,
)
"""Kept for dashboard compatibility: a Python reconcile cannot panic, so this stays 0."""
RECONCILE_TIMEOUTS = Counter(
    "controller_runtime_reconcile_timeouts",
    "Total number of reconciliation timeouts per controller",
    ["controller"],
    registry=REGISTRY,
)
RECONCILE_TIME = Histogram(
    "controller_runtime_reconcile_time_seconds",
    "Length of time per reconciliation per controller",
    ["controller"],
    buckets=RECONCILE_TIME_BUCKETS,
    registry=REGISTRY,
)
MAX_CONCURRENT_RECONCILES = Gauge(
    "controller_runtime_max_concurrent_reconciles",
    "Maximum number of concurrent reconciles per controller",
    ["controller"],
    registry=REGISTRY,
)
ACTIVE_WORKERS = Gauge(
    "controller_runtime_active_workers",
    "Number of currently used workers per controller",
    ["controller"],
    registry=REGISTRY,
)

# kubeloop's own controller families (no controller-runtime equivalent).
OWN_EVENTS_SKIPPED = Counter(
    "kubeloop_controller_own_events_skipped",
    "Watch events caused only by the controller's own writes, not turned into reconciles",
    ["controller"],
    registry=REGISTRY,
)
READ_YOUR_WRITES_WAITS = Counter(
    "kubeloop_controller_read_your_writes_waits",
    "Reconciles that waited for the cache to catch up with the controller's own writes, by outcome",
    ["controller", "outcome"],
    registry=REGISTRY,
)
APPLY_SKIPPED = Counter(
    "kubeloop_controller_apply_skipped",
    "Server-side applies skipped because the cached object already matched",
    ["controller"],
    registry=REGISTRY,
)
EVENTS_DROPPED = Counter(
    "kubeloop_controller_events_dropped",
    "Kubernetes Events the recorder dropped (rate limit, full buffer or API error)",
    ["controller", "reason"],
    registry=REGISTRY,
)


@dataclass(slots=True)
class ControllerMetrics:
    """The label-bound children of one controller's families (bound once, cheap to bump)."""

    success: Any
    error: Any
    requeue: Any
    requeue_after: Any
    errors: Any
    terminal_errors: Any
    timeouts: Any
    time: Any
    active_workers: Any
    max_concurrent: Any
    own_events_skipped: Any
    apply_skipped: Any

    @classmethod
    def for_controller(cls, name: str) -> ControllerMetrics:
        """Bind (and so create, at zero) every family for controller ``name``."""
        RECONCILE_PANICS.labels(name)
        return cls(
            success=RECONCILE_TOTAL.labels(name, "success"),
            error=RECONCILE_TOTAL.labels(name, "error"),
            requeue=RECONCILE_TOTAL.labels(name, "requeue"),
            requeue_after=RECONCILE_TOTAL.labels(name, "requeue_after"),
            errors=RECONCILE_ERRORS.labels(name),
            terminal_errors=TERMINAL_RECONCILE_ERRORS.labels(name),
            timeouts=RECONCILE_TIMEOUTS.labels(name),
            time=RECONCILE_TIME.labels(name),
            active_workers=ACTIVE_WORKERS.labels(name),
            max_concurrent=MAX_CONCURRENT_RECONCILES.labels(name),
            own_events_skipped=OWN_EVENTS_SKIPPED.labels(name),
            apply_skipped=APPLY_SKIPPED.labels(name),
        )
