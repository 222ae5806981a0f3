"""The strategy of resources served from a CustomResourceDefinition.

Per served version: pruning + defaulting from the version's structural schema, schema
validation, `status`/`scale` subresources as declared, generation bumped by any change outside
`metadata` (and outside `status` when it is a subresource), kind/apiVersion checked by validation
(422, as the real server does for custom resources).
"""

from __future__ import annotations

import copy
from typing import Any

from kubeloop.meta import go_json_numbers

from ..errors import bad_request, internal_error, invalid
from ..govalues import GO, equal, json_kind, sprint_v
from ..resources import ServedResource, Strategy
from ..shapes import Cause, Obj, copy_json
from . import meta as m
from . import structural
from .apps import decode_scale
from .schema import OBJECT_META, DecodeError, decode_struct


def _get_path(obj: Obj, json_path: str) -> Any:
    cur: Any = obj
    for part in [p for p in json_path.split(".") if p]:
        cur = cur.get(part) if isinstance(cur, dict) else None
    return cur


# The Go type `unstructured` holds for a JSON value (as accessor errors name it).
_UNSTRUCTURED_TYPES = {"bool": "bool", "int": "int64", "float": "float64", "string": "string",
                       "array": "[]interface {}", "null": "map[string]interface {}",
                       "object": "map[string]interface {}"}


def _normalize(obj: Obj) -> None:
    """The object as it is stored: what Go's encoder and decoder make of its numbers (an integral
    float64 is written `1` and read back an int64), after the strategy compared it with the old one."""
    for k, v in obj.items():
        if k != "metadata":
            obj[k] = go_json_numbers(v)


def _set_path(obj: Obj, json_path: str, value: Any) -> None:
    parts = [p for p in json_path.split(".") if p]
    cur = obj
    for part in parts[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[part] = nxt
        cur = nxt
    if parts:
        cur[parts[-1]] = value


class CustomResourceStrategy(Strategy):
    """One served version of a CRD."""

    has_generation = True
    allow_unconditional_update = False
    scale_has_field_manager = False

    def __init__(self, group: str, version: str, kind: str, schema: Obj | None,
                 scale: Obj | None = None, storage_version: str = "", webhook_conversion: bool = False) -> None:
        self.group = group
        #: `conversion: Webhook`: only the registry's asynchronous paths convert (through the webhook)
        self.webhook_conversion = webhook_conversion
        self.version = version
        self.kind = kind
        self.schema = schema
        self.scale = scale  # {specReplicasPath, statusReplicasPath, labelSelectorPath}
        self.storage_version = storage_version or version
        self._list_types: Any = None
        self._apply_type: Any = None
        self._defaults: bool | None = None

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    # -- decoding -------------------------------------------------------------------------------
    def decode(self, info: ServedResource, obj: Obj) -> None:
        meta = obj.get("metadata")
        if meta is None:
            obj["metadata"] = meta = {}
        if not isinstance(meta, dict):
            raise bad_request(f"unable to decode metadata: expected an object, got {type(meta).__name__}")
        try:
            decode_struct(OBJECT_META, meta, "metadata")
        except DecodeError as e:
            raise bad_request(str(e)) from None
        obj.setdefault("apiVersion", info.api_version)
        obj.setdefault("kind", info.kind)
        if self.schema is not None:
            structural.prune(obj, self.schema, root=True)
            structural.apply_defaults(obj, self.schema)

    # -- create / update ------------------------------------------------------------------------
    def prepare_for_create(self, info: ServedResource, obj: Obj) -> None:
        meta = obj["metadata"]  # deletionTimestamp & co. are already cleared by the registry (BeforeCreate)
        if info.has_status:
            obj.pop("status", None)
        meta["generation"] = 1
        _normalize(obj)

    def _type_meta_causes(self, obj: Obj) -> list[Cause]:
        causes: list[Cause] = []
        if obj.get("kind") != self.kind:
            causes.append(m.invalid_cause("kind", obj.get("kind") or "", f"must be {self.kind}"))
        if obj.get("apiVersion") != self.api_version:
            causes.append(m.invalid_cause("apiVersion", obj.get("apiVersion") or "", f"must be {self.api_version}"))
        return causes

    def _raise(self, obj: Obj, causes: list[Cause]) -> None:
        if causes:
            name = (obj.get("metadata") or {}).get("name") or None
            raise invalid(str(obj.get("kind") or self.kind), name, causes, self.group)

    def _content_causes(self, info: ServedResource, obj: Obj) -> list[Cause]:
        causes = structural.validate_root(obj, self.schema)
        causes += self._scale_causes(obj)
        return causes

    def _scale_causes(self, obj: Obj) -> list[Cause]:
        """`ValidateScaleSpec` / `ValidateScaleStatus`: the field is the CRD's JSON path as written
        (`.spec.replicas`, with its dot), and a value of the wrong type is an accessor error."""
        if not self.scale:
            return []
        causes: list[Cause] = []
        for key in ("specReplicasPath", "statusReplicasPath"):
            path = self.scale.get(key) or ""
            value = _get_path(obj, path) if path else None
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                causes.append(m.invalid_cause_raw(path, "0", f"{path} accessor error: {sprint_v(value)} is of the "
                                                  f"type {_UNSTRUCTURED_TYPES[json_kind(value)]}, expected int64"))
            elif value < 0:
                causes.append(m.invalid_cause(path, value, "should be a non-negative integer"))
            elif value > 2**31 - 1:
                causes.append(m.invalid_cause(path, value, f"should be less than or equal to {2**31 - 1}"))
        sel_path = self.scale.get("labelSelectorPath") or ""
        sel = _get_path(obj, sel_path) if sel_path else None
        if sel is not None and not isinstance(sel, str):
            causes.append(m.invalid_cause_raw(sel_path, '""', f"{sel_path} accessor error: {sprint_v(sel)} is of "
                                              f"the type {_UNSTRUCTURED_TYPES[json_kind(sel)]}, expected string"))
        return causes

    def validate_create(self, info: ServedResource, obj: Obj) -> None:
        type_causes = self._type_meta_causes(obj)
        self._raise(obj, type_causes)
        causes = m.validate_object_meta(obj.get("metadata") or {}, info.namespaced, kube=False)
        causes += self._content_causes(info, obj)
        self._raise(obj, causes)

    def prepare_for_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        m.carry_system_fields(new, old)
        m.keep_status(info, new, old)
        a = {k: v for k, v in new.items() if k != "metadata"}
        b = {k: v for k, v in old.items() if k != "metadata"}
        # Semantic.DeepEqual on unstructured content: the int64 1 read back from storage and the
        # float64 1.0 a client sent differ, and so do true and 1 (govalues.GO)
        if not equal(a, b, GO):
            new["metadata"]["generation"] = int((old.get("metadata") or {}).get("generation") or 0) + 1
        _normalize(new)

    def validate_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        self._raise(new, self._type_meta_causes(new))
        nm, om = new.get("metadata") or {}, old.get("metadata") or {}
        causes = 2 * m.validate_object_meta_update(nm, om, kube=False)
        causes += self._content_causes(info, new)
        self._raise(new, causes)

    def prepare_for_status_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        """Only `status` changes: everything else (metadata included) is taken from `old`, except
        `managedFields` and the client's `resourceVersion`."""
        status_present = "status" in new
        status = new.get("status")
        new_meta = new.get("metadata") or {}
        managed = new_meta.get("managedFields")
        rv = new_meta.get("resourceVersion")
        new.clear()
        new.update(copy_json(old))
        if status_present:
            new["status"] = status
        else:
            new.pop("status", None)
        meta = new.setdefault("metadata", {})
        if managed is not None:
            meta["managedFields"] = managed
        else:
            meta.pop("managedFields", None)
        if rv:
            meta["resourceVersion"] = rv
        _normalize(new)

    def validate_status_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        nm, om = new.get("metadata") or {}, old.get("metadata") or {}
        causes = m.validate_object_meta_update(nm, om, kube=False)
        causes += self._content_causes(info, new)
        self._raise(new, causes)

    # -- versions -------------------------------------------------------------------------------
    def to_storage(self, info: ServedResource, obj: Obj) -> Obj:
        storage_api = f"{self.group}/{self.storage_version}"
        if obj.get("apiVersion") == storage_api:
            return obj
        self._no_webhook(obj, storage_api)
        out = dict(obj)
        out["apiVersion"] = storage_api
        return out

    def from_storage(self, info: ServedResource, stored: Obj) -> Obj:
        """Conversion `None`: only apiVersion changes; the served version's schema defaults are
        applied to what another version stored."""
        if stored.get("apiVersion") == info.api_version:
            return stored
        self._no_webhook(stored, info.api_version)
        if self.schema is not None and self._has_defaults():
            out = copy.deepcopy(stored)
            structural.apply_defaults(out, self.schema)
        else:
            out = dict(stored)
        out["apiVersion"] = info.api_version
        return out

    def _no_webhook(self, obj: Obj, api_version: str) -> None:
        """A CRD converting through a webhook is never converted by rewriting apiVersion."""
        if self.webhook_conversion:
            raise internal_error(f"{obj.get('apiVersion')} {self.kind} needs its conversion webhook to be served "
                                 f"as {api_version}, and this path converts without calling it")

    def _has_defaults(self) -> bool:
        if self._defaults is None:
            self._defaults = '"default"' in repr(self.schema).replace("'", '"')
        return self._defaults

    # -- scale ----------------------------------------------------------------------------------
    def get_scale(self, info: ServedResource, obj: Obj) -> Obj:
        if not self.scale:
            return super().get_scale(info, obj)
        meta = obj.get("metadata") or {}
        smeta = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                 if k in meta}
        spec_replicas = _get_path(obj, self.scale.get("specReplicasPath") or "")
        status_replicas = _get_path(obj, self.scale.get("statusReplicasPath") or "")
        status: Obj = {"replicas": int(status_replicas) if isinstance(status_replicas, int) else 0}
        sel_path = self.scale.get("labelSelectorPath")
        if sel_path:
            sel = _get_path(obj, sel_path)
            if isinstance(sel, str) and sel:
                status["selector"] = sel
        spec: Obj = {"replicas": spec_replicas} if isinstance(spec_replicas, int) and spec_replicas else {}
        return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": smeta, "spec": spec, "status": status}

    def apply_scale(self, info: ServedResource, obj: Obj, scale: Obj) -> None:
        if not self.scale:
            super().apply_scale(info, obj, scale)
            return
        decode_scale(scale)  # no ValidateScale: the custom resource's own validation judges the result
        replicas = int((scale.get("spec") or {}).get("replicas") or 0)
        _set_path(obj, self.scale.get("specReplicasPath") or ".spec.replicas", replicas)

    def scale_replicas_field(self, info: ServedResource) -> tuple[str, ...]:
        if not self.scale:
            return super().scale_replicas_field(info)
        return tuple((self.scale.get("specReplicasPath") or ".spec.replicas").lstrip(".").split("."))

    # -- server-side apply ----------------------------------------------------------------------
    def zero_object(self, info: ServedResource) -> Obj | None:
        return None  # unstructured: an empty object

    def apply_type(self, info: ServedResource) -> Any:
        """The version's structured-merge-diff type (`smd.custom_type`), built once."""
        if self._apply_type is None:
            from ..smd import custom_type

            self._apply_type = custom_type(self.schema)
        return self._apply_type

    def list_types(self, info: ServedResource) -> Any:
        """The schema's list types by field path (what `listtypes.list_types_for` asks)."""
        if self._list_types is None:
            from ..smd import list_types

            self._list_types = list_types(self.apply_type(info))
        return self._list_types
