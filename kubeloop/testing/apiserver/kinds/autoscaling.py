"""HorizontalPodAutoscaler in autoscaling/v2, v1, v2beta1 and v2beta2, stored as 1.24 stores it: in v1.

Every version converts through the internal (v2-shaped) form, as kube-apiserver does:
autoscaling/v1 keeps a CPU utilization target in `targetCPUUtilizationPercentage` and carries
everything else it cannot hold (other metrics, conditions, current metrics, behavior) in the
`autoscaling.alpha.kubernetes.io/*` annotations, so an object written in v2 keeps it all, and
comes back with its CPU target last among its metrics (where the v1 round trip puts it);
v2beta1 spells targets as `targetAverageUtilization` & co. and carries behavior in an annotation.
"""

from __future__ import annotations

import copy
import json
from typing import Any

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
METRIC_TYPES = ("Object", "Pods", "Resource", "ContainerResource", "External")
_SOURCE_FIELD = {"Object": "object", "Pods": "pods", "Resource": "resource", "ContainerResource": "containerResource",
                 "External": "external"}


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
    """One strategy for every version: hooks see the version's form, validation the v2 form."""

    has_generation = False

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        if spec.get("minReplicas") is None:
            spec["minReplicas"] = 1
        if info.version != "v1" and not spec.get("metrics"):
            metric = _cpu_metric(DEFAULT_CPU_UTILIZATION)
            spec["metrics"] = [metric_to_v2beta1(metric) if info.version == "v2beta1" else metric]
        behavior = spec.get("behavior")
        if info.version in ("v2", "v2beta2") and isinstance(behavior, dict):
            _default_behavior(behavior)

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        return from_v2({"status": {"currentReplicas": 0, "desiredReplicas": 0}}, info.version)["status"]

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        hub = to_v2(obj, info.version)
        return validate_hpa_spec(hub.get("spec") or {})

    def to_storage(self, info: ServedResource, obj: Obj) -> Obj:
        out = from_v2(to_v2(obj, info.version), "v1")  # what etcd holds: the v1 form
        out["apiVersion"] = "autoscaling/v1"
        return out

    def from_storage(self, info: ServedResource, stored: Obj) -> Obj:
        out = from_v2(to_v2(stored, "v1"), info.version)
        out["apiVersion"] = info.api_version
        return out


def _default_behavior(behavior: Obj) -> None:
    """`SetDefaults_HorizontalPodAutoscalerBehavior`: both rules, each unset field from the defaults
    (a scale-down stabilization window stays unset: the controller's flag decides it)."""
    up: Obj = behavior["scaleUp"] if isinstance(behavior.get("scaleUp"), dict) else {}
    behavior["scaleUp"] = up
    if up.get("stabilizationWindowSeconds") is None:
        up["stabilizationWindowSeconds"] = 0
    if up.get("selectPolicy") is None:
        up["selectPolicy"] = "Max"
    if up.get("policies") is None:
        up["policies"] = [{"type": "Pods", "value": 4, "periodSeconds": 15},
                          {"type": "Percent", "value": 100, "periodSeconds": 15}]
    down: Obj = behavior["scaleDown"] if isinstance(behavior.get("scaleDown"), dict) else {}
    behavior["scaleDown"] = down
    if down.get("selectPolicy") is None:
        down["selectPolicy"] = "Max"
    if down.get("policies") is None:
        down["policies"] = [{"type": "Percent", "value": 100, "periodSeconds": 15}]


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


def validate_hpa_spec(spec: Obj) -> list[Cause]:
    """`validateHorizontalPodAutoscalerSpec` (1.24, scale to zero off) on the v2 form."""
    causes: list[Cause] = []
    min_replicas, max_replicas = spec.get("minReplicas"), spec.get("maxReplicas") or 0
    if isinstance(min_replicas, int) and min_replicas < 1:
        causes.append(m.invalid_cause("spec.minReplicas", min_replicas, "must be greater than or equal to 1"))
    if isinstance(max_replicas, int) and max_replicas < 1:
        causes.append(m.invalid_cause("spec.maxReplicas", max_replicas, "must be greater than 0"))
    if isinstance(min_replicas, int) and isinstance(max_replicas, int) and 0 < max_replicas < min_replicas:
        causes.append(m.invalid_cause("spec.maxReplicas", max_replicas,
                                      "must be greater than or equal to `minReplicas`"))
    ref = spec.get("scaleTargetRef") or {}
    for key in ("kind", "name"):
        value = ref.get(key) or ""
        if not value:
            causes.append(m.required_cause(f"spec.scaleTargetRef.{key}"))
        else:
            for msg in m.validate_path_segment_name(value, False):
                causes.append(m.invalid_cause(f"spec.scaleTargetRef.{key}", value, msg))
    metrics = spec.get("metrics") or []
    if min_replicas == 0 and not any(x.get("type") in ("Object", "External") for x in metrics
                                     if isinstance(x, dict)):
        causes.append(m.forbidden_cause("spec.metrics", "must specify at least one Object or External metric to "
                                                        "support scaling to zero replicas"))
    for i, metric in enumerate(metrics):
        causes += _validate_metric(metric if isinstance(metric, dict) else {}, f"spec.metrics[{i}]")
    return causes


def _validate_metric(metric: Obj, fld: str) -> list[Cause]:
    kind = metric.get("type") or ""
    if not kind:
        return [m.required_cause(f"{fld}.type", "must specify a metric source type")]
    if kind not in METRIC_TYPES:
        return [m.not_supported_cause(f"{fld}.type", kind, METRIC_TYPES)]
    source = _SOURCE_FIELD[kind]
    causes: list[Cause] = []
    for other in METRIC_TYPES:
        key = _SOURCE_FIELD[other]
        if key != source and metric.get(key) is not None:
            causes.append(m.forbidden_cause(f"{fld}.{key}", "must populate the given metric source only"))
    if metric.get(source) is None:
        causes.append(m.required_cause(f"{fld}.{source}", "must populate information for the given metric source"))
    return causes


