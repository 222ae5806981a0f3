"""apiextensions.k8s.io/v1 CustomResourceDefinition: defaults, validation, status lifecycle.

A new CRD is stored with empty `acceptedNames` (as the real server answers the POST); the
emulator then marks it established (`establish`), the way kube-apiserver's naming and
establishing controllers do a moment later. Deleting a CRD adds the
`customresourcecleanup.apiextensions.k8s.io` finalizer; `finish_deletion` removes it once the
custom resources are gone.
"""

from __future__ import annotations

import copy
from typing import Any

from kubeloop import meta as kv

from ..govalues import TYPED, equal
from ..objectmeta import now_rfc3339
from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from . import structural
from .base import KindStrategy
from .schema import ANY, top_level

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
SCOPES = ("Cluster", "Namespaced")


def storage_version(crd: Obj) -> str:
    for v in (crd.get("spec") or {}).get("versions") or []:
        if isinstance(v, dict) and v.get("storage"):
            return str(v.get("name") or "")
    return ""


def set_condition(status: Obj, ctype: str, cstatus: str, reason: str, message: str) -> None:
    """Set a condition, keeping `lastTransitionTime` when the status did not change."""
    if status.get("conditions") is None:
        status["conditions"] = []
    conds = status["conditions"]
    for c in conds:
        if c.get("type") == ctype:
            if c.get("status") != cstatus:
                c["lastTransitionTime"] = now_rfc3339()
            c.update(status=cstatus, reason=reason, message=message)
            return
    conds.append({"type": ctype, "status": cstatus, "lastTransitionTime": now_rfc3339(), "reason": reason,
                  "message": message})


def is_established(crd: Obj) -> bool:
    for c in (crd.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Established" and c.get("status") == "True":
            return True
    return False


def establish(crd: Obj, conflict: str | None = None) -> Obj:
    """A copy of `crd` with the status the naming + establishing controllers write:
    `acceptedNames` = `spec.names`, NamesAccepted and Established True; with a names `conflict`
    (see `Catalog.names_conflict`) NamesAccepted is False and the CRD is not established."""
    out = copy.deepcopy(crd)
    status = out.setdefault("status", {})
    if conflict:
        status.setdefault("acceptedNames", {"plural": "", "kind": ""})
        set_condition(status, "NamesAccepted", "False", "NameConflict", conflict)
        set_condition(status, "Established", "False", "NotAccepted", "not all names are accepted")
        return out
    names = copy.deepcopy((out.get("spec") or {}).get("names") or {})
    status["acceptedNames"] = names
    set_condition(status, "NamesAccepted", "True", "NoConflicts", "no conflicts found")
    set_condition(status, "Established", "True", "InitialNamesAccepted", "the initial names have been accepted")
    sv = storage_version(out)
    stored = status.setdefault("storedVersions", [])
    if sv and sv not in stored:
        stored.append(sv)
    return out


def finish_deletion(crd: Obj) -> Obj:
    """A copy of a terminating `crd` without the cleanup finalizer (its resources are gone)."""
    out = copy.deepcopy(crd)
    meta = out.setdefault("metadata", {})
    fins = [f for f in meta.get("finalizers") or [] if f != CLEANUP_FINALIZER]
    if fins:
        meta["finalizers"] = fins
    else:
        meta.pop("finalizers", None)
    set_condition(out.setdefault("status", {}), "Terminating", "False", "InstanceDeletionCompleted",
                  "removed all instances")
    return out


def _validate_names(names: Any, fld: str) -> list[Cause]:
    causes: list[Cause] = []
    if not isinstance(names, dict):
        return [m.required_cause(fld)]
    for key in ("plural", "singular"):
        value = names.get(key) or ""
        if value:
            for msg in kv.is_dns1035_label(value):
                causes.append(m.invalid_cause(f"{fld}.{key}", value, msg))
    for key in ("kind", "listKind"):
        value = names.get(key) or ""
        if value:
            if kv.is_dns1035_label(value.lower()):
                causes.append(m.invalid_cause(f"{fld}.{key}", value,
                                              "may have mixed case, but should otherwise match: "
                                              "[a-z]([-a-z0-9]*[a-z0-9])?"))
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        causes.append(m.invalid_cause(f"{fld}.listKind", names.get("listKind"), "kind and listKind cannot be the same"))
    for i, sn in enumerate(names.get("shortNames") or []):
        for msg in kv.is_dns1035_label(sn):
            causes.append(m.invalid_cause(f"{fld}.shortNames[{i}]", sn, msg))
    for i, cat in enumerate(names.get("categories") or []):
        for msg in kv.is_dns1035_label(cat):
            causes.append(m.invalid_cause(f"{fld}.categories[{i}]", cat, msg))
    for key in ("plural", "singular", "kind", "listKind"):
        if not names.get(key):
            causes.append(m.required_cause(f"{fld}.{key}"))
    return causes


def _validate_structural(schema: Any, fld: str, root: bool = True, data_path: str = "") -> list[Cause]:
    """The structural-schema rules clients hit most: a type everywhere (unless
    int-or-string / preserve-unknown-fields), `object` at the root, defaults valid for their schema."""
    causes: list[Cause] = []
    if not isinstance(schema, dict):
        return causes
    if "default" in schema:
        if root:
            causes.append(m.forbidden_cause(f"{fld}.default", "must not be set at the root"))
        else:
            bare = {k: v for k, v in schema.items() if k != "default"}
            for c in structural.validate(copy.deepcopy(schema["default"]), bare, data_path):
                causes.append(dict(c, field=f"{fld}.default"))
    stype = schema.get("type")
    special = schema.get("x-kubernetes-int-or-string") or schema.get("x-kubernetes-preserve-unknown-fields")
    if root:
        if stype != "object":
            if not stype:
                causes.append(m.required_cause(f"{fld}.type", "must not be empty at the root"))
            else:
                causes.append(m.invalid_cause(f"{fld}.type", stype, "must be object at the root"))
    elif not stype and not special:
        causes.append(m.required_cause(f"{fld}.type", "must not be empty for specified object fields"))
    for key, sub in (schema.get("properties") or {}).items():
        causes += _validate_structural(sub, f"{fld}.properties[{key}]", False,
                                       f"{data_path}.{key}" if data_path else str(key))
    items = schema.get("items")
    if isinstance(items, dict):
        causes += _validate_structural(items, f"{fld}.items", False, f"{data_path}[0]")
    elif stype == "array":
        causes.append(m.required_cause(f"{fld}.items", "must be specified"))
    addl = schema.get("additionalProperties")
    if isinstance(addl, dict):
        causes += _validate_structural(addl, f"{fld}.additionalProperties", False, f"{data_path}[key]")
    return causes


class CustomResourceDefinitionStrategy(KindStrategy):
    schema = top_level("CustomResourceDefinition", spec=ANY, status=ANY)
    has_generation = True
    allow_unconditional_update = False

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if not isinstance(spec, dict):
            return
        names = spec.get("names")
        if isinstance(names, dict):
            if not names.get("singular") and names.get("kind"):
                names["singular"] = str(names["kind"]).lower()
            if not names.get("listKind") and names.get("kind"):
                names["listKind"] = str(names["kind"]) + "List"
        conv = spec.get("conversion")
        if not isinstance(conv, dict):
            spec["conversion"] = {"strategy": "None"}
        else:
            conv.setdefault("strategy", "None")
            svc = ((conv.get("webhook") or {}).get("clientConfig") or {}).get("service")
            if isinstance(svc, dict):
                svc.setdefault("port", 443)

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        sv = storage_version(obj)
        return {"conditions": None, "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": [sv] if sv else []}

    def spec_of(self, info: ServedResource, obj: Obj) -> Obj:
        return obj.get("spec") or {}

    def prepare_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        sv = storage_version(new)
        status = new.setdefault("status", {})
        stored = status.setdefault("storedVersions", [])
        if sv and sv not in stored:
            stored.append(sv)

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        name = (obj.get("metadata") or {}).get("name") or ""
        group = spec.get("group") or ""
        names = spec.get("names") or {}
        plural = names.get("plural") or "" if isinstance(names, dict) else ""
        if name != f"{plural}.{group}":
            causes.append(m.invalid_cause("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
        if not group:
            causes.append(m.required_cause("spec.group"))
        else:
            for msg in kv.is_dns1123_subdomain(group):
                causes.append(m.invalid_cause("spec.group", group, msg))
            if "." not in group:
                causes.append(m.invalid_cause("spec.group", group, "should be a domain with at least one dot"))
        scope = spec.get("scope") or ""
        if not scope:
            causes.append(m.required_cause("spec.scope"))
        elif scope not in SCOPES:
            causes.append(m.not_supported_cause("spec.scope", scope, SCOPES))
        causes += _validate_names(names, "spec.names")
        versions = spec.get("versions") or []
        if not versions:
            causes.append(m.invalid_cause("spec.versions", versions, "must have exactly one version marked as storage version"))
        storage = [v for v in versions if isinstance(v, dict) and v.get("storage")]
        if versions and len(storage) != 1:
            causes.append(m.invalid_cause("spec.versions", versions, "must have exactly one version marked as storage version"))
        if versions and not any(isinstance(v, dict) and v.get("served") for v in versions):
            causes.append(m.invalid_cause("spec.versions", versions, "must have at least one version marked as served"))
        seen: set[str] = set()
        for i, v in enumerate(versions):
            fld = f"spec.versions[{i}]"
            if not isinstance(v, dict):
                continue
            causes += m.validate_item_name(v.get("name") or "", f"{fld}.name", seen, kv.is_dns1035_label)
            schema = (v.get("schema") or {}).get("openAPIV3Schema")
            if schema is None:
                causes.append(m.required_cause(f"{fld}.schema.openAPIV3Schema", "schemas are required"))
            else:
                causes += _validate_structural(schema, f"{fld}.schema.openAPIV3Schema")
            scale = (v.get("subresources") or {}).get("scale")
            if isinstance(scale, dict):
                if not scale.get("specReplicasPath"):
                    causes.append(m.required_cause(f"{fld}.subresources.scale.specReplicasPath"))
                if not scale.get("statusReplicasPath"):
                    causes.append(m.required_cause(f"{fld}.subresources.scale.statusReplicasPath"))
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        causes += self.validate_spec(info, new)
        ns, os_ = new.get("spec") or {}, old.get("spec") or {}
        if not equal(ns.get("group"), os_.get("group"), TYPED):
            causes.append(m.invalid_cause("spec.group", ns.get("group") or "", "field is immutable"))
        if not equal(ns.get("scope"), os_.get("scope"), TYPED):
            causes.append(m.invalid_cause("spec.scope", ns.get("scope") or "", "field is immutable"))
        versions = {v.get("name") for v in ns.get("versions") or [] if isinstance(v, dict)}
        for i, sv in enumerate((new.get("status") or {}).get("storedVersions") or []):
            if sv not in versions:
                causes.append(m.invalid_cause(f"status.storedVersions[{i}]", sv, "must appear in spec.versions"))
        return causes

    def prepare_for_status_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        """`/status` writes change status only: labels, annotations and owner references stay."""
        super().prepare_for_status_update(info, new, old)
        nm, om = new["metadata"], old.get("metadata") or {}
        for key in ("labels", "annotations", "ownerReferences"):
            if key in om:
                nm[key] = copy.deepcopy(om[key])
            else:
                nm.pop(key, None)

    def prepare_for_delete(self, info: ServedResource, obj: Obj) -> bool:
        meta = obj.setdefault("metadata", {})
        fins = meta.setdefault("finalizers", [])
        if CLEANUP_FINALIZER not in fins:
            fins.append(CLEANUP_FINALIZER)
        set_condition(obj.setdefault("status", {}), "Terminating", "True", "InstanceDeletionPending",
                      "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon")
        return False
