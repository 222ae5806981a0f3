"""Object references built from objects: `ObjectReference` (events, `spec.*Ref` fields) and
`OwnerReference` (garbage collection, `owns()`).

Builders read the object's own identity (apiVersion, kind, name, uid), so a reference is never
made up from a name alone: an owner reference without the owner's uid is ignored by the garbage
collector, which is a silent trap. Imports nothing of kubeloop, so any layer may use it.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

__all__ = [
    "AlreadyOwnedError", "IncompleteObjectError", "InvalidOwnerError", "controller_of", "is_owned_by", "object_reference",
    "owner_reference", "set_controller_reference", "set_owner_reference",
]


class IncompleteObjectError(ValueError):
    """The object lacks a field a reference needs (usually: it was built locally, not read from the API)."""


class AlreadyOwnedError(ValueError):
    """The object already has a different controller owner."""


class InvalidOwnerError(ValueError):
    """The owner cannot own the object (it is in another namespace)."""


def _identity(obj: Mapping[str, Any], needed: tuple[str, ...], what: str) -> dict[str, Any]:
    if not isinstance(obj, Mapping):
        raise IncompleteObjectError(f"{what} must be a Kubernetes object (a mapping), got {type(obj).__name__}")
    meta = obj.get("metadata") or {}
    values = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "name": meta.get("name"),
              "namespace": meta.get("namespace"), "uid": meta.get("uid"),
              "resourceVersion": meta.get("resourceVersion")}
    missing = [f if f in ("apiVersion", "kind") else f"metadata.{f}" for f in needed if not values[f]]
    if missing:
        raise IncompleteObjectError(
            f"{what} is missing {', '.join(missing)}; use the object as read from the API server or the cache")
    return values


def object_reference(obj: Mapping[str, Any], *, field_path: str | None = None,
                     resource_version: bool = True) -> dict[str, Any]:
    """A `corev1.ObjectReference` to `obj` (as client-go's `reference.GetReference` builds it).

    `field_path` points into the object (e.g. `spec.containers{app}`); `resource_version=False`
    leaves the resourceVersion out (for references that should not pin one version).
    """
    ident = _identity(obj, ("apiVersion", "kind", "name"), "object")
    ref = {k: ident[k] for k in ("apiVersion", "kind", "name")}
    for k in ("namespace", "uid") + (("resourceVersion",) if resource_version else ()):
        if ident[k]:
            ref[k] = ident[k]
    if field_path:
        ref["fieldPath"] = field_path
    return ref


def owner_reference(owner: Mapping[str, Any], *, controller: bool = True,
                    block_owner_deletion: bool = True) -> dict[str, Any]:
    """A `metav1.OwnerReference` entry pointing at `owner` (which must carry apiVersion, kind, name, uid)."""
    ident = _identity(owner, ("apiVersion", "kind", "name", "uid"), "owner")
    return {"apiVersion": ident["apiVersion"], "kind": ident["kind"], "name": ident["name"],
            "uid": ident["uid"], "controller": controller, "blockOwnerDeletion": block_owner_deletion}


def _check_namespaces(owner: Mapping[str, Any], obj: Mapping[str, Any]) -> None:
    owner_ns = (owner.get("metadata") or {}).get("namespace")
    obj_ns = (obj.get("metadata") or {}).get("namespace")
    if owner_ns and obj_ns and owner_ns != obj_ns:
        raise InvalidOwnerError(f"cross-namespace owner references are not allowed: owner in {owner_ns!r}, "
                         f"object in {obj_ns!r} (the garbage collector would ignore it)")


def _same_owner(ref: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    # controller-runtime matches owners by group, kind and name (the version may change)
    def group(api_version: Any) -> str:
        return str(api_version).rpartition("/")[0] if "/" in str(api_version) else ""
    return (group(ref.get("apiVersion")) == group(new["apiVersion"]) and ref.get("kind") == new["kind"]
            and ref.get("name") == new["name"])


def _upsert(obj: MutableMapping[str, Any], ref: dict[str, Any]) -> None:
    meta = obj.get("metadata")
    if meta is None:
        meta = obj["metadata"] = {}
    refs = [dict(r) for r in meta.get("ownerReferences") or ()]
    for i, r in enumerate(refs):
        if _same_owner(r, ref):
            refs[i] = ref
            break
    else:
        refs.append(ref)
    meta["ownerReferences"] = refs


def set_owner_reference(owner: Mapping[str, Any], obj: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Add (or update) a non-controller owner reference to `owner` on `obj`, in place; `obj` is returned."""
    _check_namespaces(owner, obj)
    _upsert(obj, owner_reference(owner, controller=False, block_owner_deletion=False))
    return obj


def set_controller_reference(owner: Mapping[str, Any], obj: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Make `owner` the controller of `obj` (in place; also returned), like controller-runtime's
    `SetControllerReference`: a reference to the same owner is updated, and a different controller
    is an error (`AlreadyOwnedError`), never silently replaced. Owners must be cluster-scoped or in
    the object's namespace."""
    _check_namespaces(owner, obj)
    ref = owner_reference(owner)
    for r in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if r.get("controller") and not _same_owner(r, ref):
            raise AlreadyOwnedError(f"object is already controlled by {r.get('kind')} {r.get('name')!r} "
                                    f"(uid {r.get('uid')}); it cannot also be controlled by "
                                    f"{ref['kind']} {ref['name']!r}")
    _upsert(obj, ref)
    return obj


def controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The owner reference marked `controller: true`, if any."""
    for r in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if r.get("controller"):
            return r
    return None


def is_owned_by(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    """Whether `obj` has an owner reference to `owner` (matched by uid when both have one)."""
    uid = (owner.get("metadata") or {}).get("uid")
    for r in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if uid and r.get("uid"):
            if r.get("uid") == uid:
                return True
        elif _same_owner(r, {"apiVersion": owner.get("apiVersion"), "kind": owner.get("kind"),
                             "name": (owner.get("metadata") or {}).get("name")}):
            return True
    return False
