"""Finalizers: run cleanup before an object goes away, and never lose it on failure.

``finalize(ctx, name, cleanup)`` is meant as the first thing a reconcile does::

    async def reconcile(req, ctx):
        if await finalize(ctx, "example.com/cleanup", cleanup):
            return Result()          # being deleted (cleanup done) or already gone
        ...                          # the real reconcile: the finalizer is in place

- not being deleted, finalizer missing: add it (a merge patch guarded by the resourceVersion, so
  a concurrent writer makes it a `Conflict` and the reconcile is retried), then go on;
- being deleted, finalizer present: ``await cleanup(obj, ctx)`` (the context, for its client,
  logger and caches); only if it returns normally remove
  the finalizer (a JSON patch whose ``test`` checks the entry is still ours); if it raises, the
  finalizer stays and the reconcile is retried with backoff;
- being deleted without our finalizer, or gone: nothing to do.

Cleanup must be idempotent (it may run again after a failed removal) and must tolerate the real
reconcile never having run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from kubeloop.client import NotFound
from kubeloop.meta import metadata_of, name_of, namespace_of

if TYPE_CHECKING:
    from kubeloop.controller._context import Context

Cleanup = Callable[[Mapping[str, Any], "Context"], Awaitable[None]]
"""``async def cleanup(obj, ctx)``: release what ``obj`` holds outside the object (read-only ``obj``)."""


def has_finalizer(obj: Mapping[str, Any], name: str) -> bool:
    """True if ``obj`` lists finalizer ``name``."""
    return name in (metadata_of(obj).get("finalizers") or ())


def is_deleting(obj: Mapping[str, Any]) -> bool:
    """True if ``obj`` has a deletionTimestamp."""
    return bool(metadata_of(obj).get("deletionTimestamp"))


def _ref(obj: Mapping[str, Any]) -> tuple[str, str, str | None]:
    return f"{obj.get('apiVersion')}/{obj.get('kind')}", str(name_of(obj)), namespace_of(obj)


async def add_finalizer(ctx: Context, obj: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """Add finalizer ``name`` to ``obj`` (guarded by its resourceVersion); returns the updated object."""
    meta = metadata_of(obj)
    finalizers = [*list(meta.get("finalizers") or ()), name]
    resource, obj_name, namespace = _ref(obj)
    patch = {"metadata": {"finalizers": finalizers, "resourceVersion": meta.get("resourceVersion")}}
    return await ctx.client.patch(resource, obj_name, patch, namespace=namespace, type="merge")


async def remove_finalizer(ctx: Context, obj: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    """Remove finalizer ``name`` (a JSON patch testing the entry first); None if the object is gone."""
    finalizers = list(metadata_of(obj).get("finalizers") or ())
    if name not in finalizers:
        return obj
    i = finalizers.index(name)
    resource, obj_name, namespace = _ref(obj)
    ops = [{"op": "test", "path": f"/metadata/finalizers/{i}", "value": name},
           {"op": "remove", "path": f"/metadata/finalizers/{i}"}]
    try:
        return await ctx.client.patch(resource, obj_name, ops, namespace=namespace, type="json")
    except NotFound:
        return None


async def finalize(ctx: Context, name: str, cleanup: Cleanup, obj: Mapping[str, Any] | None = None) -> bool:
    """Keep finalizer ``name`` on the primary (or ``obj``) and run ``cleanup`` when it is deleted.

    Returns True when the caller should stop (the object is gone or being deleted), False when
    the object is live and carries the finalizer (go on with the reconcile).
    """
    target = obj if obj is not None else ctx.get()
    if target is None:
        return True
    if is_deleting(target):
        if has_finalizer(target, name):
            ctx.log.info("running cleanup for finalizer %s", name)
            await cleanup(target, ctx)
            await remove_finalizer(ctx, target, name)
            ctx.log.info("cleanup done, finalizer %s removed", name)
        return True
    if not has_finalizer(target, name):
        await add_finalizer(ctx, target, name)
        ctx.log.debug("finalizer %s added", name)
    return False
