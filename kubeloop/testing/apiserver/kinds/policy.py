"""policy/v1 PodDisruptionBudget: 1.24's `ValidatePodDisruptionBudget`, which leaves ObjectMeta to
the generic checks every kind gets."""

from __future__ import annotations

from typing import Any

from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from .base import KindStrategy

_SPEC_GO = "k8s.io/kubernetes/pkg/apis/policy.PodDisruptionBudgetSpec"


class PodDisruptionBudgetStrategy(KindStrategy):
    has_generation = True
    validates_meta = False

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        return {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}

    def spec_of(self, info: ServedResource, obj: Obj) -> Obj:
        return obj.get("spec") or {}

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        """`ValidatePodDisruptionBudgetSpec`."""
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
            causes.append(m.invalid_typed("spec", _SPEC_GO, spec, "minAvailable and maxUnavailable cannot be both set"))
        for key in ("minAvailable", "maxUnavailable"):
            value = spec.get(key)
            if value is not None:
                causes += m.validate_positive_int_or_percent(value, f"spec.{key}")
                causes += m.not_more_than_100_percent(value, f"spec.{key}")
        return causes + m.validate_label_selector(spec.get("selector"), "spec.selector")

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        return self.validate_spec(info, new)

    def validate_status_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        """`ValidatePodDisruptionBudgetStatusUpdate` after the generic ObjectMeta checks."""
        nm, om = new.get("metadata") or {}, old.get("metadata") or {}
        causes = m.validate_object_meta(nm, info.namespaced, m.validate_path_segment_name, kube=False)
        causes += m.validate_object_meta_update(nm, om, kube=False)
        status = new.get("status") or {}
        causes += m.validate_conditions(status.get("conditions"), "status.conditions")
        for key in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
            value = int(status.get(key) or 0)
            if value < 0:
                causes.append(m.invalid_cause(f"status.{key}", value, "must be greater than or equal to 0"))
        m.raise_invalid(info, new, causes)
        self.canonicalize(info, new)
