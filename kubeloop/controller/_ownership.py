"""Owner references: who controls an object, and how `owns()` maps a child back to its parent."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from kubeloop.meta import namespace_of, owner_references_of


class AlreadyOwnedError(ValueError):
    """The object already has a different controller owner."""


def owner_reference(owner: Mapping[str, Any], *, controller: bool = True,
                    block_owner_deletion: bool = True) -> dict[str, Any]:
    """An `ownerReferences` entry pointing at `owner` (which must carry apiVersion, kind, name, uid)."""
    meta = owner.get("metadata") or {}
    missing = [f for f, v in (("apiVersion", owner.get("apiVersion")), ("kind", owner.get("kind")),
                              ("metadata.name", meta.get("name")), ("metadata.uid", meta.get("uid"))) if not v]
    if missing:
        raise ValueError(f"owner is missing {', '.join(missing)}; read it from the API or the cache first")
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": controller,
        "blockOwnerDeletion": block_owner_deletion,
    }


def set_controller_reference(owner: Mapping[str, Any], obj: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Make `owner` the controller of `obj` (in place; also returned).

    Like controller-runtime's SetControllerReference: an existing reference to the same owner is
    updated, and a different controller owner is an error rather than silently replaced. Owners
    must be cluster-scoped or in the same namespace as the object (the garbage collector ignores
    cross-namespace owners).
    """
    ref = owner_reference(owner)
    owner_ns = namespace_of(owner)
    meta = obj.setdefault("metadata", {})
    if owner_ns and meta.get("namespace") and owner_ns != meta["namespace"]:
        raise ValueError(f"cross-namespace owner references are not allowed: owner in {owner_ns!r}, "
                         f"object in {meta['namespace']!r}")
    refs = [dict(r) for r in meta.get("ownerReferences") or []]
    for r in refs:
        if r.get("controller") and r.get("uid") != ref["uid"]:
            raise AlreadyOwnedError(
                f"object is already controlled by {r.get('kind')} {r.get('name')!r} (uid {r.get('uid')})")
    refs = [r for r in refs if r.get("uid") != ref["uid"]]
    refs.append(ref)
    meta["ownerReferences"] = refs
    return obj


def controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ownerReference marked `controller: true`, if any."""
    for r in owner_references_of(obj):
        if r.get("controller"):
            return r
    return None
