"""The parent/child controller the integration tests (and the benchmark) run: a Widget owning a
ConfigMap and a Deployment, both written with server-side apply, a finalizer and a status."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubeloop.client import Conflict
from kubeloop.controller import Context, Controller, Request, Result, deleting, finalize, generation_changed

FINALIZER = "example.com/cleanup"


@dataclass
class Record:
    reconciles: Counter[Request] = field(default_factory=Counter)
    cleanups: list[str] = field(default_factory=list)
    conflicts: int = 0
    fail_cleanup: int = 0
    active: Counter[Request] = field(default_factory=Counter)  # reconciles running now, per key
    max_active: int = 0  # the most reconciles that ever ran at once (any keys)
    max_active_per_key: int = 0  # must stay 1: one key is never reconciled concurrently


def children(w: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    meta = w["metadata"]
    name, ns = meta["name"], meta["namespace"]
    size = int((w.get("spec") or {}).get("size", 1))
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-config", "namespace": ns},
          "data": {"size": str(size)}}
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"{name}-app", "namespace": ns},
           "spec": {"replicas": size, "selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}},
                                 "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}}
    return cm, dep


def widget_controller(group: str, record: Record, *, name: str = "widgets", read_your_writes: bool = True,
                      predicates: Any = (generation_changed | deleting,), guarded_status: bool = False,
                      **kwargs: Any) -> Controller:
    """``guarded_status``: write the status as a read-modify-write guarded by the cached object's
    resourceVersion (the common optimistic-concurrency pattern) instead of server-side apply."""

    async def cleanup(w: Mapping[str, Any], ctx: Context) -> None:
        assert ctx.request.name == w["metadata"]["name"]  # cleanup gets the reconcile's context
        if record.fail_cleanup > 0:
            record.fail_cleanup -= 1
            raise RuntimeError("cleanup failed (injected)")
        record.cleanups.append(w["metadata"]["name"])

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        record.reconciles[req] += 1
        record.active[req] += 1
        record.max_active = max(record.max_active, record.active.total())
        record.max_active_per_key = max(record.max_active_per_key, record.active[req])
        try:
            if await finalize(ctx, FINALIZER, cleanup):
                return None
            w = ctx.get()
            assert w is not None
            cm, dep = children(w)
            await ctx.apply(cm, owner=w)
            await ctx.apply(dep, owner=w)
            status = {"configMap": cm["metadata"]["name"], "replicas": dep["spec"]["replicas"],
                      "observedGeneration": w["metadata"].get("generation")}
            if guarded_status:
                await ctx.patch_status(status, resource_version=w["metadata"]["resourceVersion"])
            else:
                await ctx.apply_status(status)
        except Conflict:
            record.conflicts += 1
            raise
        finally:
            record.active[req] -= 1
        return None

    return (Controller(name, for_=f"{group}/v1/Widget", reconcile=reconcile, predicates=predicates,
                       read_your_writes=read_your_writes, **kwargs)
            .owns("v1/ConfigMap")
            # kube-controller-manager writes the Deployment's status and revision annotation; like
            # controller-runtime operators, react only to spec changes (and creation, deletion)
            .owns("apps/v1/Deployment", predicates=generation_changed))
