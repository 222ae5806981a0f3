"""apps/v1 workloads: Deployment, StatefulSet, ReplicaSet, DaemonSet, and the autoscaling/v1
Scale subresource they expose."""

from __future__ import annotations

import copy
from typing import Any

from ..errors import invalid
from ..govalues import TYPED, equal
from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from . import podspec
from .base import KindStrategy, without
from .core import FieldLabelStrategy, count_field
from .schema import (
    ANY,
    INT32,
    INT_OR_STRING,
    LABEL_SELECTOR,
    OBJECT_META,
    OMIT_BOOL,
    OMIT_INT32,
    OMIT_INT64,
    POD_TEMPLATE_SPEC,
    STRING,
    list_of,
    struct,
    top_level,
)

# -- label selectors ------------------------------------------------------------------------------

def selector_matches(selector: Any, labels: dict[str, str]) -> bool:
    """`metav1.LabelSelectorAsSelector(sel).Matches(labels)`; an empty selector matches everything."""
    if not isinstance(selector, dict):
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for req in selector.get("matchExpressions") or []:
        key, op, values = req.get("key"), req.get("operator"), req.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def selector_string(selector: Any) -> str:
    """The string form of a LabelSelector (what `Scale.status.selector` shows)."""
    if not isinstance(selector, dict):
        return ""
    parts: list[tuple[str, str]] = []
    for k, v in (selector.get("matchLabels") or {}).items():
        parts.append((k, f"{k}={v}"))
    for req in selector.get("matchExpressions") or []:
        key, op, values = req.get("key", ""), req.get("operator"), sorted(req.get("values") or [])
        if op == "In":
            parts.append((key, f"{key} in ({','.join(values)})"))
        elif op == "NotIn":
            parts.append((key, f"{key} notin ({','.join(values)})"))
        elif op == "Exists":
            parts.append((key, key))
        elif op == "DoesNotExist":
            parts.append((key, "!" + key))
    return ",".join(p for _, p in sorted(parts, key=lambda t: t[0]))


def _selector_empty(selector: Any) -> bool:
    return not isinstance(selector, dict) or (not selector.get("matchLabels") and not selector.get("matchExpressions"))


def validate_selector_and_template(spec: Obj, kind_word: str, restart: tuple[str, ...] = ("Always",),
                                   require_match: bool = True) -> list[Cause]:
    """Selector present, non-empty, matching the template labels; the template valid."""
    causes: list[Cause] = []
    selector = spec.get("selector")
    template = spec.get("template") or {}
    labels = (template.get("metadata") or {}).get("labels") or {}
    if selector is None:
        causes.append(m.required_cause("spec.selector"))
    elif _selector_empty(selector):
        causes.append(m.invalid_cause("spec.selector", selector, f"empty selector is invalid for {kind_word}"))
    for req in (selector or {}).get("matchExpressions") or []:
        if req.get("operator") not in ("In", "NotIn", "Exists", "DoesNotExist"):
            causes.append(m.not_supported_cause("spec.selector.matchExpressions.operator", req.get("operator") or "",
                                                ("In", "NotIn", "Exists", "DoesNotExist")))
    causes += m.validate_labels((selector or {}).get("matchLabels"), "spec.selector.matchLabels")
    # LabelSelectorAsSelector: a missing selector selects nothing (so it cannot match the template
    # either), an empty one everything
    if require_match and (selector is None or (not _selector_empty(selector)
                                               and not selector_matches(selector, labels))):
        causes.append(m.invalid_cause("spec.template.metadata.labels", labels,
                                      "`selector` does not match template `labels`"))
    causes += m.validate_labels(labels, "spec.template.metadata.labels")
    causes += m.validate_annotations((template.get("metadata") or {}).get("annotations"),
                                     "spec.template.metadata.annotations")
    tspec = template.get("spec")
    causes += podspec.validate_pod_spec(tspec, "spec.template.spec", restart)
    return causes


def _non_negative(value: Any, fld: str) -> list[Cause]:
    if isinstance(value, int) and value < 0:
        return [m.invalid_cause(fld, value, "must be greater than or equal to 0")]
    return []


# -- schemas --------------------------------------------------------------------------------------

ROLLING_UPDATE_DEPLOYMENT = struct("RollingUpdateDeployment", maxUnavailable=INT_OR_STRING, maxSurge=INT_OR_STRING)
DEPLOYMENT_SPEC = struct(
    "DeploymentSpec", replicas=INT32, selector=LABEL_SELECTOR, template=POD_TEMPLATE_SPEC,
    strategy=struct("DeploymentStrategy", type=STRING, rollingUpdate=ROLLING_UPDATE_DEPLOYMENT),
    minReadySeconds=OMIT_INT32, revisionHistoryLimit=INT32, paused=OMIT_BOOL, progressDeadlineSeconds=INT32,
)
DEPLOYMENT_STATUS = struct(
    "DeploymentStatus", open=True, observedGeneration=OMIT_INT64, replicas=OMIT_INT32, updatedReplicas=OMIT_INT32,
    readyReplicas=OMIT_INT32, availableReplicas=OMIT_INT32, unavailableReplicas=OMIT_INT32,
    conditions=list_of(ANY), collisionCount=INT32,
)
PVC_TEMPLATE = struct("PersistentVolumeClaim", apiVersion=STRING, kind=STRING, metadata=OBJECT_META,
                      spec=ANY, status=ANY)
STATEFUL_SET_SPEC = struct(
    "StatefulSetSpec", replicas=INT32, selector=LABEL_SELECTOR, template=POD_TEMPLATE_SPEC,
    volumeClaimTemplates=list_of(PVC_TEMPLATE), serviceName=STRING, podManagementPolicy=STRING,
    updateStrategy=struct("StatefulSetUpdateStrategy", type=STRING,
                          rollingUpdate=struct("RollingUpdateStatefulSetStrategy", partition=INT32,
                                               maxUnavailable=INT_OR_STRING)),
    revisionHistoryLimit=INT32, minReadySeconds=OMIT_INT32, persistentVolumeClaimRetentionPolicy=ANY,
)
REPLICA_SET_SPEC = struct("ReplicaSetSpec", replicas=INT32, minReadySeconds=OMIT_INT32, selector=LABEL_SELECTOR,
                          template=POD_TEMPLATE_SPEC)
DAEMON_SET_SPEC = struct(
    "DaemonSetSpec", selector=LABEL_SELECTOR, template=POD_TEMPLATE_SPEC,
    updateStrategy=struct("DaemonSetUpdateStrategy", type=STRING,
                          rollingUpdate=struct("RollingUpdateDaemonSet", maxUnavailable=INT_OR_STRING,
                                               maxSurge=INT_OR_STRING)),
    minReadySeconds=OMIT_INT32, revisionHistoryLimit=INT32,
)


# -- shared workload behaviour --------------------------------------------------------------------

class WorkloadStrategy(KindStrategy):
    """Generation on spec changes, `status: {}` on create, labels fixed through `/status`."""

    has_generation = True
    status_keeps_labels = True
    kind_word = "workload"
    pod_template_path: tuple[str, ...] | None = ("spec", "template")

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        return {}

    def spec_of(self, info: ServedResource, obj: Obj) -> Obj:
        return obj.get("spec") or {}

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        causes += self.validate_spec(info, new)
        old_sel, new_sel = (old.get("spec") or {}).get("selector"), (new.get("spec") or {}).get("selector")
        if not equal(old_sel, new_sel, TYPED):
            causes.append(m.invalid_cause("spec.selector", new_sel, "field is immutable"))
        return causes


class ScalableStrategy(WorkloadStrategy):
    """Workloads with a `scale` subresource."""

    def get_scale(self, info: ServedResource, obj: Obj) -> Obj:
        meta = obj.get("metadata") or {}
        smeta: Obj = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                      if k in meta}
        spec_replicas = (obj.get("spec") or {}).get("replicas") or 0
        status: Obj = {"replicas": int((obj.get("status") or {}).get("replicas") or 0)}
        sel = selector_string((obj.get("spec") or {}).get("selector"))
        if sel:
            status["selector"] = sel
        return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": smeta,
                "spec": {"replicas": spec_replicas} if spec_replicas else {}, "status": status}

    def apply_scale(self, info: ServedResource, obj: Obj, scale: Obj) -> None:
        validate_scale(scale)
        obj.setdefault("spec", {})["replicas"] = int(((scale.get("spec") or {}).get("replicas")) or 0)


def decode_scale(scale: Obj) -> None:
    """Decoding an `autoscaling/v1` Scale body: a non-integer `spec.replicas` is a 400."""
    replicas = (scale.get("spec") or {}).get("replicas")
    if replicas is not None and (isinstance(replicas, bool) or not isinstance(replicas, int)):
        from ..errors import bad_request
        raise bad_request(f"Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal "
                          f"{type(replicas).__name__} into Go struct field ScaleSpec.spec.replicas of type int32")


def validate_scale(scale: Obj) -> None:
    """`ValidateScale` of built-in workloads: 422 with kind Scale in group autoscaling."""
    decode_scale(scale)
    replicas = (scale.get("spec") or {}).get("replicas")
    name = (scale.get("metadata") or {}).get("name") or None
    if isinstance(replicas, int) and replicas < 0:
        raise invalid("Scale", name, [m.invalid_cause("spec.replicas", replicas,
                                                      "must be greater than or equal to 0")], "autoscaling")


# -- Deployment -----------------------------------------------------------------------------------

class DeploymentStrategy(ScalableStrategy):
    schema = top_level("Deployment", spec=DEPLOYMENT_SPEC, status=DEPLOYMENT_STATUS)
    annotations_bump_generation = True
    kind_word = "deployment"

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        strategy = spec.setdefault("strategy", {})
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            ru = strategy.setdefault("rollingUpdate", {})
            ru.setdefault("maxUnavailable", "25%")
            ru.setdefault("maxSurge", "25%")
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        spec.setdefault("template", {})
        podspec.default_pod_template(spec["template"])

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes = _non_negative(spec.get("replicas"), "spec.replicas")
        causes += validate_selector_and_template(spec, "deployment")
        strategy = spec.get("strategy") or {}
        stype = strategy.get("type")
        if stype not in ("Recreate", "RollingUpdate"):
            causes.append(m.not_supported_cause("spec.strategy.type", stype or "", ("Recreate", "RollingUpdate")))
        elif stype == "Recreate" and strategy.get("rollingUpdate") is not None:
            causes.append(m.forbidden_cause("spec.strategy.rollingUpdate",
                                            "may not be specified when strategy `type` is 'Recreate'"))
        ru = strategy.get("rollingUpdate") or {}
        if stype == "RollingUpdate" and _is_zero(ru.get("maxUnavailable")) and _is_zero(ru.get("maxSurge")):
            causes.append(m.invalid_cause("spec.strategy.rollingUpdate.maxUnavailable", ru.get("maxUnavailable"),
                                          "may not be 0 when `maxSurge` is 0"))
        causes += _non_negative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit")
        causes += _non_negative(spec.get("minReadySeconds"), "spec.minReadySeconds")
        pds = spec.get("progressDeadlineSeconds")
        if isinstance(pds, int) and pds <= int(spec.get("minReadySeconds") or 0):
            causes.append(m.invalid_cause("spec.progressDeadlineSeconds", pds,
                                          "must be greater than minReadySeconds"))
        return causes

    def validate_status(self, info: ServedResource, obj: Obj) -> list[Cause]:
        """`ValidateDeploymentStatus`."""
        status = obj.get("status") or {}
        causes = validate_replica_status(
            status, ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
                     "unavailableReplicas", "collisionCount"),
            ("updatedReplicas", "readyReplicas", "availableReplicas"))
        available, ready = status.get("availableReplicas") or 0, status.get("readyReplicas") or 0
        if isinstance(available, int) and isinstance(ready, int) and available > ready:
            causes.append(m.invalid_cause("status.availableReplicas", available, "cannot be greater than readyReplicas"))
        return causes


def validate_replica_status(status: Any, fields: tuple[str, ...], bounded: tuple[str, ...]) -> list[Cause]:
    """The shape shared by `ValidateDeploymentStatus` and its siblings: counts are non-negative,
    and the `bounded` ones cannot exceed `status.replicas`."""
    if not isinstance(status, dict):
        return []
    causes: list[Cause] = []
    for key in fields:
        causes += _non_negative(status.get(key), f"status.{key}")
    replicas = status.get("replicas") or 0
    for key in bounded:
        value = status.get(key) or 0
        if isinstance(value, int) and isinstance(replicas, int) and value > replicas:
            causes.append(m.invalid_cause(f"status.{key}", value, "cannot be greater than status.replicas"))
    return causes


def _is_zero(v: Any) -> bool:
    return v == 0 or v == "0%" or v == "0"


# -- StatefulSet ----------------------------------------------------------------------------------

STATEFUL_SET_MUTABLE = ("replicas", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                        "minReadySeconds")


class StatefulSetStrategy(ScalableStrategy):
    schema = top_level("StatefulSet", spec=STATEFUL_SET_SPEC, status=ANY)
    kind_word = "statefulset"

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("podManagementPolicy", "OrderedReady")
        us = spec.setdefault("updateStrategy", {})
        us.setdefault("type", "RollingUpdate")
        if us["type"] == "RollingUpdate":
            us.setdefault("rollingUpdate", {}).setdefault("partition", 0)
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("template", {})
        podspec.default_pod_template(spec["template"])
        for pvc in spec.get("volumeClaimTemplates") or []:
            if isinstance(pvc, dict):
                pvc.setdefault("metadata", {}).setdefault("creationTimestamp", None)
                pvc_spec = pvc.setdefault("spec", {})
                if isinstance(pvc_spec, dict):
                    pvc_spec.setdefault("volumeMode", "Filesystem")
                pvc.setdefault("status", {"phase": "Pending"})

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        return {"replicas": 0, "availableReplicas": 0}

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes = _non_negative(spec.get("replicas"), "spec.replicas")
        pmp = spec.get("podManagementPolicy")
        if pmp not in ("OrderedReady", "Parallel"):
            causes.append(m.invalid_cause("spec.podManagementPolicy", pmp or "",
                                          "must be 'OrderedReady' or 'Parallel'"))
        ustype = (spec.get("updateStrategy") or {}).get("type")
        if ustype not in ("RollingUpdate", "OnDelete"):
            causes.append(m.invalid_cause("spec.updateStrategy", ustype or "",
                                          "must be 'RollingUpdate' or 'OnDelete'"))
        causes += validate_selector_and_template(spec, "statefulset")
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        causes += self.validate_spec(info, new)
        ns, os_ = new.get("spec") or {}, old.get("spec") or {}
        if not equal(without(ns, *STATEFUL_SET_MUTABLE), without(os_, *STATEFUL_SET_MUTABLE), TYPED):
            causes.append(m.forbidden_cause(
                "spec", "updates to statefulset spec for fields other than 'replicas', 'template', "
                "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"))
        return causes


# -- ReplicaSet -----------------------------------------------------------------------------------

class ReplicaSetStrategy(ScalableStrategy, FieldLabelStrategy):
    schema = top_level("ReplicaSet", spec=REPLICA_SET_SPEC, status=ANY)
    kind_word = "replicaset"
    selectable_fields = {"status.replicas": count_field("status.replicas")}

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        spec.setdefault("template", {})
        podspec.default_pod_template(spec["template"])

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        return {"replicas": 0}

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes = _non_negative(spec.get("replicas"), "spec.replicas")
        causes += _non_negative(spec.get("minReadySeconds"), "spec.minReadySeconds")
        return causes + validate_selector_and_template(spec, "deployment")



# -- DaemonSet ------------------------------------------------------------------------------------

class DaemonSetStrategy(WorkloadStrategy):
    schema = top_level("DaemonSet", spec=DAEMON_SET_SPEC, status=ANY)
    kind_word = "daemonset"

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        us = spec.setdefault("updateStrategy", {})
        us.setdefault("type", "RollingUpdate")
        if us["type"] == "RollingUpdate":
            ru = us.setdefault("rollingUpdate", {})
            ru.setdefault("maxUnavailable", 1)
            ru.setdefault("maxSurge", 0)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("template", {})
        podspec.default_pod_template(spec["template"])

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        return {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                "numberReady": 0}

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes = validate_selector_and_template(spec, "daemonset")
        ustype = (spec.get("updateStrategy") or {}).get("type")
        if ustype not in ("RollingUpdate", "OnDelete"):
            causes.append(m.not_supported_cause("spec.updateStrategy.type", ustype or "",
                                                ("OnDelete", "RollingUpdate")))
        return causes + _non_negative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit")


def copy_status(obj: Obj) -> Any:
    return copy.deepcopy(obj.get("status"))
