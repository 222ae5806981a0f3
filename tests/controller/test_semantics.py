"""Issue 11's controller-runtime semantics, end to end on the emulator over HTTP (or a real cluster).

Each test states what a controller-runtime user relies on; none assumes an empty namespace or an
exact number of reconciles.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

import pytest

from kubeloop.cache._shared import SharedCache
from kubeloop.client import Client
from kubeloop.controller import CacheNotSynced, Context, Controller, Request, Result

from .helpers import eventually, quiet, running


def widget(group: str, name: str) -> dict[str, Any]:
    return {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"size": 1}}


def child_of(w: Mapping[str, Any], name: str) -> dict[str, Any]:
    meta = w["metadata"]
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": meta["namespace"],
                         "ownerReferences": [{"apiVersion": w["apiVersion"], "kind": "Widget", "name": meta["name"],
                                              "uid": meta["uid"], "controller": True}]}}


async def test_own_child_write_reconciles_the_owner_again(
        client: Client, cache: SharedCache, ns: str, widget_group: str) -> None:
    """Item 1: a child the reconcile itself created reconciles its owner again (controller-runtime)."""
    seen: list[int] = []

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        w = ctx.get()
        if w is None:
            return None
        seen.append(len(ctx.owned("v1/ConfigMap")))
        if not seen[-1]:
            await ctx.client.create(child_of(w, f"{req.name}-child"), namespace=req.namespace)
        return None

    ctl = Controller("own-child", for_=f"{widget_group}/v1/Widget", reconcile=reconcile).owns("v1/ConfigMap")
    async with running(ctl, cache):
        await client.create(widget(widget_group, "p1"), namespace=ns)
        # nothing but the reconcile's own create changes; it must still be reconciled again
        await eventually(lambda: seen and seen[-1] == 1, timeout=10)


async def test_own_write_to_the_reconciled_object_does_not_loop(
        client: Client, cache: SharedCache, ns: str, widget_group: str) -> None:
    """Item 1: a status write the reconcile based on what it read does not reconcile again (no
    predicate needed); runs stop once nothing changes."""
    runs: list[int] = []

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        runs.append(1)
        w = ctx.get()
        if w is not None:
            await ctx.patch_status({"runs": len(runs)})  # a different status on every run
        return None

    ctl = Controller("own-status", for_=f"{widget_group}/v1/Widget", reconcile=reconcile)
    async with running(ctl, cache):
        await client.create(widget(widget_group, "s1"), namespace=ns)
        await eventually(lambda: runs, timeout=10)
        await quiet(0.5)
        settled = len(runs)
        await quiet(0.5)
        assert len(runs) == settled


async def test_suppress_all_owned_shows_the_reconciles_own_writes(
        client: Client, cache: SharedCache, ns: str, widget_group: str) -> None:
    """Item 1: with ``suppress_own_writes="all"`` the children's events do not come back, so
    ``ctx.owned()`` must show what the reconcile just created, changed or deleted."""
    after_create: list[set[str]] = []
    after_delete: list[set[str]] = []

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        w = ctx.get()
        if w is None:
            return None
        for i in range(3):
            await ctx.client.create(child_of(w, f"{req.name}-c{i}"), namespace=req.namespace)
        after_create.append({c["metadata"]["name"] for c in ctx.owned("v1/ConfigMap")})
        await ctx.client.delete("v1/ConfigMap", f"{req.name}-c0", namespace=req.namespace)
        after_delete.append({c["metadata"]["name"] for c in ctx.reader("v1/ConfigMap").list(req.namespace)
                             if c["metadata"]["name"].startswith(req.name)})
        return None

    ctl = Controller("own-all", for_=f"{widget_group}/v1/Widget", reconcile=reconcile,
                     suppress_own_writes="all").owns("v1/ConfigMap")
    async with running(ctl, cache):
        await client.create(widget(widget_group, "a1"), namespace=ns)
        await eventually(lambda: after_delete, timeout=10)
    assert after_create[0] == {"a1-c0", "a1-c1", "a1-c2"}
    assert after_delete[0] == {"a1-c1", "a1-c2"}


async def test_requeue_after_zero_runs_again(
        client: Client, cache: SharedCache, ns: str, widget_group: str) -> None:
    """Item 6: ``Result(requeue_after=0)`` (a computed delay that reached zero) runs again now; it
    is not silently dropped as a zero ``RequeueAfter`` is in controller-runtime."""
    runs: list[str] = []

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        if req.name == "z1":
            runs.append(req.name)
        return Result(requeue_after=0) if len(runs) < 3 else None

    ctl = Controller("requeue-zero", for_=f"{widget_group}/v1/Widget", reconcile=reconcile)
    async with running(ctl, cache):
        await client.create(widget(widget_group, "z1"), namespace=ns)
        await eventually(lambda: len(runs) >= 3, timeout=10)


async def test_apply_with_owner_leaves_the_callers_object_alone(
        client: Client, cache: SharedCache, ns: str, widget_group: str) -> None:
    """Item 6: ``ctx.apply(obj, owner=...)`` sets the owner reference on a copy."""
    passed: list[dict[str, Any]] = []

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        w = ctx.get()
        if w is None:
            return None
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{req.name}-cm", "labels": {"a": "b"}},
              "data": {"k": "v"}}
        await ctx.apply(cm, owner=w)
        passed.append(cm)
        return None

    ctl = Controller("apply-copy", for_=f"{widget_group}/v1/Widget", reconcile=reconcile).owns("v1/ConfigMap")
    async with running(ctl, cache):
        await client.create(widget(widget_group, "o1"), namespace=ns)
        await eventually(lambda: passed, timeout=10)
        cm = await client.get("v1/ConfigMap", "o1-cm", namespace=ns)
    assert cm["metadata"]["ownerReferences"][0]["name"] == "o1"
    assert passed[0] == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "o1-cm", "labels": {"a": "b"}},
                         "data": {"k": "v"}}


async def test_first_reconcile_error_logs_its_traceback_repeats_one_line(
        client: Client, cache: SharedCache, ns: str, widget_group: str, caplog: pytest.LogCaptureFixture) -> None:
    """Item 12: an unexpected error shows where it came from the first time (without ``-v``), and
    its repeats are one line each with a count."""
    runs: list[int] = []

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        if req.name == "e1":
            runs.append(1)
            raise KeyError("spec.missing")
        return None

    ctl = Controller("first-error", for_=f"{widget_group}/v1/Widget", reconcile=reconcile)
    with caplog.at_level(logging.INFO, logger="kubeloop.controller.first-error"):
        async with running(ctl, cache):
            await client.create(widget(widget_group, "e1"), namespace=ns)
            await eventually(lambda: len(runs) >= 4, timeout=10)
    failed = [r for r in caplog.records if "reconcile failed" in r.getMessage()]
    assert len(failed) >= 4
    assert failed[0].exc_info is not None and failed[0].levelno == logging.ERROR
    assert all(r.exc_info is None for r in failed[1:])
    assert "(4 times;" in failed[3].getMessage()


async def test_controller_filter_and_debounce_max_wait(
        client: Client, cache: SharedCache, ns: str, widget_group: str) -> None:
    """Item 5: ``filter=`` (what the primary's informer stores) and ``debounce_max_wait`` are
    options of `Controller` itself."""
    reconciled: set[str] = set()

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        reconciled.add(req.name)
        return None

    with pytest.raises(ValueError, match="debounce_max_wait"):
        Controller("bad-debounce", for_=f"{widget_group}/v1/Widget", reconcile=reconcile, debounce=1.0,
                   debounce_max_wait=0.5)
    ctl = Controller("filtered", for_=f"{widget_group}/v1/Widget", reconcile=reconcile, debounce=0.01,
                     debounce_max_wait=0.05, filter=lambda o: o["metadata"]["name"].startswith("keep"))
    async with running(ctl, cache):
        await client.create(widget(widget_group, "drop1"), namespace=ns)
        await client.create(widget(widget_group, "keep1"), namespace=ns)
        await eventually(lambda: "keep1" in reconciled, timeout=10)
        await quiet()
        assert ctl.primary_store().get("drop1", ns) is None
    assert "drop1" not in reconciled


async def test_a_closed_fence_starts_no_reconcile(
        client: Client, cache: SharedCache, ns: str, widget_group: str) -> None:
    """Item 9: the runtime asks the fence (leader election's ``may_lead``) before each reconcile;
    a request that arrives while it is closed waits, and runs once it opens."""
    allowed = False
    runs: list[str] = []

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        runs.append(req.name)
        return None

    ctl = Controller("fenced", for_=f"{widget_group}/v1/Widget", reconcile=reconcile)
    async with asyncio.TaskGroup() as tg:
        tg.create_task(ctl.run(cache, fence=lambda: allowed))
        assert await ctl.wait_ready(10)
        await client.create(widget(widget_group, "f1"), namespace=ns)
        await quiet(0.5)
        assert "f1" not in runs
        allowed = True
        await eventually(lambda: "f1" in runs, timeout=10)
        await ctl.stop(drain_timeout=5)


async def test_watches_events_during_the_initial_list_see_a_full_primary_index(
        client: Client, cache: SharedCache, ns: str, widget_group: str, apiserver: Any) -> None:
    """Item 3: a ``watches`` map function that reads the primary's index never runs against a
    partial cache (here the primary's list is slow: the ConfigMaps arrive first)."""
    faults = apiserver.faults
    if faults is None:
        pytest.skip("needs the emulator's fault injection")
    w = widget(widget_group, "m1")
    w["metadata"]["labels"] = {"config": "m1-ref"}
    await client.create(w, namespace=ns)
    await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m1-ref"}}, namespace=ns)
    reconciled: set[str] = set()

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        reconciled.add(req.name)
        return None

    def by_config(obj: Mapping[str, Any]) -> list[str]:
        cfg = ((obj.get("metadata") or {}).get("labels") or {}).get("config")
        return [cfg] if cfg else []

    ctl = Controller("mapped", for_=f"{widget_group}/v1/Widget", reconcile=reconcile,
                     predicates=lambda old, new: False)  # only the ConfigMaps' mapping enqueues
    ctl.index("by-config", by_config).watches(
        "v1/ConfigMap", lambda cm: ctl.requests_from_index("by-config", cm["metadata"]["name"]), namespace=ns)
    faults.delay(1.0, resource=f"{widget_group}/v1/widgets")
    try:
        async with running(ctl, cache):
            await eventually(lambda: "m1" in reconciled, timeout=10)
    finally:
        faults.reset()


async def test_a_read_of_an_unsynced_cache_waits_and_runs_again(
        client: Client, cache: SharedCache, ns: str, widget_group: str) -> None:
    """Item 3: `CacheNotSynced` (raised by a `ManagedInformer` read before its first list) is not
    an error: the reconcile runs again once the cache synced."""
    synced = asyncio.Event()
    runs: list[bool] = []

    async def wait_synced(timeout: float | None) -> None:  # noqa: ASYNC109
        await synced.wait()

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        if req.name != "u1":
            return None
        runs.append(synced.is_set())
        if not synced.is_set():
            raise CacheNotSynced("informer of v1/Pod", wait_synced)
        return None

    ctl = Controller("unsynced", for_=f"{widget_group}/v1/Widget", reconcile=reconcile)
    async with running(ctl, cache):
        errors = ctl.metrics.errors
        await client.create(widget(widget_group, "u1"), namespace=ns)
        await eventually(lambda: runs, timeout=10)
        await quiet(0.2)
        synced.set()
        await eventually(lambda: runs[-1], timeout=10)
        assert ctl.metrics.errors == errors


async def test_a_metadata_only_owns_beside_a_full_informer_opens_no_second_watch(
        client: Client, ns: str, cache: SharedCache, apiserver: Any) -> None:
    """Issue 31 item 9: a controller owning ConfigMaps (metadata-only, the default of ``owns()``)
    beside another reading them whole used to open a second watch of ConfigMaps. It is served by the
    full informer; the owner still reads its children as PartialObjectMetadata and is reconciled
    when one changes."""
    from kubeloop.cache import MetadataOnlyError

    kinds: list[list[str]] = []
    refused: list[bool] = []

    async def owner(req: Request, ctx: Context) -> Result | None:
        children = ctx.owned("v1/ConfigMap")
        kinds.append([c["kind"] for c in children])
        for c in children:
            try:
                c["data"]
            except MetadataOnlyError:
                refused.append(True)
        return None

    async def nothing(req: Request, ctx: Context) -> Result | None:
        return None

    readers = Controller("reads-configmaps", for_="v1/ConfigMap", namespace=ns, reconcile=nothing)
    owners = Controller("owns-configmaps", for_="v1/Secret", namespace=ns, reconcile=owner)
    owners.owns("v1/ConfigMap", namespace=ns)
    async with running(readers, cache), running(owners, cache):
        secret = await client.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "p"}},
                                     namespace=ns)
        ref = {"apiVersion": "v1", "kind": "Secret", "name": "p", "uid": secret["metadata"]["uid"], "controller": True}
        await client.create({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"},
                             "metadata": {"name": "child", "ownerReferences": [ref]}}, namespace=ns)
        await eventually(lambda: ["PartialObjectMetadata"] in kinds and refused, what="the child, read by its owner")
        if apiserver.is_emulator:
            assert apiserver.stats()["open_watches"].get("core/v1/configmaps") == 1
        n = len(kinds)
        await client.patch("v1/ConfigMap", "child", {"metadata": {"labels": {"changed": "yes"}}}, namespace=ns)
        await eventually(lambda: len(kinds) > n, what="the owner reconciled on its child's change")
