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


LABEL_SELECTOR_GO = "*k8s.io/apimachinery/pkg/apis/meta/v1.LabelSelector"


def selector_mismatch(spec: Obj) -> Cause:
    """The error of a pod template whose labels the workload's selector does not match."""
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    return m.invalid_typed("spec.template.metadata.labels", "map[string]string", labels,
                           "`selector` does not match template `labels`")


def selector_empty(selector: Any) -> bool:
    return not isinstance(selector, dict) or (not selector.get("matchLabels") and not selector.get("matchExpressions"))


def required_selector(spec: Obj, kind_word: str) -> list[Cause]:
    """A selector that is there, valid, and not empty."""
    selector = spec.get("selector")
    if selector is None:
        return [m.required_cause("spec.selector")]
    causes = m.validate_label_selector(selector, "spec.selector")
    if selector_empty(selector):
        causes.append(m.invalid_typed("spec.selector", LABEL_SELECTOR_GO, selector,
                                      f"empty selector is invalid for {kind_word}"))
    return causes


def validate_replicated_spec(spec: Obj, kind_word: str) -> list[Cause]:
    """The selector and template rules `ValidateDeploymentSpec` and `ValidateReplicaSetSpec` share
    (both say "deployment" for an empty selector)."""
    causes = required_selector(spec, kind_word)
    selector = spec.get("selector")
    if not m.label_selector_parses(selector):
        causes.append(m.invalid_typed("spec.selector", LABEL_SELECTOR_GO, selector, "invalid label selector"))
        return causes
    # ValidatePodTemplateSpecForReplicaSet; LabelSelectorAsSelector(nil) selects nothing
    template = spec.get("template") or {}
    labels = (template.get("metadata") or {}).get("labels") or {}
    if selector is None or (not selector_empty(selector) and not selector_matches(selector, labels)):
        causes.append(selector_mismatch(spec))
    causes += podspec.validate_pod_template(template, "spec.template")
    return causes + restarting_always(template, "ReplicaSet")


def restarting_always(template: Obj, kind: str) -> list[Cause]:
    """A controller's pods restart always and run without a deadline."""
    tspec = template.get("spec") or {}
    causes: list[Cause] = []
    if tspec.get("restartPolicy") != "Always":
        causes.append(m.not_supported_cause("spec.template.spec.restartPolicy", tspec.get("restartPolicy") or "",
                                            ("Always",)))
    if tspec.get("activeDeadlineSeconds") is not None:
        causes.append(m.forbidden_cause("spec.template.spec.activeDeadlineSeconds",
                                        f"activeDeadlineSeconds in {kind} is not Supported"))
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
            causes.append(m.invalid_typed("spec.selector", LABEL_SELECTOR_GO, new_sel, "field is immutable"))
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
        """`ValidateDeploymentSpec`."""
        spec = obj.get("spec") or {}
        causes = _non_negative(spec.get("replicas"), "spec.replicas")
        causes += validate_replicated_spec(spec, "deployment")
        causes += _validate_deployment_strategy(spec.get("strategy") or {})
        causes += _non_negative(spec.get("minReadySeconds"), "spec.minReadySeconds")
        causes += _non_negative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit")
        pds = spec.get("progressDeadlineSeconds")
        if isinstance(pds, int):
            causes += _non_negative(pds, "spec.progressDeadlineSeconds")
            if pds <= int(spec.get("minReadySeconds") or 0):
                causes.append(m.invalid_cause("spec.progressDeadlineSeconds", pds,
                                              "must be greater than minReadySeconds"))
        return causes

    def validate_status(self, info: ServedResource, obj: Obj) -> list[Cause]:
        """`ValidateDeploymentStatus`."""
        status = obj.get("status") or {}
        return validate_replica_status(
            status, ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
                     "unavailableReplicas", "collisionCount"),
            ("updatedReplicas", "readyReplicas", "availableReplicas"), check_available=True)


def validate_replica_status(status: Any, fields: tuple[str, ...], bounded: tuple[str, ...],
                            check_available: bool = False) -> list[Cause]:
    """The shape shared by `ValidateDeploymentStatus` and its siblings: counts are non-negative,
    the `bounded` ones cannot exceed `status.replicas` (and, `check_available`, the available ones
    not the ready ones)."""
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
    available, ready = status.get("availableReplicas") or 0, status.get("readyReplicas") or 0
    if check_available and isinstance(available, int) and isinstance(ready, int) and available > ready:
        causes.append(m.invalid_cause("status.availableReplicas", available, "cannot be greater than readyReplicas"))
    return causes


DEPLOYMENT_STRATEGY_GO = "k8s.io/kubernetes/pkg/apis/apps.DeploymentStrategy"


def _validate_deployment_strategy(strategy: Obj) -> list[Cause]:
    """`ValidateDeploymentStrategy`."""
    stype = strategy.get("type")
    ru = strategy.get("rollingUpdate")
    if stype == "Recreate":
        if ru is not None:
            return [m.forbidden_cause("spec.strategy.rollingUpdate",
                                      "may not be specified when strategy `type` is 'Recreate'")]
        return []
    if stype != "RollingUpdate":
        return [m.not_supported_typed("spec.strategy", DEPLOYMENT_STRATEGY_GO, strategy, ("Recreate", "RollingUpdate"))]
    if not isinstance(ru, dict):
        return [m.required_cause("spec.strategy.rollingUpdate", "this should be defaulted and never be nil")]
    fld = "spec.strategy.rollingUpdate"
    unavailable, surge = ru.get("maxUnavailable") or 0, ru.get("maxSurge") or 0
    causes = m.validate_positive_int_or_percent(unavailable, f"{fld}.maxUnavailable")
    causes += m.validate_positive_int_or_percent(surge, f"{fld}.maxSurge")
    if m.int_or_percent_value(unavailable) == 0 and m.int_or_percent_value(surge) == 0:
        causes.append(m.invalid_typed(f"{fld}.maxUnavailable", m.INTSTR, unavailable,
                                      "may not be 0 when `maxSurge` is 0"))
    return causes + m.not_more_than_100_percent(unavailable, f"{fld}.maxUnavailable")


# -- StatefulSet ----------------------------------------------------------------------------------

STATEFUL_SET_MUTABLE = ("replicas", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                        "minReadySeconds")


STATEFUL_SET_STRATEGY_GO = "k8s.io/kubernetes/pkg/apis/apps.StatefulSetUpdateStrategy"
STATEFUL_SET_ROLLING_GO = "*k8s.io/kubernetes/pkg/apis/apps.RollingUpdateStatefulSetStrategy"
RETENTION_POLICIES = ("Retain", "Delete")


class StatefulSetStrategy(ScalableStrategy):
    """1.24's feature gates: `StatefulSetMinReadySeconds` on, `StatefulSetAutoDeletePVC` and
    `MaxUnavailableStatefulSet` off (their fields dropped unless the stored object uses them)."""

    schema = top_level("StatefulSet", spec=STATEFUL_SET_SPEC, status=ANY)
    kind_word = "statefulset"

    def decode(self, info: ServedResource, obj: Obj) -> None:
        super().decode(info, obj)
        # Convert_apps_StatefulSetSpec_To_v1_StatefulSetSpec: claim templates are written with their type
        for pvc in (obj.get("spec") or {}).get("volumeClaimTemplates") or []:
            if isinstance(pvc, dict):
                pvc["apiVersion"], pvc["kind"] = "v1", "PersistentVolumeClaim"

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("podManagementPolicy", "OrderedReady")
        us = spec.setdefault("updateStrategy", {})
        if not us.get("type"):
            us["type"] = "RollingUpdate"
            us.setdefault("rollingUpdate", {})
        if us["type"] == "RollingUpdate" and isinstance(us.get("rollingUpdate"), dict):
            us["rollingUpdate"].setdefault("partition", 0)
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("template", {})
        podspec.default_pod_template(spec["template"])
        for pvc in spec.get("volumeClaimTemplates") or []:
            if isinstance(pvc, dict):
                pvc_spec = pvc.setdefault("spec", {})
                if isinstance(pvc_spec, dict):
                    pvc_spec.setdefault("volumeMode", "Filesystem")
                status = pvc.get("status")
                if not isinstance(status, dict):
                    status = pvc["status"] = {}
                if not status.get("phase"):
                    status["phase"] = "Pending"

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        return {"replicas": 0, "availableReplicas": 0}

    def prepare_create(self, info: ServedResource, obj: Obj) -> None:
        self._drop_disabled(obj, None)

    def prepare_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        self._drop_disabled(new, old)

    @staticmethod
    def _drop_disabled(new: Obj, old: Obj | None) -> None:
        """`dropStatefulSetDisabledFields`."""
        spec, old_spec = new.get("spec") or {}, (old or {}).get("spec") or {}
        if old_spec.get("persistentVolumeClaimRetentionPolicy") is None:
            spec.pop("persistentVolumeClaimRetentionPolicy", None)
        ru = (spec.get("updateStrategy") or {}).get("rollingUpdate")
        old_ru = (old_spec.get("updateStrategy") or {}).get("rollingUpdate")
        if isinstance(ru, dict) and not (isinstance(old_ru, dict) and old_ru.get("maxUnavailable") is not None):
            ru.pop("maxUnavailable", None)

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        """`ValidateStatefulSetSpec`: the pod template is not validated beyond its metadata."""
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        pmp = spec.get("podManagementPolicy") or ""
        if not pmp:
            causes.append(m.required_cause("spec.podManagementPolicy"))
        elif pmp not in ("OrderedReady", "Parallel"):
            causes.append(m.invalid_cause("spec.podManagementPolicy", pmp, "must be 'OrderedReady' or 'Parallel'"))
        strategy = spec.get("updateStrategy") or {}
        ustype, ru = strategy.get("type") or "", strategy.get("rollingUpdate")
        if not ustype:
            causes.append(m.required_cause("spec.updateStrategy"))
        elif ustype == "OnDelete":
            if ru is not None:
                causes.append(m.invalid_typed("spec.updateStrategy.rollingUpdate", STATEFUL_SET_ROLLING_GO, ru,
                                              "only allowed for updateStrategy 'RollingUpdate'"))
        elif ustype == "RollingUpdate":
            if isinstance(ru, dict):
                causes += _validate_rolling_update_stateful_set(ru)
        else:
            causes.append(m.invalid_typed("spec.updateStrategy", STATEFUL_SET_STRATEGY_GO, strategy,
                                          "must be 'RollingUpdate' or 'OnDelete'"))
        causes += _validate_retention_policy(spec.get("persistentVolumeClaimRetentionPolicy"))
        causes += _non_negative(spec.get("replicas"), "spec.replicas")
        causes += _non_negative(spec.get("minReadySeconds"), "spec.minReadySeconds")
        causes += required_selector(spec, "statefulset")
        selector = spec.get("selector")
        template = spec.get("template") or {}
        tmeta = template.get("metadata") or {}
        labels = tmeta.get("labels") or {}
        if not m.label_selector_parses(selector):
            causes.append(m.invalid_typed("spec.selector", LABEL_SELECTOR_GO, selector, ""))
        else:
            # ValidatePodTemplateSpecForStatefulSet
            if selector is not None and not selector_empty(selector) and not selector_matches(selector, labels):
                causes.append(selector_mismatch(spec))
            causes += m.validate_labels(labels, "spec.template.labels")
            causes += m.validate_annotations(tmeta.get("annotations"), "spec.template.annotations")
        return causes + restarting_always(template, "StatefulSet")

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        """`ValidateStatefulSet` then `ValidateStatefulSetUpdate`."""
        causes = self.validate(info, new) + self.validate_spec(info, new)
        causes += m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        ns, os_ = new.get("spec") or {}, old.get("spec") or {}
        if not equal(without(ns, *STATEFUL_SET_MUTABLE), without(os_, *STATEFUL_SET_MUTABLE), TYPED):
            causes.append(m.forbidden_cause(
                "spec", "updates to statefulset spec for fields other than 'replicas', 'template', "
                "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"))
        causes += _non_negative(ns.get("replicas"), "spec.replicas")
        causes += _non_negative(ns.get("minReadySeconds"), "spec.minReadySeconds")
        return causes + _validate_retention_policy(ns.get("persistentVolumeClaimRetentionPolicy"))

    def validate_status(self, info: ServedResource, obj: Obj) -> list[Cause]:
        """`ValidateStatefulSetStatus`."""
        status = obj.get("status") or {}
        causes: list[Cause] = []
        for key in ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas",
                    "observedGeneration", "collisionCount"):
            causes += _non_negative(status.get(key), f"status.{key}")
        replicas = int(status.get("replicas") or 0)
        for key in ("readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"):
            value = int(status.get(key) or 0)
            if value > replicas:
                causes.append(m.invalid_cause(f"status.{key}", value, "cannot be greater than status.replicas"))
        available, ready = int(status.get("availableReplicas") or 0), int(status.get("readyReplicas") or 0)
        if available > ready:
            causes.append(m.invalid_cause("status.availableReplicas", available, "cannot be greater than readyReplicas"))
        return causes


def _validate_rolling_update_stateful_set(ru: Obj) -> list[Cause]:
    """`validateRollingUpdateStatefulSet`."""
    fld = "spec.updateStrategy.rollingUpdate"
    causes = _non_negative(ru.get("partition"), f"{fld}.partition")
    value = ru.get("maxUnavailable")
    if value is not None:
        causes += m.validate_positive_int_or_percent(value, f"{fld}.maxUnavailable")
        if m.int_or_percent_value(value) == 0:
            causes.append(m.invalid_typed(f"{fld}.maxUnavailable", m.INTSTR, value, "cannot be 0"))
        causes += m.not_more_than_100_percent(value, f"{fld}.maxUnavailable")
    return causes


def _validate_retention_policy(policy: Any) -> list[Cause]:
    """`ValidatePersistentVolumeClaimRetentionPolicy`."""
    if not isinstance(policy, dict):
        return []
    fld = "spec.persistentVolumeClaimRetentionPolicy"
    return [m.not_supported_cause(f"{fld}.{key}", policy.get(key) or "", RETENTION_POLICIES)
            for key in ("whenDeleted", "whenScaled") if policy.get(key) not in RETENTION_POLICIES]


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
        return causes + validate_replicated_spec(spec, "deployment")

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        """`ValidateReplicaSet` then `ValidateReplicaSetUpdate` (the spec twice), then the selector."""
        return self.validate(info, new) + self.validate_spec(info, new) + super().validate_update_causes(info, new, old)

    def validate_status(self, info: ServedResource, obj: Obj) -> list[Cause]:
        """`ValidateReplicaSetStatus`."""
        return validate_replica_status(
            obj.get("status"), ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
                                "observedGeneration"),
            ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"), check_available=True)


# -- DaemonSet ------------------------------------------------------------------------------------

TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


def _template_generation(obj: Obj) -> int:
    try:
        return int(((obj.get("metadata") or {}).get("annotations") or {}).get(TEMPLATE_GENERATION) or 0)
    except ValueError:
        return 0


def _set_template_generation(obj: Obj, value: int) -> None:
    obj.setdefault("metadata", {}).setdefault("annotations", {})[TEMPLATE_GENERATION] = str(value)


class DaemonSetStrategy(WorkloadStrategy):
    """The internal DaemonSet has `spec.templateGeneration`, which apps/v1 carries as the annotation
    `deprecated.daemonset.template.generation`: decoding reads it (0 when absent), encoding always
    writes it, and the strategy keeps it (1 on create, +1 on each template change)."""

    schema = top_level("DaemonSet", spec=DAEMON_SET_SPEC, status=ANY)
    kind_word = "daemonset"

    def decode(self, info: ServedResource, obj: Obj) -> None:
        super().decode(info, obj)
        _set_template_generation(obj, _template_generation(obj))

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

    def prepare_create(self, info: ServedResource, obj: Obj) -> None:
        _set_template_generation(obj, max(1, _template_generation(obj)))

    def prepare_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        generation = _template_generation(old)
        template_changed = not equal((new.get("spec") or {}).get("template"), (old.get("spec") or {}).get("template"),
                                     TYPED)
        _set_template_generation(new, generation + 1 if template_changed else generation)

    def prepare_for_status_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        super().prepare_for_status_update(info, new, old)
        _set_template_generation(new, _template_generation(old))

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        """`ValidateDaemonSetSpec`."""
        spec = obj.get("spec") or {}
        selector = spec.get("selector")
        template = spec.get("template") or {}
        labels = (template.get("metadata") or {}).get("labels") or {}
        causes = m.validate_label_selector(selector, "spec.selector")
        # LabelSelectorAsSelector: nil selects nothing, an empty one everything
        if m.label_selector_parses(selector) and (selector is None or (
                not selector_empty(selector) and not selector_matches(selector, labels))):
            causes.append(selector_mismatch(spec))
        if isinstance(selector, dict) and selector_empty(selector):
            causes.append(m.invalid_typed("spec.selector", LABEL_SELECTOR_GO, selector,
                                          "empty selector is invalid for daemonset"))
        causes += podspec.validate_pod_template(template, "spec.template")
        causes += restarting_always(template, "DaemonSet")
        causes += _non_negative(spec.get("minReadySeconds"), "spec.minReadySeconds")
        causes += _validate_daemon_set_update_strategy(spec.get("updateStrategy") or {})
        return causes + _non_negative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit")

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        """The strategy's `ValidateUpdate`: `ValidateDaemonSet`, then `ValidateDaemonSetUpdate` (which
        validates the spec once more), then the selector's immutability."""
        nm, om = new.get("metadata") or {}, old.get("metadata") or {}
        causes = self.validate(info, new) + self.validate_spec(info, new)
        causes += m.validate_object_meta_update(nm, om) + self.validate_spec(info, new)
        new_sel, old_sel = (new.get("spec") or {}).get("selector"), (old.get("spec") or {}).get("selector")
        if not equal(new_sel, old_sel, TYPED):
            causes.append(m.invalid_typed("spec.selector", LABEL_SELECTOR_GO, new_sel, "field is immutable"))
        return causes

    def validate_status(self, info: ServedResource, obj: Obj) -> list[Cause]:
        """`validateDaemonSetStatus` (the collision count's decrement is checked with the old object)."""
        status = obj.get("status") or {}
        causes: list[Cause] = []
        for key in ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady",
                    "observedGeneration", "updatedNumberScheduled", "numberAvailable", "numberUnavailable",
                    "collisionCount"):
            causes += _non_negative(status.get(key), f"status.{key}")
        return causes


DAEMON_SET_STRATEGY_GO = "k8s.io/kubernetes/pkg/apis/apps.DaemonSetUpdateStrategy"


def _validate_daemon_set_update_strategy(strategy: Obj) -> list[Cause]:
    """`ValidateDaemonSetUpdateStrategy` with `DaemonSetUpdateSurge` on (beta in 1.24)."""
    stype = strategy.get("type")
    if stype == "OnDelete":
        return []
    if stype != "RollingUpdate":
        return [m.not_supported_typed("spec.updateStrategy", DAEMON_SET_STRATEGY_GO, strategy,
                                      ("RollingUpdate", "OnDelete"))]
    ru = strategy.get("rollingUpdate")
    fld = "spec.updateStrategy.rollingUpdate"
    if not isinstance(ru, dict):
        return [m.required_cause(fld)]
    unavailable, surge = ru.get("maxUnavailable") or 0, ru.get("maxSurge") or 0
    causes = m.validate_positive_int_or_percent(unavailable, f"{fld}.maxUnavailable")
    causes += m.validate_positive_int_or_percent(surge, f"{fld}.maxSurge")
    causes += m.not_more_than_100_percent(unavailable, f"{fld}.maxUnavailable")
    causes += m.not_more_than_100_percent(surge, f"{fld}.maxSurge")
    has_unavailable, has_surge = m.int_or_percent_value(unavailable) != 0, m.int_or_percent_value(surge) != 0
    if has_unavailable and has_surge:
        causes.append(m.invalid_typed(f"{fld}.maxSurge", m.INTSTR, surge, "may not be set when maxUnavailable is non-zero"))
    elif not has_unavailable and not has_surge:
        causes.append(m.required_cause(f"{fld}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return causes


def copy_status(obj: Obj) -> Any:
    return copy.deepcopy(obj.get("status"))
