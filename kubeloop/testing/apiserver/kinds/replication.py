"""core/v1 ReplicationController: the ReplicaSet before label selectors, with `/scale` and `/status`.

Its selector is a plain map; when it is empty the defaults copy the template's labels into it (and
into the object's own labels), as `SetDefaults_ReplicationController` does.
"""

from __future__ import annotations

from typing import Any

from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from . import podspec
from .apps import ScalableStrategy
from .base import KindStrategy
from .core import FieldLabelStrategy, count_field
from .schema import ANY, INT32, OMIT_INT32, POD_TEMPLATE_SPEC, STRING, map_of, struct, top_level

RC_SPEC = struct("ReplicationControllerSpec", replicas=INT32, minReadySeconds=OMIT_INT32,
                 selector=map_of(STRING), template=POD_TEMPLATE_SPEC)


class ReplicationControllerStrategy(ScalableStrategy, FieldLabelStrategy):
    schema = top_level("ReplicationController", spec=RC_SPEC, status=ANY)
    kind_word = "replicationcontroller"
    selectable_fields = {"status.replicas": count_field("status.replicas")}

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        template = spec.get("template")
        labels = ((template or {}).get("metadata") or {}).get("labels") or {}
        if labels:
            if not spec.get("selector"):
                spec["selector"] = dict(labels)
            meta = obj.setdefault("metadata", {})
            if not meta.get("labels"):
                meta["labels"] = dict(labels)
        spec.setdefault("replicas", 1)
        if template is not None:
            podspec.default_pod_template(template)

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        return {"replicas": 0}

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        for key in ("replicas", "minReadySeconds"):
            value = spec.get(key)
            if isinstance(value, int) and value < 0:
                causes.append(m.invalid_cause(f"spec.{key}", value, "must be greater than or equal to 0"))
        selector = spec.get("selector") or {}
        if not selector:
            causes.append(m.required_cause("spec.selector"))
        causes += m.validate_labels(selector, "spec.selector")
        template = spec.get("template")
        if template is None:
            causes.append(m.required_cause("spec.template"))
            return causes
        labels = (template.get("metadata") or {}).get("labels") or {}
        if selector and any(labels.get(k) != v for k, v in selector.items()):
            causes.append(m.invalid_cause("spec.template.metadata.labels", labels,
                                          "`selector` does not match template `labels`"))
        causes += m.validate_labels(labels, "spec.template.metadata.labels")
        causes += podspec.validate_pod_spec(template.get("spec"), "spec.template.spec", ("Always",))
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        # a ReplicationController's selector may change (ValidateReplicationControllerUpdate)
        return m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {}) + \
            self.validate_spec(info, new)

    def get_scale(self, info: ServedResource, obj: Obj) -> Obj:
        scale = super().get_scale(info, obj)
        selector = (obj.get("spec") or {}).get("selector") or {}
        if selector:
            scale["status"]["selector"] = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
        else:
            scale["status"].pop("selector", None)
        return scale


class ControllerRevisionStrategy(KindStrategy):
    """apps/v1 ControllerRevision: `data` and `revision`, immutable once written (but `revision`)."""

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        causes: list[Cause] = []
        if obj.get("data") is None:
            causes.append(m.required_cause("data", "data is mandatory"))
        revision = obj.get("revision") or 0
        if isinstance(revision, int) and revision < 0:
            causes.append(m.invalid_cause("revision", revision, "must be greater than or equal to 0"))
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        causes += self.validate_spec(info, new)
        if new.get("data") != old.get("data"):
            causes.append(m.invalid_cause_raw("data", "runtime.RawExtension{...}", "field is immutable"))
        return causes
