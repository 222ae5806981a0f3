"""Integration: the reconcile loop's contract on the emulator, with ConfigMaps as the primary kind:
backoff on exceptions, TerminalError, requeue_after / requeue, timeouts, watches via an index,
structured logs, metrics, events, and draining on stop."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Mapping
from typing import Any

import pytest
from prometheus_client import generate_latest

from kubeloop.cache import SharedCache
from kubeloop.client import Client
from kubeloop.controller import Context, Controller, ControllerError, Request, Result, TerminalError
from kubeloop.controller._recorder import EventRecorder
from kubeloop.meta import IncompleteObjectError
from kubeloop.metrics import REGISTRY

from ..builders import MINE, cm, label
from .helpers import eventually, quiet, running

# The controllers here reconcile only the ConfigMaps their test created (label MINE): a real cluster
# puts its own (kube-root-ca.crt) in every namespace.


def metric(family: str, **labels: str) -> float:
    value = REGISTRY.get_sample_value(family, labels)
    return value or 0.0


async def test_exception_backs_off_then_succeeds(client: Client, cache: SharedCache, ns: str) -> None:
    calls: list[float] = []

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        if req.name != "flaky":
            return None
        calls.append(time.monotonic())
        if len(calls) <= 3:
            raise RuntimeError(f"failure {len(calls)}")
        return None

    ctl = Controller("backoff-test", for_="v1/ConfigMap", namespace=ns, label_selector=MINE, reconcile=reconcile)
    errors0 = metric("controller_runtime_reconcile_errors_total", controller="backoff-test")
    async with running(ctl, cache):
        await client.create(label(cm("flaky")), namespace=ns)
        await eventually(lambda: len(calls) == 4)
        await quiet(0.2)
    assert len(calls) == 4  # 3 failures, 1 success, no more
    gaps = [b - a for a, b in itertools.pairwise(calls)]
    assert gaps[0] >= 0.004 and gaps[1] >= 0.009 and gaps[2] >= 0.019  # 5 ms doubling
    assert metric("controller_runtime_reconcile_errors_total", controller="backoff-test") - errors0 == 3
    assert metric("controller_runtime_reconcile_total", controller="backoff-test", result="success") >= 1


async def test_terminal_error_is_not_retried(client: Client, cache: SharedCache, ns: str) -> None:
    calls: list[Request] = []

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        calls.append(req)
        raise TerminalError("spec.size must be positive")

    ctl = Controller("terminal-test", for_="v1/ConfigMap", namespace=ns, label_selector=MINE, reconcile=reconcile)
    before = metric("controller_runtime_terminal_reconcile_errors_total", controller="terminal-test")
    async with running(ctl, cache):
        await client.create(label(cm("bad")), namespace=ns)
        await eventually(lambda: len(calls) == 1)
        await quiet(0.3)
        assert len(calls) == 1
        # a change still triggers a reconcile as usual
        await client.patch("v1/ConfigMap", "bad", {"data": {"x": "1"}}, namespace=ns)
        await eventually(lambda: len(calls) == 2)
        await quiet(0.2)
    assert len(calls) == 2
    assert metric("controller_runtime_terminal_reconcile_errors_total", controller="terminal-test") - before == 2


async def test_requeue_after_requeue_and_timeout(client: Client, cache: SharedCache, ns: str) -> None:
    seen: dict[str, list[float]] = {"after": [], "again": [], "slow": []}

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        runs = seen[req.name]
        runs.append(time.monotonic())
        if req.name == "after" and len(runs) == 1:
            return Result(requeue_after=0.1)
        if req.name == "again" and len(runs) < 3:
            return Result(requeue=True)
        if req.name == "slow" and len(runs) == 1:
            await asyncio.sleep(10)
        return None

    ctl = Controller("requeue-test", for_="v1/ConfigMap", namespace=ns, label_selector=MINE, reconcile=reconcile,
                     max_concurrent_reconciles=3, reconcile_timeout=0.1)
    timeouts0 = metric("controller_runtime_reconcile_timeouts_total", controller="requeue-test")
    async with running(ctl, cache):
        for name in seen:
            await client.create(label(cm(name)), namespace=ns)
        await eventually(lambda: len(seen["after"]) == 2 and len(seen["again"]) == 3 and len(seen["slow"]) == 2)
        await quiet(0.25)
    assert len(seen["after"]) == 2 and seen["after"][1] - seen["after"][0] >= 0.09
    assert len(seen["again"]) == 3 and len(seen["slow"]) == 2
    assert metric("controller_runtime_reconcile_timeouts_total", controller="requeue-test") - timeouts0 == 1
    assert metric("controller_runtime_reconcile_total", controller="requeue-test", result="requeue_after") >= 1
    assert metric("controller_runtime_reconcile_total", controller="requeue-test", result="requeue") >= 2


async def test_watches_maps_through_an_index_and_predicates_per_source(
        client: Client, cache: SharedCache, ns: str) -> None:
    runs: list[str] = []

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        obj = ctx.get()
        if obj is not None:
            runs.append(req.name)
        return None

    def by_secret(obj: Mapping[str, Any]) -> str | None:
        return (obj.get("data") or {}).get("secret")

    ctl = Controller("watch-test", for_="v1/ConfigMap", namespace=ns, label_selector=MINE, reconcile=reconcile)
    ctl.index("by-secret", by_secret)
    ctl.watches("v1/Secret", lambda s: ctl.requests_from_index("by-secret", s["metadata"]["name"]), namespace=ns,
                predicates=lambda old, new: new is not None and (new.get("metadata") or {}).get("labels", {}).get(
                    "watched") == "yes")
    async with running(ctl, cache):
        await client.create(label(cm("user", {"secret": "creds"})), namespace=ns)
        await client.create(label(cm("bystander")), namespace=ns)
        await eventually(lambda: sorted(runs) == ["bystander", "user"])
        # filtered out by the source's predicate
        await client.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"}}, namespace=ns)
        await quiet(0.2)
        assert sorted(runs) == ["bystander", "user"]
        await client.patch("v1/Secret", "creds", {"metadata": {"labels": {"watched": "yes"}}}, namespace=ns)
        await eventually(lambda: runs.count("user") == 2)
        await quiet(0.1)
    assert runs.count("bystander") == 1


async def test_log_lines_carry_the_request(client: Client, cache: SharedCache, ns: str,
                                           caplog: pytest.LogCaptureFixture) -> None:
    async def reconcile(req: Request, ctx: Context) -> Result | None:
        ctx.log.info("reconciling now")
        return None

    ctl = Controller("log-test", for_="v1/ConfigMap", namespace=ns, label_selector=MINE, reconcile=reconcile)
    with caplog.at_level(logging.INFO, logger="kubeloop.controller.log-test"):
        async with running(ctl, cache):
            await client.create(label(cm("logged")), namespace=ns)
            await eventually(lambda: any("reconciling now" in r.getMessage() for r in caplog.records))
    rec = next(r for r in caplog.records if "reconciling now" in r.getMessage())
    assert (rec.controller, rec.cluster, rec.namespace, rec.object_name) == ("log-test", "default", ns, "logged")
    assert f"namespace={ns}" in rec.getMessage() and "name=logged" in rec.getMessage()
    assert rec.reconcile_id


async def test_metrics_exposition(client: Client, cache: SharedCache, ns: str) -> None:
    async def reconcile(req: Request, ctx: Context) -> Result | None:
        return None

    ctl = Controller("metrics-test", for_="v1/ConfigMap", namespace=ns, label_selector=MINE, reconcile=reconcile,
                     max_concurrent_reconciles=3)
    async with running(ctl, cache):
        await client.create(label(cm("m")), namespace=ns)
        await eventually(lambda: metric("controller_runtime_reconcile_total", controller="metrics-test",
                                        result="success") >= 1)
        text = generate_latest(REGISTRY).decode()
    for family in ("controller_runtime_reconcile_total", "controller_runtime_reconcile_errors_total",
                   "controller_runtime_terminal_reconcile_errors_total", "controller_runtime_reconcile_time_seconds",
                   "controller_runtime_active_workers", "controller_runtime_max_concurrent_reconciles",
                   "workqueue_adds_total", "workqueue_depth"):
        assert f'{family}' in text and 'controller="metrics-test"' in text
    assert metric("controller_runtime_max_concurrent_reconciles", controller="metrics-test") == 3
    assert metric("controller_runtime_active_workers", controller="metrics-test") == 0
    assert metric("controller_runtime_reconcile_time_seconds_count", controller="metrics-test") >= 1
    assert metric("workqueue_adds_total", name="metrics-test", controller="metrics-test") >= 1


async def test_events_are_posted_and_repeats_aggregated(client: Client, cache: SharedCache, ns: str) -> None:
    async def reconcile(req: Request, ctx: Context) -> Result | None:
        ctx.event("Normal", "Synced", "all good")
        return None

    ctl = Controller("events-test", for_="v1/ConfigMap", namespace=ns, label_selector=MINE, reconcile=reconcile)
    async with running(ctl, cache):
        await client.create(label(cm("ev")), namespace=ns)

        async def posted() -> list[dict[str, Any]]:
            return [e for e in await client.list("events.k8s.io/v1/Event", namespace=ns)
                    if e["regarding"].get("name") == "ev"]
        await eventually(posted)
        for _ in range(2):
            ctl.enqueue(Request("default", ns, "ev"))
            await quiet(0.1)

        async def aggregated() -> bool:
            events = await posted()
            return len(events) == 1 and (events[0].get("series") or {}).get("count") == 3
        await eventually(aggregated)
    (event,) = await posted()
    assert event["reason"] == "Synced" and event["reportingController"] == "events-test"
    assert event["regarding"]["name"] == "ev" and event["regarding"]["kind"] == "ConfigMap"


def test_an_event_about_an_object_without_a_kind_is_a_typed_error_at_the_call(client: Client) -> None:
    """A hand-built object without ``kind`` would be rejected by the server later, unseen: say so at once."""
    recorder = EventRecorder("events-test", lambda cluster: client)
    with pytest.raises(IncompleteObjectError, match="missing kind"):
        recorder.record("default", {"apiVersion": "v1", "metadata": {"name": "x", "namespace": "a"}},
                        type="Normal", reason="Synced", note="n", action="Sync")
    assert recorder.dropped == 0 and recorder.posted == 0


async def test_stop_drains_in_flight_reconciles(client: Client, cache: SharedCache, ns: str) -> None:
    finished: list[str] = []
    started = asyncio.Event()

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        started.set()
        await asyncio.sleep(0.2)
        finished.append(req.name)
        return None

    ctl = Controller("drain-test", for_="v1/ConfigMap", namespace=ns, label_selector=MINE, reconcile=reconcile)
    async with asyncio.TaskGroup() as tg:
        await ctl.start(tg, cache, timeout=10)
        await client.create(label(cm("slow")), namespace=ns)
        await asyncio.wait_for(started.wait(), 5)
        await ctl.stop(drain_timeout=5)
        assert finished == ["slow"] and not ctl.ready


async def test_caches_that_never_sync_fail_with_one_readable_error(client: Client, cache: SharedCache) -> None:
    async def reconcile(req: Request, ctx: Context) -> Result | None:
        return None

    ctl = Controller("nosync-test", for_="missing.example.com/v1/Gadget", reconcile=reconcile,
                     cache_sync_timeout=0.3)
    with pytest.raises(ControllerError, match=r"nosync-test: caches did not sync within 0\.3s"):
        await ctl.run(cache)
    assert not ctl.ready
    with pytest.raises(ValueError, match="group/version/Kind"):
        Controller("x", for_="v1/", reconcile=reconcile)


async def test_enqueue_all_and_from_another_thread(client: Client, cache: SharedCache, ns: str) -> None:
    runs: list[str] = []

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        runs.append(req.name)
        return None

    ctl = Controller("resync-test", for_="v1/ConfigMap", namespace=ns, label_selector=MINE, reconcile=reconcile)
    with pytest.raises(RuntimeError):
        ctl.enqueue_threadsafe(Request("default", ns, "x"))
    for name in ("p", "q"):
        await client.create(label(cm(name)), namespace=ns)
    async with running(ctl, cache):
        with pytest.raises(ControllerError, match="running"):
            ctl.owns("v1/Secret")  # the spec is fixed while it runs
        await eventually(lambda: sorted(runs) == ["p", "q"])
        assert ctl.enqueue_all() == 2
        await eventually(lambda: len(runs) == 4)
        await asyncio.to_thread(ctl.enqueue_threadsafe, Request("default", ns, "from-thread"))
        await eventually(lambda: "from-thread" in runs)


async def test_unknown_cluster_is_a_readable_error(cache: SharedCache) -> None:
    async def reconcile(req: Request, ctx: Context) -> Result | None:
        return None

    ctl = Controller("cluster-test", for_="v1/ConfigMap", reconcile=reconcile, clusters=["nowhere"])
    with pytest.raises(ControllerError, match="unknown cluster 'nowhere'"):
        await ctl.run(cache)
    assert not ctl.ready and not await ctl.wait_ready(0.01)


async def test_every_client_write_path_is_read_back_at_once(client: Client, cache: SharedCache, ns: str) -> None:
    seen: dict[str, Any] = {}

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        if req.name != "parent" or "deleted" in seen:
            return None
        assert isinstance(ctx.client, Client)  # a real client: its write hook feeds read your writes
        configmaps = ctx.reader("v1/ConfigMap")
        assert {m for m in dir(configmaps) if not m.startswith("_")} == {"get", "list", "keys", "by_index",
                                                                         "index_keys", "values"}  # the protocol
        child = {**cm("child", {"k": "v"}), "metadata": {"name": "child", "labels": {"ryw-test": "yes"}}}
        await ctx.client.request_json("POST", f"/api/v1/namespaces/{ns}/configmaps", body=child)
        seen["created"] = configmaps.get("child", ns)  # before any watch event could arrive
        await ctx.client.delete_collection("v1/ConfigMap", namespace=ns, label_selector={"ryw-test": "yes"})
        seen["deleted"] = configmaps.get("child", ns)
        return None

    ctl = Controller("write-paths-test", for_="v1/ConfigMap", namespace=ns, reconcile=reconcile)
    async with running(ctl, cache):
        await client.create(cm("parent"), namespace=ns)
        await eventually(lambda: "deleted" in seen)
    assert seen["created"] is not None and seen["created"]["data"] == {"k": "v"}
    assert seen["deleted"] is None


async def test_a_reconcile_failing_while_the_controller_stops_says_it_is_not_retried(
        client: Client, ns: str, cache: SharedCache, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 31 item 16: a reconcile that failed during shutdown was logged "retrying in 0.000s",
    although the stopping queue takes nothing. The line says what happens instead."""
    started, release = asyncio.Event(), asyncio.Event()

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        started.set()
        await release.wait()
        raise RuntimeError("failed while stopping")

    ctl = Controller("fails-while-stopping", for_="v1/ConfigMap", namespace=ns, label_selector=MINE,
                     reconcile=reconcile)
    caplog.set_level(logging.INFO, "kubeloop")
    async with asyncio.TaskGroup() as tg:
        await ctl.start(tg, cache, timeout=10)
        await client.create(label(cm("s1")), namespace=ns)
        await asyncio.wait_for(started.wait(), 10)
        stopping = tg.create_task(ctl.stop(drain_timeout=5))
        await eventually(lambda: ctl._run is None or ctl._run.queue.shutting_down, what="the queue shut down")
        release.set()
        await stopping
    lines = [r.getMessage() for r in caplog.records if "failed while stopping" in r.getMessage()]
    assert lines and all("retrying in" not in line for line in lines), lines
    assert "not retried now: the controller is stopping" in lines[0]
