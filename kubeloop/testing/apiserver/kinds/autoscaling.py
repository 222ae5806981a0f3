"""HorizontalPodAutoscaler in autoscaling/v2, v1, v2beta1 and v2beta2, stored as 1.24 stores it (in
v1), with its defaults (`SetDefaults_HorizontalPodAutoscaler` of each version) and 1.24's
`ValidateHorizontalPodAutoscaler` (feature gates as 1.24 ships them: `HPAScaleToZero` off,
`HPAContainerMetrics` off).

Every version converts through the internal (v2-shaped) form, as kube-apiserver does, and is
validated in it: autoscaling/v1 keeps a CPU utilization target in `targetCPUUtilizationPercentage`
and carries everything else it cannot hold (other metrics, conditions, current metrics, behavior)
in the `autoscaling.alpha.kubernetes.io/*` annotations, so an object written in v2 keeps it all, and
comes back with its CPU target last among its metrics (where the v1 round trip puts it); v2beta1
spells targets as `targetAverageUtilization` & co. and carries behavior in an annotation.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kubeloop.meta import is_dns1123_label

from .. import quantity
from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from .base import KindStrategy

METRICS_ANNOTATION = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS_ANNOTATION = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR_ANNOTATION = "autoscaling.alpha.kubernetes.io/behavior"
ROUND_TRIP = (METRICS_ANNOTATION, CURRENT_METRICS_ANNOTATION, CONDITIONS_ANNOTATION, BEHAVIOR_ANNOTATION)
DEFAULT_CPU_UTILIZATION = 80
SCALE_UP_RULES: Obj = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                       "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                    {"type": "Percent", "value": 100, "periodSeconds": 15}]}
SCALE_DOWN_RULES: Obj = {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
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


def _cpu_metric(utilization: int) -> Obj:
    return {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                       "averageUtilization": utilization}}}


# ---- v2beta1 <-> v2 metric forms ---------------------------------------------------------------------

def _target_from_v2beta1(src: Obj, utilization: str, average: str, value: str = "") -> Obj:
    if src.get(utilization) is not None:
        return {"type": "Utilization", "averageUtilization": src[utilization]}
    if src.get(average) is not None:
        return {"type": "AverageValue", "averageValue": src[average]}
    if value and src.get(value) is not None:
        return {"type": "Value", "value": src[value]}
    return {}


def _metric_identifier(name: Any, selector: Any) -> Obj:
    out: Obj = {"name": name or ""}
    if selector is not None:
        out["selector"] = selector
    return out


def metric_from_v2beta1(metric: Obj) -> Obj:
    out: Obj = {"type": metric.get("type", "")}
    if isinstance(r := metric.get("resource"), dict):
        out["resource"] = {"name": r.get("name", ""),
                           "target": _target_from_v2beta1(r, "targetAverageUtilization", "targetAverageValue")}
    if isinstance(c := metric.get("containerResource"), dict):
        out["containerResource"] = {"name": c.get("name", ""), "container": c.get("container", ""),
                                    "target": _target_from_v2beta1(c, "targetAverageUtilization",
                                                                   "targetAverageValue")}
    if isinstance(p := metric.get("pods"), dict):
        out["pods"] = {"metric": _metric_identifier(p.get("metricName"), p.get("selector")),
                       "target": {"type": "AverageValue", "averageValue": p.get("targetAverageValue")}}
    if isinstance(o := metric.get("object"), dict):
        target = _target_from_v2beta1(o, "", "averageValue", "targetValue")
        out["object"] = {"describedObject": o.get("target") or {},
                         "metric": _metric_identifier(o.get("metricName"), o.get("selector")), "target": target}
    if isinstance(e := metric.get("external"), dict):
        out["external"] = {"metric": _metric_identifier(e.get("metricName"), e.get("metricSelector")),
                           "target": _target_from_v2beta1(e, "", "targetAverageValue", "targetValue")}
    return out


def metric_to_v2beta1(metric: Obj) -> Obj:
    out: Obj = {"type": metric.get("type", "")}
    if isinstance(r := metric.get("resource"), dict):
        t = r.get("target") or {}
        out["resource"] = _drop_none({"name": r.get("name", ""), "targetAverageUtilization": t.get("averageUtilization"),
                                      "targetAverageValue": t.get("averageValue")})
    if isinstance(c := metric.get("containerResource"), dict):
        t = c.get("target") or {}
        out["containerResource"] = _drop_none({"name": c.get("name", ""), "targetAverageUtilization":
                                               t.get("averageUtilization"), "targetAverageValue": t.get("averageValue"),
                                               "container": c.get("container", "")})
    if isinstance(p := metric.get("pods"), dict):
        ident, t = p.get("metric") or {}, p.get("target") or {}
        out["pods"] = _drop_none({"metricName": ident.get("name", ""), "targetAverageValue": t.get("averageValue"),
                                  "selector": ident.get("selector")})
    if isinstance(o := metric.get("object"), dict):
        ident, t = o.get("metric") or {}, o.get("target") or {}
        out["object"] = _drop_none({"target": o.get("describedObject") or {}, "metricName": ident.get("name", ""),
                                    "targetValue": t.get("value"), "selector": ident.get("selector"),
                                    "averageValue": t.get("averageValue")})
    if isinstance(e := metric.get("external"), dict):
        ident, t = e.get("metric") or {}, e.get("target") or {}
        out["external"] = _drop_none({"metricName": ident.get("name", ""), "metricSelector": ident.get("selector"),
                                      "targetValue": t.get("value"), "targetAverageValue": t.get("averageValue")})
    return out


def status_metric_to_v2beta1(metric: Obj) -> Obj:
    out: Obj = {"type": metric.get("type", "")}
    if isinstance(r := metric.get("resource"), dict):
        cur = r.get("current") or {}
        out["resource"] = _drop_none({"name": r.get("name", ""), "currentAverageUtilization":
                                      cur.get("averageUtilization"), "currentAverageValue": cur.get("averageValue")})
    for key in ("pods", "object", "external", "containerResource"):
        if key in metric:
            out[key] = copy.deepcopy(metric[key])
    return out


def status_metric_from_v2beta1(metric: Obj) -> Obj:
    out: Obj = {"type": metric.get("type", "")}
    if isinstance(r := metric.get("resource"), dict):
        out["resource"] = {"name": r.get("name", ""), "current": _drop_none({
            "averageUtilization": r.get("currentAverageUtilization"), "averageValue": r.get("currentAverageValue")})}
    for key in ("pods", "object", "external", "containerResource"):
        if key in metric:
            out[key] = copy.deepcopy(metric[key])
    return out


def _drop_none(d: Obj) -> Obj:
    return {k: v for k, v in d.items() if v is not None}


# ---- the stored (v2) form and each version's view ------------------------------------------------------

def _status_view(status: Any, *, current_replicas_always: bool, nulls: tuple[str, ...]) -> Obj:
    status = dict(status or {})
    out: Obj = {}
    for key in ("observedGeneration", "lastScaleTime"):
        if key in status:
            out[key] = status[key]
    if current_replicas_always or status.get("currentReplicas"):
        out["currentReplicas"] = status.get("currentReplicas") or 0
    out["desiredReplicas"] = status.get("desiredReplicas") or 0
    for key in ("currentMetrics", "conditions"):
        if status.get(key) or key in nulls:
            out[key] = status.get(key) or None
    return out


def _stored_status(status: Any) -> Obj:
    status = dict(status or {})
    status.setdefault("currentReplicas", 0)
    status.setdefault("desiredReplicas", 0)
    return {k: v for k, v in status.items() if v is not None}


def to_v2(obj: Obj, version: str) -> Obj:
    """An HPA as `version` shows it, in the stored v2 form."""
    out = copy.deepcopy(obj)
    spec = out.get("spec")
    if isinstance(spec, dict):
        if version == "v1":
            cpu = spec.pop("targetCPUUtilizationPercentage", None)
            annotations = (out.get("metadata") or {}).get("annotations") or {}
            metrics = [metric_from_v2beta1(x) for x in _annotation(annotations, METRICS_ANNOTATION)]
            if cpu is not None:
                metrics.append(_cpu_metric(cpu))
            spec["metrics"] = metrics or [_cpu_metric(DEFAULT_CPU_UTILIZATION)]
            behavior = _behavior_from_go(annotations.get(BEHAVIOR_ANNOTATION) or "")
            if behavior:
                spec["behavior"] = behavior
        elif version == "v2beta1":
            if isinstance(spec.get("metrics"), list):
                spec["metrics"] = [metric_from_v2beta1(x) if isinstance(x, dict) else x for x in spec["metrics"]]
            annotations = (out.get("metadata") or {}).get("annotations") or {}
            behavior = _behavior_from_go(annotations.get(BEHAVIOR_ANNOTATION) or "")
            if behavior:
                spec["behavior"] = behavior
    status = out.get("status")
    if isinstance(status, dict):
        if version == "v1":
            annotations = (out.get("metadata") or {}).get("annotations") or {}
            status.pop("currentCPUUtilizationPercentage", None)
            current = _annotation(annotations, CURRENT_METRICS_ANNOTATION)
            if current:
                status["currentMetrics"] = [status_metric_from_v2beta1(x) for x in current]
            conditions = _annotation(annotations, CONDITIONS_ANNOTATION)
            if conditions:
                status["conditions"] = conditions
        elif version == "v2beta1" and isinstance(status.get("currentMetrics"), list):
            status["currentMetrics"] = [status_metric_from_v2beta1(x) for x in status["currentMetrics"]]
        out["status"] = _stored_status(status)
    if version in ("v1", "v2beta1"):
        _drop_round_trip(out, version)
    return out


def from_v2(obj: Obj, version: str) -> Obj:
    """The stored v2 form of an HPA as `version` shows it."""
    out = copy.deepcopy(obj)
    spec = out.get("spec") if isinstance(out.get("spec"), dict) else None
    status = out.get("status") if isinstance(out.get("status"), dict) else None
    if version == "v1":
        _drop_round_trip(out, version)
        extra: dict[str, Any] = {}
        if spec is not None:
            metrics = spec.pop("metrics", None) or []
            behavior = spec.pop("behavior", None)
            other = []
            for metric in metrics:
                target = ((metric.get("resource") or {}).get("target") or {}) if metric.get("type") == "Resource" \
                    else {}
                if (metric.get("resource") or {}).get("name") == "cpu" and target.get("averageUtilization") \
                        is not None:
                    spec.setdefault("targetCPUUtilizationPercentage", target["averageUtilization"])
                else:
                    other.append(metric_to_v2beta1(metric))
            if other:
                extra[METRICS_ANNOTATION] = json.dumps(other, separators=(",", ":"))
            if behavior:
                extra[BEHAVIOR_ANNOTATION] = _go_behavior(behavior)
        if status is not None:
            current = status.pop("currentMetrics", None) or []
            conditions = status.pop("conditions", None) or []
            for metric in current:
                cur = (metric.get("resource") or {}).get("current") or {}
                if metric.get("type") == "Resource" and (metric.get("resource") or {}).get("name") == "cpu" \
                        and cur.get("averageUtilization") is not None:
                    status["currentCPUUtilizationPercentage"] = cur["averageUtilization"]
            if current:
                extra[CURRENT_METRICS_ANNOTATION] = json.dumps([status_metric_to_v2beta1(x) for x in current],
                                                               separators=(",", ":"))
            if conditions:
                extra[CONDITIONS_ANNOTATION] = json.dumps(conditions, separators=(",", ":"))
            out["status"] = _status_view(status, current_replicas_always=True, nulls=())
        if extra:
            out.setdefault("metadata", {}).setdefault("annotations", {}).update(extra)
        return out
    if version == "v2beta1":
        if spec is not None and isinstance(spec.get("metrics"), list):
            spec["metrics"] = [metric_to_v2beta1(x) for x in spec["metrics"]]
        behavior = spec.pop("behavior", None) if spec is not None else None
        if behavior:
            _drop_round_trip(out, version)
            out.setdefault("metadata", {}).setdefault("annotations", {})[BEHAVIOR_ANNOTATION] = _go_behavior(behavior)
        if status is not None and isinstance(status.get("currentMetrics"), list):
            status["currentMetrics"] = [status_metric_to_v2beta1(x) for x in status["currentMetrics"]]
    if status is not None:
        beta = version in ("v2beta1", "v2beta2")
        out["status"] = _status_view(status, current_replicas_always=beta,
                                     nulls=("currentMetrics", "conditions") if beta else ("currentMetrics",))
    return out


def _annotation(annotations: Obj, key: str, default: Any = ()) -> Any:
    text = annotations.get(key)
    if not text:
        return list(default) if isinstance(default, tuple) else default
    try:
        return json.loads(text)
    except ValueError:
        return list(default) if isinstance(default, tuple) else default


def _drop_round_trip(obj: Obj, version: str) -> None:
    meta = obj.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if isinstance(annotations, dict):
        for key in ROUND_TRIP if version == "v1" else (BEHAVIOR_ANNOTATION,):
            annotations.pop(key, None)
        if not annotations and isinstance(meta, dict):
            del meta["annotations"]


# ---- the strategy ------------------------------------------------------------------------------------

class HorizontalPodAutoscalerStrategy(KindStrategy):
    """One strategy for every version: hooks see the version's form, validation the v2 form; no
    generation; `status` starts as the zero internal status."""

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("minReplicas") is None:
            spec["minReplicas"] = 1
        if info.version != "v1" and not spec.get("metrics"):
            metric = _cpu_metric(DEFAULT_CPU_UTILIZATION)
            spec["metrics"] = [metric_to_v2beta1(metric) if info.version == "v2beta1" else metric]
        behavior = spec.get("behavior")
        if info.version in ("v2", "v2beta2") and isinstance(behavior, dict):
            # `SetDefaults_HorizontalPodAutoscalerBehavior`: both rules, each unset field from the
            # defaults (a scale-down stabilization window stays unset: the controller's flag decides it)
            for key, rules in (("scaleUp", SCALE_UP_RULES), ("scaleDown", SCALE_DOWN_RULES)):
                given: Obj = behavior[key] if isinstance(behavior.get(key), dict) else {}
                behavior[key] = {**copy.deepcopy(rules), **{k: v for k, v in given.items() if v is not None}}

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        return from_v2({"status": {"currentReplicas": 0, "desiredReplicas": 0}}, info.version)["status"]

    def prepare_create(self, info: ServedResource, obj: Obj) -> None:
        _drop_container_metrics(obj)

    def prepare_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        if not any(isinstance(x, dict) and x.get("containerResource") is not None
                   for x in (old.get("spec") or {}).get("metrics") or []):
            _drop_container_metrics(new)

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        return _validate_spec(to_v2(obj, info.version).get("spec") or {}, 1)

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        lower = 0 if (old.get("spec") or {}).get("minReplicas") == 0 else 1
        return causes + _validate_spec(to_v2(new, info.version).get("spec") or {}, lower)

    def validate_status(self, info: ServedResource, obj: Obj) -> list[Cause]:
        status = obj.get("status") or {}
        causes: list[Cause] = []
        for key in ("currentReplicas", "desiredReplicas"):
            value = int(status.get(key) or 0)
            if value < 0:
                causes.append(m.invalid_cause(f"status.{key}", value, "must be greater than or equal to 0"))
        return causes

    def to_storage(self, info: ServedResource, obj: Obj) -> Obj:
        out = from_v2(to_v2(obj, info.version), "v1")  # what etcd holds: the v1 form
        out["apiVersion"] = "autoscaling/v1"
        return out

    def from_storage(self, info: ServedResource, stored: Obj) -> Obj:
        out = from_v2(to_v2(stored, "v1"), info.version)
        out["apiVersion"] = info.api_version
        return out


def _drop_container_metrics(obj: Obj) -> None:
    for metric in (obj.get("spec") or {}).get("metrics") or []:
        if isinstance(metric, dict):
            metric.pop("containerResource", None)


def _go_behavior(behavior: Obj) -> str:
    """The internal HorizontalPodAutoscalerBehavior as Go's json.Marshal writes it (it has no json
    tags: field names as in Go, in struct order) for the behavior annotation."""
    def rules(r: Any) -> Any:
        if not isinstance(r, dict):
            return None
        policies = r.get("policies")
        return {"StabilizationWindowSeconds": r.get("stabilizationWindowSeconds"),
                "SelectPolicy": r.get("selectPolicy"),
                "Policies": None if policies is None else [
                    {"Type": p.get("type", ""), "Value": p.get("value", 0), "PeriodSeconds": p.get("periodSeconds", 0)}
                    for p in policies]}
    return json.dumps({"ScaleUp": rules(behavior.get("scaleUp")), "ScaleDown": rules(behavior.get("scaleDown"))},
                      separators=(",", ":"))


def _behavior_from_go(text: str) -> Obj | None:
    try:
        go = json.loads(text)
    except ValueError:
        return None

    def rules(r: Any) -> Any:
        if not isinstance(r, dict):
            return None
        out: Obj = {}
        if r.get("StabilizationWindowSeconds") is not None:
            out["stabilizationWindowSeconds"] = r["StabilizationWindowSeconds"]
        if r.get("SelectPolicy") is not None:
            out["selectPolicy"] = r["SelectPolicy"]
        if r.get("Policies") is not None:
            out["policies"] = [{"type": p.get("Type", ""), "value": p.get("Value", 0),
                                "periodSeconds": p.get("PeriodSeconds", 0)} for p in r["Policies"]]
        return out
    behavior = {k: v for k, v in (("scaleUp", rules(go.get("ScaleUp"))), ("scaleDown", rules(go.get("ScaleDown"))))
                if v is not None}
    return behavior or None


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
