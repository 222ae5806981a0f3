"""autoscaling/v2 HorizontalPodAutoscaler: its defaults (`SetDefaults_HorizontalPodAutoscaler`)
and 1.24's `ValidateHorizontalPodAutoscaler` (feature gates as 1.24 ships them: `HPAScaleToZero`
off, `HPAContainerMetrics` off)."""

from __future__ import annotations

import copy
from typing import Any

from kubeloop.meta import is_dns1123_label

from .. import quantity
from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from .base import KindStrategy

SCALE_UP_RULES: Obj = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                       "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                    {"type": "Percent", "value": 100, "periodSeconds": 15}]}
SCALE_DOWN_RULES: Obj = {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
DEFAULT_METRICS = [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                               "averageUtilization": 80}}}]
METRIC_SOURCES = ("ContainerResource", "External", "Object", "Pods", "Resource")
#: the metric source field each type populates, in the order `validateMetricSpec` checks them
SOURCE_FIELDS = {"Object": "object", "External": "external", "Pods": "pods", "Resource": "resource",
                 "ContainerResource": "containerResource"}
SELECT_POLICIES = ("Disabled", "Max", "Min")
POLICY_TYPES = ("Percent", "Pods")
MAX_PERIOD_SECONDS = 1800
MAX_STABILIZATION_WINDOW_SECONDS = 3600
_SELECT_POLICY_GO = "*k8s.io/kubernetes/pkg/apis/autoscaling.ScalingPolicySelect"
_QUANTITY_GO = "*k8s.io/apimachinery/pkg/api/resource.Quantity"


class HorizontalPodAutoscalerStrategy(KindStrategy):
    """No generation; `status` starts as the zero internal status."""

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("minReplicas") is None:
            spec["minReplicas"] = 1
        if not spec.get("metrics"):
            spec["metrics"] = copy.deepcopy(DEFAULT_METRICS)
        behavior = spec.get("behavior")
        if isinstance(behavior, dict):
            for key, rules in (("scaleUp", SCALE_UP_RULES), ("scaleDown", SCALE_DOWN_RULES)):
                given: Obj = behavior[key] if isinstance(behavior.get(key), dict) else {}
                behavior[key] = {**copy.deepcopy(rules), **{k: v for k, v in given.items() if v is not None}}

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        return {"desiredReplicas": 0, "currentMetrics": None}

    def prepare_create(self, info: ServedResource, obj: Obj) -> None:
        _drop_container_metrics(obj)

    def prepare_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        if not any(isinstance(x, dict) and x.get("containerResource") is not None
                   for x in (old.get("spec") or {}).get("metrics") or []):
            _drop_container_metrics(new)

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        return _validate_spec(obj.get("spec") or {}, 1)

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        lower = 0 if (old.get("spec") or {}).get("minReplicas") == 0 else 1
        return causes + _validate_spec(new.get("spec") or {}, lower)

    def validate_status(self, info: ServedResource, obj: Obj) -> list[Cause]:
        status = obj.get("status") or {}
        causes: list[Cause] = []
        for key in ("currentReplicas", "desiredReplicas"):
            value = int(status.get(key) or 0)
            if value < 0:
                causes.append(m.invalid_cause(f"status.{key}", value, "must be greater than or equal to 0"))
        return causes


def _drop_container_metrics(obj: Obj) -> None:
    for metric in (obj.get("spec") or {}).get("metrics") or []:
        if isinstance(metric, dict):
            metric.pop("containerResource", None)


def _validate_spec(spec: Obj, lower: int) -> list[Cause]:
    """`validateHorizontalPodAutoscalerSpec`."""
    causes: list[Cause] = []
    min_replicas, max_replicas = spec.get("minReplicas"), int(spec.get("maxReplicas") or 0)
    if min_replicas is not None and min_replicas < lower:
        causes.append(m.invalid_cause("spec.minReplicas", min_replicas, f"must be greater than or equal to {lower}"))
    if max_replicas < 1:
        causes.append(m.invalid_cause("spec.maxReplicas", max_replicas, "must be greater than 0"))
    if min_replicas is not None and max_replicas < min_replicas:
        causes.append(m.invalid_cause("spec.maxReplicas", max_replicas, "must be greater than or equal to `minReplicas`"))
    causes += validate_object_reference(spec.get("scaleTargetRef") or {}, "spec.scaleTargetRef")
    causes += _validate_metrics(spec.get("metrics") or [], min_replicas)
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        for key in ("scaleUp", "scaleDown"):
            causes += _validate_scaling_rules(behavior.get(key), f"spec.behavior.{key}")
    return causes


def validate_object_reference(ref: Obj, fld: str) -> list[Cause]:
    """`ValidateCrossVersionObjectReference`."""
    causes: list[Cause] = []
    for key in ("kind", "name"):
        value = ref.get(key) or ""
        if not value:
            causes.append(m.required_cause(f"{fld}.{key}"))
        else:
            causes += [m.invalid_cause(f"{fld}.{key}", value, msg) for msg in m.validate_path_segment_name(value, False)]
    return causes


def _validate_metrics(metrics: list[Any], min_replicas: Any) -> list[Cause]:
    causes: list[Cause] = []
    types = set()
    for i, metric in enumerate(metrics):
        metric = metric if isinstance(metric, dict) else {}
        causes += _validate_metric_spec(metric, f"spec.metrics[{i}]")
        types.add(metric.get("type"))
    if min_replicas == 0 and not types & {"Object", "External"}:
        causes.append(m.forbidden_cause("spec.metrics", "must specify at least one Object or External metric to "
                                        "support scaling to zero replicas"))
    return causes


def _validate_metric_spec(spec: Obj, fld: str) -> list[Cause]:
    """`validateMetricSpec`."""
    causes: list[Cause] = []
    mtype = spec.get("type") or ""
    if not mtype:
        causes.append(m.required_cause(f"{fld}.type", "must specify a metric source type"))
    if mtype not in METRIC_SOURCES:
        causes.append(m.not_supported_cause(f"{fld}.type", mtype, METRIC_SOURCES))
    present: list[str] = []
    for field in SOURCE_FIELDS.values():
        source = spec.get(field)
        if source is None:
            continue
        present.append(field)
        if len(present) == 1:
            causes += _SOURCE_VALIDATORS[field](source if isinstance(source, dict) else {}, f"{fld}.{field}")
    expected = SOURCE_FIELDS.get(mtype, "")
    if expected:
        if spec.get(expected) is None:
            detail = "must populate information for the given metric source"
            if expected == "containerResource":
                detail += " (only allowed when HPAContainerMetrics feature is enabled)"
            causes.append(m.required_cause(f"{fld}.{expected}", detail))
    else:
        causes.append(m.not_supported_cause(f"{fld}.type", mtype, METRIC_SOURCES))
    if len(present) != 1:
        # Go ranges over a set: the order of these is not defined
        causes += [m.forbidden_cause(f"{fld}.{typ}", "must populate the given metric source only")
                   for typ in sorted(set(present) - {expected})]
    return causes


def _validate_identifier(metric: Any, fld: str) -> list[Cause]:
    name = (metric or {}).get("name") or "" if isinstance(metric, dict) else ""
    if not name:
        return [m.required_cause(f"{fld}.name", "must specify a metric name")]
    return [m.invalid_cause(f"{fld}.name", name, msg) for msg in m.validate_path_segment_name(name, False)]


def _validate_target(target: Obj, fld: str) -> list[Cause]:
    """`validateMetricTarget`."""
    causes: list[Cause] = []
    ttype = target.get("type") or ""
    if not ttype:
        causes.append(m.required_cause(f"{fld}.type", "must specify a metric target type"))
    if ttype not in ("Utilization", "Value", "AverageValue"):
        causes.append(m.invalid_cause(f"{fld}.type", ttype, "must be either Utilization, Value, or AverageValue"))
    for key in ("value", "averageValue"):
        value = target.get(key)
        if value is not None and _sign(value) != 1:
            causes.append(m.invalid_typed(f"{fld}.{key}", _QUANTITY_GO, value, "must be positive"))
    utilization = target.get("averageUtilization")
    if utilization is not None and utilization < 1:
        causes.append(m.invalid_cause(f"{fld}.averageUtilization", utilization, "must be greater than 0"))
    return causes


def _sign(value: Any) -> int:
    try:
        v = quantity.parse(str(value)).value
    except ValueError:
        return 0
    return (v > 0) - (v < 0)


def _target(source: Obj) -> Obj:
    target = source.get("target")
    return target if isinstance(target, dict) else {}


def _object_source(source: Obj, fld: str) -> list[Cause]:
    causes = validate_object_reference(source.get("describedObject") or {}, f"{fld}.describedObject")
    causes += _validate_identifier(source.get("metric"), f"{fld}.metric")
    target = _target(source)
    causes += _validate_target(target, f"{fld}.target")
    if target.get("value") is None and target.get("averageValue") is None:
        causes.append(m.required_cause(f"{fld}.target.averageValue", "must set either a target value or averageValue"))
    return causes


def _external_source(source: Obj, fld: str) -> list[Cause]:
    causes = _validate_identifier(source.get("metric"), f"{fld}.metric")
    target = _target(source)
    causes += _validate_target(target, f"{fld}.target")
    return causes + _one_of(target, ("value", "averageValue"), f"{fld}.target.averageValue",
                            "must set either a target value for metric or a per-pod target", f"{fld}.target.value",
                            "may not set both a target value for metric and a per-pod target")


def _pods_source(source: Obj, fld: str) -> list[Cause]:
    causes = _validate_identifier(source.get("metric"), f"{fld}.metric")
    target = _target(source)
    causes += _validate_target(target, f"{fld}.target")
    if target.get("averageValue") is None:
        causes.append(m.required_cause(f"{fld}.target.averageValue", "must specify a positive target averageValue"))
    return causes


def _one_of(target: Obj, keys: tuple[str, str], missing_at: str, missing: str, both_at: str,
            both: str) -> list[Cause]:
    """Exactly one of two target fields: Required where neither is set, Forbidden where both are."""
    present = [target.get(k) is not None for k in keys]
    if not any(present):
        return [m.required_cause(missing_at, missing)]
    return [m.forbidden_cause(both_at, both)] if all(present) else []


def _utilization_or_value(target: Obj, fld: str) -> list[Cause]:
    return _one_of(target, ("averageUtilization", "averageValue"), f"{fld}.target.averageUtilization",
                   "must set either a target raw value or a target utilization", f"{fld}.target.averageValue",
                   "may not set both a target raw value and a target utilization")


def _resource_source(source: Obj, fld: str, container: bool = False) -> list[Cause]:
    """`validateResourceSource`, or with `container` `validateContainerResourceSource`."""
    causes = [] if source.get("name") else [m.required_cause(f"{fld}.name", "must specify a resource name")]
    if container:
        name = source.get("container") or ""
        if not name:
            causes.append(m.required_cause(f"{fld}.container", "must specify a container"))
        else:
            causes += [m.invalid_cause(f"{fld}.container", name, msg) for msg in is_dns1123_label(name)]
    target = _target(source)
    return causes + _validate_target(target, f"{fld}.target") + _utilization_or_value(target, fld)


def _container_resource_source(source: Obj, fld: str) -> list[Cause]:
    return _resource_source(source, fld, container=True)


_SOURCE_VALIDATORS = {"object": _object_source, "external": _external_source, "pods": _pods_source,
                      "resource": _resource_source, "containerResource": _container_resource_source}


def _validate_scaling_rules(rules: Any, fld: str) -> list[Cause]:
    """`validateScalingRules`."""
    if not isinstance(rules, dict):
        return []
    causes: list[Cause] = []
    window = rules.get("stabilizationWindowSeconds")
    if window is not None and window < 0:
        causes.append(m.invalid_cause(f"{fld}.stabilizationWindowSeconds", window, "must be greater than or equal to zero"))
    if window is not None and window > MAX_STABILIZATION_WINDOW_SECONDS:
        causes.append(m.invalid_cause(f"{fld}.stabilizationWindowSeconds", window,
                                      f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in SELECT_POLICIES:
        causes.append(m.not_supported_typed(f"{fld}.selectPolicy", _SELECT_POLICY_GO, select, SELECT_POLICIES))
    policies = rules.get("policies") or []
    if not policies:
        causes.append(m.required_cause(f"{fld}.policies", "must specify at least one Policy"))
    for i, policy in enumerate(policies):
        policy = policy if isinstance(policy, dict) else {}
        path = f"{fld}.policies[{i}]"
        if policy.get("type") not in POLICY_TYPES:
            causes.append(m.not_supported_cause(f"{path}.type", policy.get("type") or "", POLICY_TYPES))
        value, period = int(policy.get("value") or 0), int(policy.get("periodSeconds") or 0)
        if value <= 0:
            causes.append(m.invalid_cause(f"{path}.value", value, "must be greater than zero"))
        if period <= 0:
            causes.append(m.invalid_cause(f"{path}.periodSeconds", period, "must be greater than zero"))
        if period > MAX_PERIOD_SECONDS:
            causes.append(m.invalid_cause(f"{path}.periodSeconds", period,
                                          f"must be less than or equal to {MAX_PERIOD_SECONDS}"))
    return causes
