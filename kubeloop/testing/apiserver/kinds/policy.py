"""policy: PodDisruptionBudget (policy/v1, and its policy/v1beta1 view) and PodSecurityPolicy
(policy/v1beta1, cluster-scoped).

A PodDisruptionBudget is validated as 1.24's `ValidatePodDisruptionBudget` does (ObjectMeta is left
to the generic checks every kind gets); its status is the disruption controller's
(`disruption.py`), decremented by evictions. In policy/v1beta1 an empty PDB selector matches no
pod, where policy/v1's matches every pod: kube-apiserver stores a v1beta1 `{}` as a selector that
cannot match, and shows that one as `{}` again in v1beta1.

A PodSecurityPolicy is stored and validated; no admission enforces it (1.24's PodSecurityPolicy
admission plugin is not in the default chain).
"""

from __future__ import annotations

import copy
from typing import Any

from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from .base import KindStrategy
from .extra import GenericStrategy

RUN_AS_USER = ("MustRunAs", "MustRunAsNonRoot", "RunAsAny")
SE_LINUX = ("MustRunAs", "RunAsAny")
GROUP_RULES = ("MayRunAs", "MustRunAs", "RunAsAny")
#: what a policy/v1beta1 `selector: {}` is stored as (`policy.V1beta1MatchNoneSelector`)
MATCH_NONE = {"matchExpressions": [{"key": "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match",
                                    "operator": "Exists"}]}
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


def pdb_v1beta1(base: PodDisruptionBudgetStrategy) -> PodDisruptionBudgetStrategy:
    """The policy/v1beta1 PodDisruptionBudget strategy: `base`'s rules, the selector converted."""

    class PodDisruptionBudgetV1beta1(type(base)):  # type: ignore[misc]
        def to_storage(self, info: ServedResource, obj: Obj) -> Obj:
            spec = obj.get("spec")
            if isinstance(spec, dict) and spec.get("selector") == {}:
                obj = dict(obj)
                obj["spec"] = dict(spec, selector=copy.deepcopy(MATCH_NONE))
            return super().to_storage(info, obj)

        def from_storage(self, info: ServedResource, stored: Obj) -> Obj:
            stored = super().from_storage(info, stored)
            spec = stored.get("spec")
            if isinstance(spec, dict) and spec.get("selector") == MATCH_NONE:
                stored = dict(stored)
                stored["spec"] = dict(spec, selector={})
            return stored

    strategy = copy.copy(base)
    strategy.__class__ = PodDisruptionBudgetV1beta1
    return strategy


class PodSecurityPolicyStrategy(GenericStrategy):
    #: the validation errors name the kind's old home (`PodSecurityPolicy.extensions`)
    error_group = "extensions"

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("allowPrivilegeEscalation") is None:
            spec["allowPrivilegeEscalation"] = True
        for key in ("privileged", "hostNetwork", "hostPID", "hostIPC", "readOnlyRootFilesystem"):
            if spec.get(key) is False:
                del spec[key]  # Go's omitempty

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        for key, valid in (("runAsUser", RUN_AS_USER), ("seLinux", SE_LINUX), ("supplementalGroups", GROUP_RULES),
                           ("fsGroup", GROUP_RULES)):
            rule = (spec.get(key) or {}).get("rule") or ""
            if rule not in valid:
                causes.append(m.not_supported_cause(f"spec.{key}.rule", rule, valid))
        return causes
