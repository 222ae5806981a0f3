"""Status writes through the status subresource, conflict-free and skipped when nothing changes.

- ``apply_status``: server-side apply of the status fields this controller owns (``force``: the
  controller is the authority on its status). No resourceVersion is sent, so there is no Conflict
  to retry; fields it stops setting are released, as with any apply.
- ``patch_status``: a JSON merge patch of ``status`` (``None`` deletes a field). Without
  ``resource_version`` it is last-writer-wins per field, so it cannot conflict; with it the write
  is guarded (a `Conflict` if the object changed meanwhile).

Both skip the call when the cached object (with the controller's own writes overlaid) already
has the desired status. Status writes do not bump ``metadata.generation``, so a primary watched
with ``generation_changed`` is not re-reconciled by them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubeloop.controller.apply import apply_object, contains

if TYPE_CHECKING:
    from kubeloop.controller.context import Context


def _target(ctx: Context, obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    target = obj if obj is not None else ctx.get()
    if target is None:
        raise LookupError(f"{ctx.request}: the object is not in the cache (deleted?); no status to write")
    return target


async def apply_status(ctx: Context, status: Mapping[str, Any], *, obj: Mapping[str, Any] | None = None,
                       force: bool = True) -> Mapping[str, Any]:
    """Server-side apply ``status`` to the status subresource of ``obj`` (default: the primary)."""
    target = _target(ctx, obj)
    meta = target.get("metadata") or {}
    body: dict[str, Any] = {
        "apiVersion": target.get("apiVersion"),
        "kind": target.get("kind"),
        "metadata": {"name": meta.get("name")},
        "status": dict(status),
    }
    if meta.get("namespace"):
        body["metadata"]["namespace"] = meta["namespace"]
    return await apply_object(ctx, body, force=force, subresource="status")


async def patch_status(ctx: Context, patch: Mapping[str, Any], *, obj: Mapping[str, Any] | None = None,
                       resource_version: str | None = None) -> Mapping[str, Any]:
    """Merge-patch ``status`` of ``obj`` (default: the primary); skipped if the cache already matches."""
    target = _target(ctx, obj)
    meta = target.get("metadata") or {}
    name, namespace = str(meta.get("name")), meta.get("namespace") or None
    ref = f"{target.get('apiVersion')}/{target.get('kind')}"
    live = ctx.reader(ctx._controller.for_resource).get(name, namespace or "") if obj is None else target
    if live is not None and contains(live.get("status") or {}, patch):
        ctx._controller.metrics.apply_skipped += 1
        return live
    body: dict[str, Any] = {"status": dict(patch)}
    if resource_version:
        body["metadata"] = {"resourceVersion": resource_version}
    return await ctx.client.patch_status(ref, name, body, namespace=namespace, type="merge",
                                         field_manager=ctx.field_manager)
