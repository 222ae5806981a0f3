"""The workqueue_* metrics in kubeloop's registry, with controller-runtime's names and labels."""

from __future__ import annotations

import asyncio
import gc

from prometheus_client import generate_latest

from kubeloop.metrics import REGISTRY, WORKQUEUE_COLLECTOR
from kubeloop.queue import ItemExponentialBackoff, WorkQueue


def sample(metric: str, name: str, **extra: str) -> float | None:
    return REGISTRY.get_sample_value(metric, {"name": name, "controller": name, **extra})


async def test_metrics_appear_with_nonzero_counts_after_work() -> None:
    name = "test-metrics-work"
    q: WorkQueue[str] = WorkQueue(name, rate_limiter=ItemExponentialBackoff(0.001, 0.01))
    for key in ("a", "b", "a"):
        q.add(key)
    key = await q.get()
    await asyncio.sleep(0.01)
    # In flight: unfinished work and longest-running processor are positive.
    assert (sample("workqueue_unfinished_work_seconds", name) or 0) > 0
    assert (sample("workqueue_longest_running_processor_seconds", name) or 0) > 0
    assert sample("workqueue_depth", name) == 1  # "b"
    q.add_rate_limited(key)  # a failure: retried
    q.done(key)
    for _ in range(2):
        q.done(await asyncio.wait_for(q.get(), 1))

    assert sample("workqueue_adds_total", name) == 3  # a, b, and a's retry; the duplicate is not counted
    assert sample("workqueue_retries_total", name) == 1
    assert sample("workqueue_depth", name) == 0
    assert sample("workqueue_queue_duration_seconds_count", name) == 3
    assert sample("workqueue_work_duration_seconds_count", name) == 3
    assert (sample("workqueue_work_duration_seconds_sum", name) or 0) >= 0.01
    assert sample("workqueue_work_duration_seconds_bucket", name, le="+Inf") == 3
    assert sample("workqueue_work_duration_seconds_bucket", name, le="1e-08") == 0
    assert sample("workqueue_unfinished_work_seconds", name) == 0
    assert sample("workqueue_longest_running_processor_seconds", name) == 0

    text = generate_latest(REGISTRY).decode()
    assert f'workqueue_adds_total{{controller="{name}",name="{name}"}} 3.0' in text


async def test_unnamed_queue_has_no_metrics() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.done(await q.get())
    assert all(snap.name for snap in WORKQUEUE_COLLECTOR.snapshots().values())
    assert q not in WORKQUEUE_COLLECTOR


def test_dropped_queue_disappears_from_metrics() -> None:
    name = "test-metrics-dropped"
    q: WorkQueue[str] = WorkQueue(name)
    q.add("a")
    assert q in WORKQUEUE_COLLECTOR
    assert sample("workqueue_adds_total", name) == 1
    del q
    gc.collect()
    assert sample("workqueue_adds_total", name) is None
