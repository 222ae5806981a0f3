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

prometheus_client itself (with http.server, email, gzip, ...: some 30 ms of imports) is imported
on the first access to ``REGISTRY`` or one of the counters below (module ``__getattr__``, PEP 562),
which creates all of them at once: a program using an Informer or a Client outside a Manager never
pays for it, and the families ``/metrics`` serves are the same either way. Only the functions at
the end of this module import it.
"""

from __future__ import annotations

import threading
import weakref
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
    from prometheus_client.core import Metric

# Created with prometheus_client on first access (see `__getattr__`); declared here for readers and mypy.
REGISTRY: CollectorRegistry
"""The registry kubeloop's ``/metrics`` endpoint serves."""
READ_YOUR_WRITES_WAITS: Counter
"""kubeloop_controller_read_your_writes_waits{controller, outcome}."""
EVENTS_DROPPED: Counter
"""kubeloop_controller_events_dropped{controller, reason}."""
CACHE_OBJECT_ERRORS: Counter
"""kubeloop_cache_object_errors{resource, function}."""
CACHES_COLLECTED: Counter
"""kubeloop_cache_informers_collected{cluster, resource}."""
LEADER_STATUS: Gauge
"""leader_election_master_status{name} (controller-runtime's name)."""
SLOWPATH_TOTAL: Counter
"""leader_election_slowpath_total{name}."""
WEBHOOK_REQUESTS: Counter
"""controller_runtime_webhook_requests_total{webhook, code} (controller-runtime's name; webhook: the path)."""
WEBHOOK_LATENCY: Histogram
"""controller_runtime_webhook_latency_seconds{webhook, code}."""
WEBHOOK_IN_FLIGHT: Gauge
"""controller_runtime_webhook_requests_in_flight{webhook}."""
WEBHOOK_HANDLER_FAILURES: Counter
"""kubeloop_webhook_handler_failures{webhook, reason}: answered for the handler (exception, timeout, invalid_object)."""
WEBHOOK_CERTIFICATE_EXPIRY: Gauge
"""kubeloop_webhook_certificate_expiry_timestamp_seconds{source, certificate}: when the served certificate expires."""

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
            _family("gauge", "workqueue_depth", "Current depth of workqueue", labels),
            _family("counter", "workqueue_adds", "Total number of adds handled by workqueue", labels),
            _family("counter", "workqueue_retries", "Total number of retries handled by workqueue", labels),
            _family(
                "histogram",
                "workqueue_queue_duration_seconds",
                "How long in seconds an item stays in workqueue before being requested",
                labels,
            ),
            _family(
                "histogram",
                "workqueue_work_duration_seconds",
                "How long in seconds processing an item from workqueue takes.",
                labels,
            ),
            _family(
                "gauge",
                "workqueue_unfinished_work_seconds",
                "How many seconds of work has been done that is in progress and hasn't been observed by "
                "work_duration. Large values indicate stuck threads. One can deduce the number of stuck "
                "threads by observing the rate at which this increases.",
                labels,
            ),
            _family(
                "gauge",
                "workqueue_longest_running_processor_seconds",
                "How many seconds has the longest running processor for workqueue been running.",
                labels,
            ),
        )

    def _histogram(self, sample: DurationSample) -> list[tuple[str, float]]:
        return _cumulative(self._buckets, sample.counts)

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


# --------------------------------------------------------------------------- controller families
#
# Names, labels and buckets follow controller-runtime (pkg/internal/controller/metrics) so that
# existing dashboards and alerts work unchanged. As for the work queue, the hot path only bumps
# plain attributes of a ControllerMetrics; a collector turns them into families at scrape time.

# controller-runtime's reconcile_time_seconds buckets.
RECONCILE_TIME_BUCKETS: tuple[float, ...] = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
)


@dataclass(slots=True, weakref_slot=True, eq=False)
class ControllerMetrics:
    """One controller's counters: plain attributes bumped on the hot path, read at scrape time.

    The ``controller_runtime_*`` families (and kubeloop's own per-controller counters) are
    produced by :data:`CONTROLLER_COLLECTOR` from these; controllers sharing a name are summed.
    Compared by identity (``eq=False``): the collector keeps each instance in a weak set.
    """

    name: str
    success: int = 0
    error: int = 0
    requeue: int = 0
    requeue_after: int = 0
    errors: int = 0
    terminal_errors: int = 0
    timeouts: int = 0
    panics: int = 0
    active_workers: int = 0
    max_concurrent: int = 0
    own_events_skipped: int = 0
    apply_skipped: int = 0
    time_counts: list[int] = field(default_factory=lambda: [0] * (len(RECONCILE_TIME_BUCKETS) + 1))
    time_sum: float = 0.0

    def observe_time(self, seconds: float) -> None:
        """Record one reconcile's duration."""
        self.time_counts[bisect_left(RECONCILE_TIME_BUCKETS, seconds)] += 1
        self.time_sum += seconds

    @classmethod
    def for_controller(cls, name: str) -> ControllerMetrics:
        """New counters for controller ``name``, reported by :data:`CONTROLLER_COLLECTOR` while they live."""
        m = cls(name)
        CONTROLLER_COLLECTOR.register(m)
        return m


_CONTROLLER_COUNTERS = (
    ("controller_runtime_reconcile_errors", "Total number of reconciliation errors per controller", "errors"),
    ("controller_runtime_terminal_reconcile_errors", "Total number of terminal reconciliation errors per controller",
     "terminal_errors"),
    ("controller_runtime_reconcile_panics", "Total number of reconciliation panics per controller", "panics"),
    ("controller_runtime_reconcile_timeouts", "Total number of reconciliation timeouts per controller", "timeouts"),
    ("kubeloop_controller_own_events_skipped",
     "Watch events caused only by the controller's own writes, not turned into reconciles", "own_events_skipped"),
    ("kubeloop_controller_apply_skipped", "Writes skipped because the cached object already matched",
     "apply_skipped"),
)
_RESULTS = ("success", "error", "requeue", "requeue_after")


class ControllerCollector:
    """Collects the per-controller families from every live :class:`ControllerMetrics`."""

    def __init__(self) -> None:
        self._sources: weakref.WeakSet[ControllerMetrics] = weakref.WeakSet()
        self._lock = threading.Lock()

    def register(self, m: ControllerMetrics) -> None:
        """Report ``m`` (until it is garbage collected)."""
        with self._lock:
            self._sources.add(m)

    def _merged(self) -> dict[str, list[ControllerMetrics]]:
        with self._lock:
            sources = list(self._sources)
        by_name: dict[str, list[ControllerMetrics]] = {}
        for m in sources:
            by_name.setdefault(m.name, []).append(m)
        return dict(sorted(by_name.items()))

    def describe(self) -> Iterator[Metric]:
        """The families without samples."""
        yield _family("counter", "controller_runtime_reconcile", "Total number of reconciliations per controller",
                      ["controller", "result"])
        for name, doc, _ in _CONTROLLER_COUNTERS:
            yield _family("counter", name, doc, ["controller"])
        yield _family("histogram", "controller_runtime_reconcile_time_seconds",
                      "Length of time per reconciliation per controller", ["controller"])
        yield _family("gauge", "controller_runtime_max_concurrent_reconciles",
                      "Maximum number of concurrent reconciles per controller", ["controller"])
        yield _family("gauge", "controller_runtime_active_workers",
                      "Number of currently used workers per controller", ["controller"])

    def collect(self) -> Iterator[Metric]:
        """One sample set per controller name."""
        total, *counters, hist, max_c, active = self.describe()
        for name, ms in self._merged().items():
            for result in _RESULTS:
                total.add_metric([name, result], sum(getattr(m, result) for m in ms))  # type: ignore[attr-defined]
            for fam, (_, _, attr) in zip(counters, _CONTROLLER_COUNTERS, strict=True):
                fam.add_metric([name], sum(getattr(m, attr) for m in ms))  # type: ignore[attr-defined]
            counts = [sum(c) for c in zip(*(m.time_counts for m in ms), strict=True)]
            buckets = _cumulative(RECONCILE_TIME_BUCKETS, counts)
            hist.add_metric([name], buckets, sum(m.time_sum for m in ms))  # type: ignore[attr-defined]
            max_c.add_metric([name], max(m.max_concurrent for m in ms))  # type: ignore[attr-defined]
            active.add_metric([name], sum(m.active_workers for m in ms))  # type: ignore[attr-defined]
        yield total
        yield from counters
        yield from (hist, max_c, active)


CONTROLLER_COLLECTOR = ControllerCollector()
"""Every controller's metrics register here; it is registered in ``REGISTRY``."""


# ---- shared caches and dynamic targets (docs/targets.md)


class InformerCounts(Protocol):
    """A `kubeloop.cache.SharedCache` as the cache collector sees it."""

    def open_informers(self) -> dict[tuple[str, str], int]: ...


class TargetCounts(Protocol):
    """A controller's `kubeloop.controller._targets.Targets` as the target collector sees it."""

    controller: str

    def watched(self) -> int: ...

    def open_caches(self) -> list[tuple[str, str]]: ...


LIVE_CACHES: weakref.WeakSet[InformerCounts] = weakref.WeakSet()
"""Every live shared cache (registered by the cache itself), read at scrape time."""
LIVE_TARGETS: weakref.WeakSet[TargetCounts] = weakref.WeakSet()
"""Every running controller's targets (registered by the controller), read at scrape time."""


class CacheCollector:
    """Open informers per cluster and resource; targets watched and target caches per controller."""

    def describe(self) -> Iterator[Metric]:
        """The families without samples."""
        yield _family("gauge", "kubeloop_cache_informers_open", "Informers running, per cluster and resource",
                      ["cluster", "resource"])
        yield _family("gauge", "kubeloop_controller_targets_watched",
                      "Distinct objects watched with ctx.watch_target, per controller", ["controller"])
        yield _family("gauge", "kubeloop_controller_target_caches",
                      "Caches a controller holds for its targets, per cluster and resource",
                      ["controller", "cluster", "resource"])

    def collect(self) -> Iterator[Metric]:
        """Sums over the live caches and controllers."""
        informers, watched, caches = self.describe()
        opened: dict[tuple[str, str], int] = {}
        for cache in list(LIVE_CACHES):
            for key, n in cache.open_informers().items():
                opened[key] = opened.get(key, 0) + n
        for (cluster, resource), n in sorted(opened.items()):
            informers.add_metric([cluster, resource], n)  # type: ignore[attr-defined]
        per_controller: dict[str, int] = {}
        held: dict[tuple[str, str, str], int] = {}
        for t in list(LIVE_TARGETS):
            per_controller[t.controller] = per_controller.get(t.controller, 0) + t.watched()
            for cluster, resource in t.open_caches():
                k = (t.controller, cluster, resource)
                held[k] = held.get(k, 0) + 1
        for name, n in sorted(per_controller.items()):
            watched.add_metric([name], n)  # type: ignore[attr-defined]
        for labels, n in sorted(held.items()):
            caches.add_metric(list(labels), n)  # type: ignore[attr-defined]
        yield from (informers, watched, caches)



# --------------------------------------------------------------------------- sharding
#
# The shard map is computed at scrape time (rendezvous over the cached keys), not on the
# reconcile path: a replica's membership registers itself with SHARD_COLLECTOR while it runs.


@dataclass(frozen=True, slots=True)
class ShardMap:
    """One sharding group as this replica sees it: the live members and the keys each owns."""

    name: str
    identity: str
    keys_per_member: dict[str, int]


class ShardMapSource(Protocol):
    """Anything that can report a :class:`ShardMap` (a replica's sharding membership)."""

    def shard_map(self) -> ShardMap: ...


class ShardCollector:
    """``kubeloop_shard_members`` and ``kubeloop_shard_keys`` from every registered membership
    (labelled with the replica that reports them: replicas in one process stay apart)."""

    def __init__(self) -> None:
        self._sources: list[ShardMapSource] = []
        self._lock = threading.Lock()

    def register(self, source: ShardMapSource) -> None:
        with self._lock:
            self._sources.append(source)

    def unregister(self, source: ShardMapSource) -> None:
        with self._lock:
            if source in self._sources:
                self._sources.remove(source)

    def describe(self) -> Iterator[Metric]:
        yield _family("gauge", "kubeloop_shard_members", "Live members of a sharding group, as a replica sees them",
                      ["name", "replica"])
        yield _family("gauge", "kubeloop_shard_keys",
                      "Cached keys each live member owns (rendezvous hashing over the live members), "
                      "as a replica sees them", ["name", "replica", "member"])

    def collect(self) -> Iterator[Metric]:
        members, keys = self.describe()
        with self._lock:
            sources = list(self._sources)
        for source in sources:
            m = source.shard_map()
            members.add_metric([m.name, m.identity], len(m.keys_per_member))  # type: ignore[attr-defined]
            for member, n in m.keys_per_member.items():
                keys.add_metric([m.name, m.identity, member], n)  # type: ignore[attr-defined]
        yield members
        yield keys


SHARD_COLLECTOR = ShardCollector()
"""Sharding memberships register here while they run; it is registered in ``REGISTRY``."""


# --------------------------------------------------------------------------- the client's requests
#
# client-go's families (k8s.io/client-go/tools/metrics as controller-runtime and the Kubernetes
# components register them): every HTTP attempt by code, method and host (`<error>` when no
# response came back), as controller-runtime exports it; and each request's latency, retries and
# the rate limiter's wait included (watches excluded), under the components' name, labels and
# buckets (k8s.io/component-base/metrics/prometheus/restclient). controller-runtime no longer
# exports the latency (its URL label was unbounded); `host` keeps it bounded here.

REST_CLIENT_DURATION_BUCKETS: tuple[float, ...] = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)


class RestClientCollector:
    """Counts the client's requests: plain dict entries bumped by the transport, read at scrape time."""

    def __init__(self) -> None:
        self._requests: dict[tuple[str, str, str], int] = {}
        self._durations: dict[tuple[str, str], list[float]] = {}  # per-bucket counts (+Inf last), then the sum

    def request_done(self, code: int | None, method: str, host: str) -> None:
        """One HTTP attempt answered with ``code`` (None: no response, client-go's ``<error>``)."""
        key = ("<error>" if code is None else str(code), method, host)
        self._requests[key] = self._requests.get(key, 0) + 1

    def observe_latency(self, verb: str, host: str, seconds: float) -> None:
        """One request (all its attempts) took ``seconds``."""
        counts = self._durations.get((verb, host))
        if counts is None:
            counts = self._durations[(verb, host)] = [0.0] * (len(REST_CLIENT_DURATION_BUCKETS) + 2)
        counts[bisect_left(REST_CLIENT_DURATION_BUCKETS, seconds)] += 1
        counts[-1] += seconds

    def requests(self) -> dict[tuple[str, str, str], int]:
        """Attempts so far by (code, method, host)."""
        return dict(self._requests)  # one atomic copy: scrapes may come from another thread

    def describe(self) -> Iterator[Metric]:
        """The families without samples."""
        yield _family("counter", "rest_client_requests",
                      "Number of HTTP requests, partitioned by status code, method, and host.", ["code", "method", "host"])
        yield _family("histogram", "rest_client_request_duration_seconds",
                      "Request latency in seconds. Broken down by verb, and host.", ["verb", "host"])

    def collect(self) -> Iterator[Metric]:
        """One sample per (code, method, host) and one histogram per (verb, host)."""
        total, hist = self.describe()
        for labels, n in sorted(self.requests().items()):
            total.add_metric(list(labels), n)  # type: ignore[attr-defined]
        for (verb, host), counts in sorted(dict(self._durations).items()):
            per_bucket = [int(c) for c in counts[:-1]]
            hist.add_metric([verb, host], _cumulative(REST_CLIENT_DURATION_BUCKETS, per_bucket),  # type: ignore[attr-defined]
                            counts[-1])
        yield total
        yield hist


REST_CLIENT = RestClientCollector()
"""Every client's transport counts its requests here; it is registered in ``REGISTRY``."""


# --------------------------------------------------------------------------- prometheus_client
#
# Everything above is plain Python; below is the one place that turns it into prometheus_client
# objects, on first need (see the module docstring).


def _family(kind: Literal["counter", "gauge", "histogram"], name: str, doc: str, labels: list[str]) -> Metric:
    """A family without samples, for a collector's describe()/collect() (called only by ``REGISTRY``)."""
    from prometheus_client import core

    cls = {
        "counter": core.CounterMetricFamily,
        "gauge": core.GaugeMetricFamily,
        "histogram": core.HistogramMetricFamily,
    }[kind]
    return cls(name, doc, labels=labels)


def _cumulative(bounds: tuple[float, ...], counts: Sequence[int]) -> list[tuple[str, float]]:
    """Histogram buckets as prometheus_client wants them: cumulative, labelled as Go prints floats,
    from per-bucket counts whose last one is +Inf."""
    from prometheus_client.utils import floatToGoString

    out: list[tuple[str, float]] = []
    running = 0
    for bound, count in zip(bounds, counts, strict=False):
        running += count
        out.append((floatToGoString(bound), running))
    out.append(("+Inf", running + counts[-1]))
    return out


def _prometheus() -> dict[str, Any]:
    """``REGISTRY`` with every collector registered, and the counters, in the order ``/metrics``
    has always listed them."""
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

    registry = CollectorRegistry(auto_describe=True)
    made: dict[str, Any] = {"REGISTRY": registry}

    def metric(key: str, kind: type[Counter] | type[Gauge] | type[Histogram], name: str, doc: str,
               labels: list[str]) -> None:
        made[key] = kind(name, doc, labels, registry=registry)

    registry.register(WORKQUEUE_COLLECTOR)
    registry.register(CONTROLLER_COLLECTOR)
    # kubeloop's own controller families (no controller-runtime equivalent).
    metric("READ_YOUR_WRITES_WAITS", Counter, "kubeloop_controller_read_your_writes_waits",
           "Reconciles that waited for the cache to catch up with the controller's own writes, by outcome",
           ["controller", "outcome"])
    metric("EVENTS_DROPPED", Counter, "kubeloop_controller_events_dropped",
           "Kubernetes Events the recorder dropped (rate limit, full buffer or API error)", ["controller", "reason"])
    metric("CACHE_OBJECT_ERRORS", Counter, "kubeloop_cache_object_errors",
           "Objects a transform, filter or index function raised on; the cache kept their last good version",
           ["resource", "function"])
    metric("CACHES_COLLECTED", Counter, "kubeloop_cache_informers_collected",
           "Informers stopped because no one used them for the cache's grace period (their watch closed)",
           ["cluster", "resource"])
    registry.register(CacheCollector())
    registry.register(SHARD_COLLECTOR)
    registry.register(REST_CLIENT)
    # leader election (controller-runtime's names)
    metric("LEADER_STATUS", Gauge, "leader_election_master_status",
           "1 while this process holds the leader election lease, else 0.", ["name"])
    metric("SLOWPATH_TOTAL", Counter, "leader_election_slowpath_total",
           "Lease renewals that had to re-read the Lease (the cached one conflicted).", ["name"])
    # webhook server (controller-runtime's names; `webhook` is the path, as there)
    metric("WEBHOOK_REQUESTS", Counter, "controller_runtime_webhook_requests_total",
           "Total number of admission requests by HTTP status code.", ["webhook", "code"])
    metric("WEBHOOK_LATENCY", Histogram, "controller_runtime_webhook_latency_seconds",
           "Histogram of the latency of processing admission requests", ["webhook", "code"])
    metric("WEBHOOK_IN_FLIGHT", Gauge, "controller_runtime_webhook_requests_in_flight",
           "Current number of admission requests being served.", ["webhook"])
    metric("WEBHOOK_HANDLER_FAILURES", Counter, "kubeloop_webhook_handler_failures",
           "Admission requests answered per the failure policy because the handler raised, timed out or could "
           "not read the object as its model", ["webhook", "reason"])
    metric("WEBHOOK_CERTIFICATE_EXPIRY", Gauge, "kubeloop_webhook_certificate_expiry_timestamp_seconds",
           "When the webhook server's certificate expires (Unix time)", ["source", "certificate"])
    return made


class _WithSamples:
    """``REGISTRY`` as client_golang's registry gathers it: a family without samples (a labelled
    metric no one has set yet, e.g. ``leader_election_master_status`` without leader election) is
    left out, not printed as bare ``# HELP``/``# TYPE`` lines, as controller-runtime's /metrics does."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterator[Metric]:
        return (family for family in self._registry.collect() if family.samples)


def exposition() -> tuple[bytes, str]:
    """What ``/metrics`` serves: ``REGISTRY`` in Prometheus text format, and its content type."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    registry: CollectorRegistry = __getattr__("REGISTRY")  # a bare name here would not reach __getattr__
    return generate_latest(_WithSamples(registry)), CONTENT_TYPE_LATEST


_PROMETHEUS_NAMES = frozenset(
    {"REGISTRY", "READ_YOUR_WRITES_WAITS", "EVENTS_DROPPED", "CACHE_OBJECT_ERRORS", "CACHES_COLLECTED",
     "LEADER_STATUS", "SLOWPATH_TOTAL", "WEBHOOK_REQUESTS", "WEBHOOK_LATENCY", "WEBHOOK_IN_FLIGHT",
     "WEBHOOK_HANDLER_FAILURES", "WEBHOOK_CERTIFICATE_EXPIRY"}
)
_prometheus_lock = threading.Lock()


def __getattr__(name: str) -> Any:
    """The prometheus_client objects above, all created on the first access to any of them."""
    if name not in _PROMETHEUS_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with _prometheus_lock:  # scrapes may come from an exporter thread
        if "REGISTRY" not in globals():
            globals().update(_prometheus())  # from now on plain module attributes
    return globals()[name]


def __dir__() -> list[str]:
    return sorted(set(globals()) | _PROMETHEUS_NAMES)
