"""Integration: a Widget controller owning a ConfigMap and a Deployment, on the emulator over HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubeloop.cache import SharedCache
from kubeloop.client import Client, NotFound
from kubeloop.controller import Request

from .helpers import eventually, quiet, running, writes
from .parentchild import FINALIZER, Record, widget_controller


def widget(group: str, name: str, size: int = 1) -> dict[str, Any]:
    return {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"size": size}}


async def get_or_none(client: Client, resource: str, name: str, ns: str) -> dict[str, Any] | None:
    try:
        return await client.get(resource, name, namespace=ns)
    except NotFound:
        return None


async def converged(client: Client, group: str, name: str, ns: str, size: int = 1) -> dict[str, Any]:
    async def check() -> dict[str, Any]:
        w = await get_or_none(client, f"{group}/v1/Widget", name, ns)
        cm = await get_or_none(client, "v1/ConfigMap", f"{name}-config", ns)
        dep = await get_or_none(client, "apps/v1/Deployment", f"{name}-app", ns)
        assert w is not None and cm is not None and dep is not None, (w, cm, dep)
        st = w.get("status") or {}
        assert st.get("observedGeneration") == w["metadata"]["generation"], st
        assert dep["spec"]["replicas"] == size, dep["spec"]
        assert cm["data"] == {"size": str(size)}
        for child in (cm, dep):
            ref = child["metadata"]["ownerReferences"][0]
            assert ref["uid"] == w["metadata"]["uid"] and ref["controller"] is True
        assert FINALIZER in w["metadata"]["finalizers"]
        return w
    return await eventually(check, timeout=10)


async def test_children_status_repair_steady_state_and_finalizer(
        client: Client, cache: SharedCache, ns: str, widget_group: str, apiserver: Any) -> None:
    group = widget_group
    rec = Record()
    ctl = widget_controller(group, rec)
    async with running(ctl, cache):
        await client.create(widget(group, "w1"), namespace=ns)
        w = await converged(client, group, "w1", ns)
        assert w["status"] == {"configMap": "w1-config", "replicas": 1, "observedGeneration": 1}
        req = Request("default", ns, "w1")
        await quiet()
        # own writes do not keep it busy: the status write is not reconciled again, and the rerun
        # the children's creation causes finds nothing to do
        settled = rec.reconciles[req]
        await quiet()
        assert rec.reconciles[req] == settled, rec.reconciles

        # a spec change is reconciled
        await client.patch(f"{group}/v1/Widget", "w1", {"spec": {"size": 3}}, namespace=ns)
        await converged(client, group, "w1", ns, size=3)
        assert rec.reconciles[req] > settled, rec.reconciles

        # a child deleted by hand is recreated
        await client.delete("v1/ConfigMap", "w1-config", namespace=ns)
        async def recreated() -> bool:
            return await get_or_none(client, "v1/ConfigMap", "w1-config", ns) is not None

        await eventually(recreated, timeout=10)

        # steady state: reconciles make no writes at all
        if apiserver.is_emulator:
            await quiet()
            before = writes(apiserver.stats())
            runs = rec.reconciles[req]
            for _ in range(5):
                ctl.enqueue(req)
                await eventually(lambda r=runs: rec.reconciles[req] > r)
                runs = rec.reconciles[req]
            await quiet()
            assert writes(apiserver.stats()) == before

        # deletion runs the cleanup, then the finalizer goes and the object with it
        await client.delete(f"{group}/v1/Widget", "w1", namespace=ns)
        await eventually(lambda: rec.cleanups == ["w1"])

        async def gone() -> bool:
            return await get_or_none(client, f"{group}/v1/Widget", "w1", ns) is None
        await eventually(gone, timeout=10)
    assert rec.conflicts == 0


async def test_failed_cleanup_keeps_the_finalizer_until_it_succeeds(
        client: Client, cache: SharedCache, ns: str, widget_group: str) -> None:
    group = widget_group
    rec = Record(fail_cleanup=2)
    ctl = widget_controller(group, rec)
    async with running(ctl, cache):
        await client.create(widget(group, "w2"), namespace=ns)
        await converged(client, group, "w2", ns)
        await client.delete(f"{group}/v1/Widget", "w2", namespace=ns)

        async def gone() -> bool:
            return await get_or_none(client, f"{group}/v1/Widget", "w2", ns) is None
        await eventually(gone, timeout=10)
        assert rec.cleanups == ["w2"] and rec.fail_cleanup == 0  # two failures, then success


@pytest.mark.parametrize("mode", ["reconciled_object", "all", "off"])
async def test_read_your_writes_fewer_reconciles(
        client: Client, cache: SharedCache, ns: str, widget_group: str, mode: str) -> None:
    """Without predicates on the primary every own write would come back as a reconcile; with read
    your writes the writes to the widget itself do not (with ``suppress_own_writes="all"`` the
    children's do not either), and a status write guarded by the cached resourceVersion never sees
    a stale object (no Conflict). The benchmark reports these figures."""
    group = widget_group
    rec = Record()
    ryw = mode != "off"
    ctl = widget_controller(group, rec, name=f"ryw-{mode.replace('_', '-')}", read_your_writes=ryw,
                            predicates=None, guarded_status=True,
                            suppress_own_writes=mode if ryw else "reconciled_object")
    n = 5
    async with running(ctl, cache):
        for i in range(n):
            await client.create(widget(group, f"r{i}"), namespace=ns)
        for i in range(n):
            await converged(client, group, f"r{i}", ns)
        await quiet(0.5)
    total = sum(rec.reconciles.values())
    if mode == "all":
        assert total == n, rec.reconciles  # exactly one reconcile per widget
        assert rec.conflicts == 0
    elif ryw:
        assert total >= n and rec.conflicts == 0, (rec.reconciles, rec.conflicts)
    else:
        assert total > n  # own writes (finalizer, children, status) came back as reconciles


async def test_manual_enqueue_and_concurrency(client: Client, cache: SharedCache, ns: str, widget_group: str) -> None:
    group = widget_group
    rec = Record()
    ctl = widget_controller(group, rec, max_concurrent_reconciles=4)
    async with running(ctl, cache):
        await asyncio.gather(*(client.create(widget(group, f"c{i}"), namespace=ns) for i in range(8)))
        for i in range(8):
            await converged(client, group, f"c{i}", ns)
        # the 8 widgets' reconciles (each several writes) really ran side by side, at most 4 at once,
        # and never two for one key
        assert 2 <= rec.max_active <= 4, rec.max_active
        assert rec.max_active_per_key == 1
        ctl.enqueue(Request("default", ns, "does-not-exist"))
        await eventually(lambda: rec.reconciles[Request("default", ns, "does-not-exist")] == 1)
