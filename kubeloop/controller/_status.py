"""Status writes through the status subresource, conflict-free and skipped when nothing changes.

- ``ctx.apply_status``: server-side apply of the status fields this controller owns (``force``:
  the controller is the authority on its status). No resourceVersion is sent, so there is no
  Conflict to retry; fields it stops setting are released, as with any apply: what it applies is
  the whole status it owns, not a change. A status written from separate places is applied in
  ``part``s, each by a field manager of its own (`status_field_manager`), so one part never
  releases another's fields (one manager per part: server-side apply's own way to let several
  writers share an object, rather than a merge of the cached status, which would take over fields
  the controller does not mean to own and could put back stale values).
- ``ctx.patch_status``: a JSON merge patch of ``status`` (``None`` deletes a field). Without
  ``resource_version`` it is last-writer-wins per field, so it cannot conflict; with it the write
  is guarded (a `Conflict` if the object changed meanwhile).

Both skip the call when the cached object (with the controller's own writes overlaid) already
has the desired status. Status writes do not bump ``metadata.generation``, so a primary watched
with ``generation_changed`` is not re-reconciled by them. This module builds the request bodies
(pure); `Context` sends them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.controller._apply import contains


def status_apply_body(target: Mapping[str, Any], status: Mapping[str, Any]) -> dict[str, Any]:
    """The apply configuration that sets ``status`` on ``target``'s status subresource."""
    meta = target.get("metadata") or {}
    body: dict[str, Any] = {
        "apiVersion": target.get("apiVersion"),
        "kind": target.get("kind"),
        "metadata": {"name": meta.get("name")},
        "status": dict(status),
    }
    if meta.get("namespace"):
        body["metadata"]["namespace"] = meta["namespace"]
    return body


_MAX_FIELD_MANAGER = 128  # kube-apiserver refuses a longer fieldManager


def status_field_manager(field_manager: str, part: str) -> str:
    """The field manager that applies ``part`` of the status: ``<field_manager>/<part>``. ValueError
    for a part that is not a short name (it is shown in managedFields)."""
    if not isinstance(part, str) or not part or "/" in part or not part.isprintable() or part != part.strip():
        raise ValueError(f"apply_status part must be a short name without '/' or spaces around it, not {part!r}")
    manager = f"{field_manager}/{part}"
    if len(manager) > _MAX_FIELD_MANAGER:
        raise ValueError(f"apply_status part {part!r}: the field manager {manager!r} is longer than "
                         f"{_MAX_FIELD_MANAGER} characters (the API server's limit)")
    return manager


def status_patch_body(patch: Mapping[str, Any], resource_version: str | None) -> dict[str, Any]:
    """The merge patch of ``status`` (guarded by ``resource_version`` when given)."""
    body: dict[str, Any] = {"status": dict(patch)}
    if resource_version:
        body["metadata"] = {"resourceVersion": resource_version}
    return body


def status_contains(live: Mapping[str, Any] | None, patch: Mapping[str, Any]) -> bool:
    """True if ``live``'s status already has every field of ``patch`` (the patch would change nothing)."""
    return live is not None and contains(live.get("status") or {}, patch)
